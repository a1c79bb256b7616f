"""The accounts' key-value shell on every broker: in memory, SQLite, Redis, Redis Cluster."""

from __future__ import annotations

import asyncio
from pathlib import Path

from boulanger.broker import Broker, open_broker
from boulanger.broker.accounts import AccountStore, open_key_value

from .conftest import started


async def test_every_operation_on_every_broker(broker: Broker) -> None:
    kv = open_key_value(broker)
    assert await kv.get("bk:t:{a}") is None
    assert await kv.set_nx("bk:t:{a}", "1")
    assert not await kv.set_nx("bk:t:{a}", "2")
    assert await kv.get("bk:t:{a}") == "1"
    await kv.set("bk:t:{a}", "3")
    assert await kv.get("bk:t:{a}") == "3"
    await kv.delete("bk:t:{a}")
    assert await kv.get("bk:t:{a}") is None
    assert [await kv.incr("bk:t:{n}", 60) for _ in range(3)] == [1, 2, 3]
    for i in range(5):
        await kv.push("bk:t:{l}", str(i), 3)
    assert await kv.items("bk:t:{l}", 10) == ["4", "3", "2"]
    assert await kv.items("bk:t:{l}", 2) == ["4", "3"]
    for member, score in (("a", 5.0), ("b", 9.0), ("c", 1.0)):
        await kv.zset("bk:t:{z}", member, score)
    await kv.zset("bk:t:{z}", "c", 7.0)
    assert await kv.ztop("bk:t:{z}", 2) == [("b", 9.0), ("c", 7.0)]
    await kv.zrem("bk:t:{z}", "b")
    assert [m for m, _ in await kv.ztop("bk:t:{z}", 5)] == ["c", "a"]


async def test_every_user_of_a_broker_sees_the_same_store(broker: Broker) -> None:
    """The web layer and a test (or two apps on one broker) open it apart."""
    await open_key_value(broker).set("bk:t:{shared}", "1")
    assert await open_key_value(broker).get("bk:t:{shared}") == "1"


async def test_expiring_keys_read_as_absent(broker: Broker) -> None:
    kv = open_key_value(broker)
    await kv.set("bk:t:{e}", "x", ttl_s=0.001)
    await kv.set("bk:t:{k}", "y", ttl_s=60)
    await asyncio.sleep(0.05)
    assert await kv.get("bk:t:{e}") is None
    assert await kv.set_nx("bk:t:{e}", "again")
    assert await kv.get("bk:t:{k}") == "y"


async def test_sqlite_keeps_accounts_across_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    async with started(open_broker(url)) as first:
        store = AccountStore(open_key_value(first))
        assert await store.claim_name("k", "id1")
        await store.save({"id": "id1", "name": "Ann", "passkeys": []})
        await store.open_session("s", "id1", 3600)
        await store.add_result("id1", {"race_id": "r"}, 10)
        await store.set_rating("id1", 4, {"mu": 26.0, "sigma": 8.0, "races": 1}, 100)
    async with started(open_broker(url)) as second:
        store = AccountStore(open_key_value(second))
        assert (await store.account_by_name("k")) == {"id": "id1", "name": "Ann", "passkeys": []}
        assert await store.session("s") == "id1"
        assert await store.history("id1", 5) == [{"race_id": "r"}]
        assert await store.top(4, 5) == [("id1", 100.0)]
