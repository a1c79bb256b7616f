"""The accounts' key-value shell on every broker: in memory, SQLite, Redis, Redis Cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from boulanger.broker import Broker, open_broker
from boulanger.broker.accounts import AccountStore
from boulanger.race import accounts as a

from .conftest import started


async def test_every_operation_on_every_broker(broker: Broker) -> None:
    kv = broker.key_value()
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
        await kv.zset("bk:t:{z}", member, score, 1)
    await kv.zset("bk:t:{z}", "c", 7.0, 2)
    assert await kv.ztop("bk:t:{z}", 2) == [("b", 9.0), ("c", 7.0)]
    await kv.zrem("bk:t:{z}", "b")
    assert [m for m, _ in await kv.ztop("bk:t:{z}", 5)] == ["c", "a"]


async def test_an_older_score_arriving_last_does_not_replace_a_newer(broker: Broker) -> None:
    """Two races end at once: the one that wrote the rating first may reach the
    top list last; the list keeps the newer rating."""
    kv = broker.key_value()
    await kv.zset("bk:t:{v}", "ann", 120.0, 2)
    await kv.zset("bk:t:{v}", "ann", 110.0, 1)  # late, older
    await kv.zset("bk:t:{v}", "ann", 120.0, 2)  # a resend after a lost answer
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 120.0)]
    await kv.zset("bk:t:{v}", "ann", 130.0, 3)
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 130.0)]
    await kv.zrem("bk:t:{v}", "ann")  # a deleted account starts again from nothing
    await kv.zset("bk:t:{v}", "ann", 100.0, 1)
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 100.0)]


async def test_every_user_of_a_broker_sees_the_same_store(broker: Broker) -> None:
    """The web layer and a test (or two apps on one broker) open it apart."""
    await broker.key_value().set("bk:t:{shared}", "1")
    assert await broker.key_value().get("bk:t:{shared}") == "1"


async def test_expiring_keys_read_as_absent(broker: Broker) -> None:
    kv = broker.key_value()
    await kv.set("bk:t:{e}", "x", ttl_s=0.001)
    await kv.set("bk:t:{k}", "y", ttl_s=60)
    await asyncio.sleep(0.05)
    assert await kv.get("bk:t:{e}") is None
    assert await kv.set_nx("bk:t:{e}", "again")
    assert await kv.get("bk:t:{k}") == "y"


async def test_sqlite_keeps_accounts_across_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    async with started(open_broker(url)) as first:
        store = AccountStore(first.key_value())
        assert await store.claim_name("k", "id1")
        await store.save({"id": "id1", "name": "Ann", "passkeys": []})
        await store.open_session("s", "id1", 3600)
        await store.add_result("id1", {"race_id": "r"}, 10)
        await store.set_rating("id1", 4, {"mu": 26.0, "sigma": 8.0, "races": 1}, 100)
    async with started(open_broker(url)) as second:
        store = AccountStore(second.key_value())
        assert (await store.account_by_name("k")) == {"id": "id1", "name": "Ann", "passkeys": []}
        assert await store.session("s") == "id1"
        assert await store.history("id1", 5) == [{"race_id": "r"}]
        assert await store.top(4, 5) == [("id1", 100.0)]


async def test_update_is_atomic_on_every_broker(broker: Broker) -> None:
    kv = broker.key_value()
    if type(broker).__name__ == "RedisClusterBroker":
        # Twelve scripts at once through one RedisCluster client sometimes break
        # its connection setup (redis-py 8.1: "'NoneType' object has no attribute
        # 'writelines'"); the cluster is held to two at once, in the test below.
        pytest.skip("redis-py's cluster client and concurrent EVAL")

    def add_one(found: str | None) -> str:
        return str(int(found or "0") + 1)

    await asyncio.gather(*(kv.update("bk:t:{u}", add_one) for _ in range(12)))
    assert await kv.get("bk:t:{u}") == "12"


async def test_two_races_ending_at_once_both_count_for_one_account(broker: Broker) -> None:
    """Each race reads the account's rating and writes it back: both must count."""
    store = AccountStore(broker.key_value())
    opponents = [a.Rating(), a.Rating()]

    def won_against(opponent: a.Rating) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
        def change(found: dict[str, Any] | None) -> dict[str, Any]:
            return a.update_ratings([a.Rating.from_dict(found), opponent], [1, 2])[0].to_dict()

        return change

    await asyncio.gather(
        *(
            store.update_rating("ann", 4, won_against(o), lambda r: a.Rating.from_dict(r).shown)
            for o in opponents
        )
    )
    rating = a.Rating.from_dict(await store.rating("ann", 4))
    assert rating.races == 2
    one = a.update_ratings([a.Rating(), a.Rating()], [1, 2])[0]
    assert rating.mu > one.mu  # two wins lift it above one
    assert await store.top(4, 5) == [("ann", float(rating.shown))]
