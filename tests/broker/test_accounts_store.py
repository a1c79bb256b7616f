"""The accounts' key-value shell on every broker: in memory, SQLite, Redis, Redis Cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from boulanger.broker import BrokerUnavailable, Store, open_store
from boulanger.broker.accounts import AccountStore
from boulanger.broker.redis.kv import _COMPARE_AND_SET, RedisKeyValue, writer_mark
from boulanger.race import accounts as a

from .conftest import started


async def test_every_operation_on_every_broker(backend: Store) -> None:
    kv = backend.kv
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


async def test_an_older_score_arriving_last_does_not_replace_a_newer(backend: Store) -> None:
    """Two races end at once: the one that wrote the rating first may reach the
    top list last; the list keeps the newer rating."""
    kv = backend.kv
    await kv.zset("bk:t:{v}", "ann", 120.0, 2)
    await kv.zset("bk:t:{v}", "ann", 110.0, 1)  # late, older
    await kv.zset("bk:t:{v}", "ann", 120.0, 2)  # a resend after a lost answer
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 120.0)]
    await kv.zset("bk:t:{v}", "ann", 130.0, 3)
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 130.0)]
    await kv.zrem("bk:t:{v}", "ann")  # a deleted account starts again from nothing
    await kv.zset("bk:t:{v}", "ann", 100.0, 1)
    assert await kv.ztop("bk:t:{v}", 5) == [("ann", 100.0)]


async def test_every_user_of_a_broker_sees_the_same_store(backend: Store) -> None:
    """The web layer and a test (or two apps on one broker) open it apart."""
    await backend.kv.set("bk:t:{shared}", "1")
    assert await backend.kv.get("bk:t:{shared}") == "1"


async def test_expiring_keys_read_as_absent(backend: Store) -> None:
    kv = backend.kv
    await kv.set("bk:t:{e}", "x", ttl_s=0.001)
    await kv.set("bk:t:{k}", "y", ttl_s=60)
    await asyncio.sleep(0.05)
    assert await kv.get("bk:t:{e}") is None
    assert await kv.set_nx("bk:t:{e}", "again")
    assert await kv.get("bk:t:{k}") == "y"


async def test_sqlite_keeps_accounts_across_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    async with started(open_store(url)) as first:
        store = AccountStore(first.kv)
        assert await store.claim_name("k", "id1")
        await store.save(ANN)
        await store.open_session("s", "id1", 3600)
        await store.add_result("id1", RESULT, 10)
        rating = a.Rating(26.0, 8.0, 1)
        await store.set_rating("id1", 4, rating)
    async with started(open_store(url)) as second:
        store = AccountStore(second.kv)
        assert (await store.account_by_name("k")) == ANN
        assert await store.session("s") == "id1"
        assert await store.history("id1", 5) == [RESULT]
        assert await store.rating("id1", 4) == rating
        assert await store.top(4, 5) == [("id1", float(rating.shown))]


ANN = a.Account("id1", "Ann", None, [a.Passkey("c1", "key", 3)], "daily-key", "secret", 1)
RESULT = a.RaceResult("r", "p1", 5, 4, 2, 1, True, 60_000)


def add_one(found: str | None) -> str:
    return str(int(found or "0") + 1)


async def test_update_is_atomic_on_every_broker(backend: Store) -> None:
    kv = backend.kv
    await asyncio.gather(*(kv.update("bk:t:{u}", add_one) for _ in range(12)))
    assert await kv.get("bk:t:{u}") == "12"


class LosesFirstAnswer:
    """A Redis client whose first EVAL is done but its answer lost, after
    another writer came in between: what a dropped connection does."""

    def __init__(self, redis: Any, meanwhile: Callable[[], Awaitable[Any]]) -> None:
        self.redis = redis
        self.meanwhile = meanwhile
        self.lost = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.redis, name)

    async def eval(self, *args: Any) -> Any:
        answer = await self.redis.eval(*args)
        if not self.lost:
            self.lost = True
            await self.meanwhile()
            raise RedisConnectionError("the answer was lost")
        return answer


@pytest.mark.parametrize("backend", ["redis", "cluster"], indirect=True)
async def test_an_update_resent_after_another_writer_counts_once(backend: Store) -> None:
    """A's write is done but its answer lost; B writes; A resends. A must see
    its own write done, not apply its change again (that counted 13 of 12)."""
    kv = backend.kv
    assert isinstance(kv, RedisKeyValue)
    lossy = RedisKeyValue(LosesFirstAnswer(kv.redis, lambda: kv.update("bk:t:{r}", add_one)))
    assert await lossy.update("bk:t:{r}", add_one) == "1"
    assert await kv.get("bk:t:{r}") == "2"


@pytest.mark.parametrize("backend", ["redis", "cluster"], indirect=True)
async def test_the_compare_and_set_script_knows_its_own_resend(backend: Store) -> None:
    kv = backend.kv
    assert isinstance(kv, RedisKeyValue)
    key = "bk:t:{s}"
    mark = writer_mark(key, "a")

    async def a_writes() -> Any:
        return await kv.redis.eval(_COMPARE_AND_SET, 2, key, mark, "", "1", "0", 60)

    assert await a_writes() == 1
    await kv.update(key, add_one)  # B, in between
    assert await a_writes() == 1  # A's resend: done already
    assert await kv.get(key) == "2"
    other = writer_mark(key, "c")  # a writer that read the old value: refused
    assert await kv.redis.eval(_COMPARE_AND_SET, 2, key, other, "1", "9", "1", 60) == 0
    assert await kv.get(key) == "2"


class HandshakeRace:
    """A Redis client that fails its next command as redis-py's cluster client does
    when a connection is closed under another task's handshake."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.failures = 0

    def __getattr__(self, name: str) -> Any:
        command = getattr(self.redis, name)

        async def once_broken(*args: Any, **kw: Any) -> Any:
            if self.failures:
                self.failures -= 1
                raise AttributeError("'NoneType' object has no attribute 'writelines'")
            return await command(*args, **kw)

        return command if name in ("pipeline", "register_script") else once_broken


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
async def test_a_client_s_broken_handshake_is_resent_or_unavailable(backend: Store) -> None:
    """Commands safe to run twice are resent; the others say the store is unavailable
    (a typed error the routes answer with 503), never a bare AttributeError."""
    kv = backend.kv
    assert isinstance(kv, RedisKeyValue)
    broken = HandshakeRace(kv.redis)
    flaky = RedisKeyValue(broken)
    resent: list[Callable[[], Awaitable[Any]]] = [
        lambda: flaky.set("bk:hs:{h}", "1"),
        lambda: flaky.get("bk:hs:{h}"),
        lambda: flaky.items("bk:hs:{l}", 5),
        lambda: flaky.zset("bk:hs:{z}", "ann", 1.0, 1),
        lambda: flaky.ztop("bk:hs:{z}", 5),
        lambda: flaky.delete("bk:hs:{d}"),
    ]
    for call in resent:
        broken.failures = 1
        await call()
        assert broken.failures == 0
    assert await kv.get("bk:hs:{h}") == "1"
    broken.failures = 1
    with pytest.raises(BrokerUnavailable):
        await flaky.set_nx("bk:hs:{n}", "1")
    assert await kv.get("bk:hs:{n}") is None


def test_a_writer_mark_keeps_its_key_s_hash_tag() -> None:
    assert writer_mark("bk:acct:{x1}:rating:4", "t") == "bk:acct:{x1}:rating:4:writer:t"
    for untagged in ("bk:plain", "bk:{}:empty", "bk:{open"):
        with pytest.raises(ValueError, match="hash tag"):
            writer_mark(untagged, "t")


async def test_two_races_ending_at_once_both_count_for_one_account(backend: Store) -> None:
    """Each race reads the account's rating and writes it back: both must count."""
    store = AccountStore(backend.kv)
    opponents = [a.Rating(), a.Rating()]

    def won_against(opponent: a.Rating) -> Callable[[a.Rating | None], a.Rating]:
        def change(found: a.Rating | None) -> a.Rating:
            return a.update_ratings([found or a.Rating(), opponent], [1, 2])[0]

        return change

    await asyncio.gather(*(store.update_rating("ann", 4, won_against(o)) for o in opponents))
    rating = await store.rating("ann", 4)
    assert rating is not None
    assert rating.races == 2
    one = a.update_ratings([a.Rating(), a.Rating()], [1, 2])[0]
    assert rating.mu > one.mu  # two wins lift it above one
    assert await store.top(4, 5) == [("ann", float(rating.shown))]


async def test_a_rating_history_is_capped_and_goes_with_its_account(backend: Store) -> None:
    """Points of a rating's history per cell count, newest first, the oldest going past
    the cap; deleting the account deletes them."""
    store = AccountStore(backend.kv)
    for i in range(5):
        point: a.RatingPoint = {"at": 1000 + i, "cells": 4, "shown": 100 + i, "race_id": f"r{i}"}
        await store.add_rating_point("id1", 4, point, 3)
    await store.add_rating_point("id1", 2, {"at": 9, "cells": 2, "shown": 7, "race_id": "x"}, 3)
    assert [p["shown"] for p in await store.rating_history("id1", 4, 10)] == [104, 103, 102]
    assert await store.rating_history("id1", 2, 10) == [
        {"at": 9, "cells": 2, "shown": 7, "race_id": "x"}
    ]
    assert await store.rating_history("id1", 1, 10) == []
    await store.save(ANN)
    await store.delete(ANN, [], [4, 2, 1])
    assert await store.rating_history("id1", 4, 10) == []
    assert await store.rating_history("id1", 2, 10) == []
