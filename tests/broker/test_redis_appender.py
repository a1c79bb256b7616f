"""The Redis broker's append connection: pipelining, NOSCRIPT, failures, AUTH, databases."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from boulanger.broker import AppendRefused, BrokerUnavailable, Condition
from boulanger.broker.redis import APPEND_SHA, RedisBroker, race_key
from support.servers import RedisProcess

from .conftest import parsed, started, text


@pytest.fixture
async def broker(own_redis: RedisProcess) -> AsyncIterator[RedisBroker]:
    opened = RedisBroker(own_redis.url, append_timeout=0.5)
    await opened.start()
    yield opened
    await opened.close()


def event(n: int) -> dict[str, object]:
    return {"kind": "progress", "player": f"p{n % 7}", "n": n, "text": "é" * (n % 5)}


async def append_once_back(broker: RedisBroker, race: str, n: int) -> int:
    """Append ``event(n)`` as soon as Redis answers again (within 10 s); its seq."""
    async with asyncio.timeout(10):
        while True:
            try:
                return await broker.append(race, text(event(n)), Condition())
            except BrokerUnavailable:
                await asyncio.sleep(0.05)


async def test_concurrent_appends_get_consecutive_seqs_per_race(broker: RedisBroker) -> None:
    races = [f"app-{n}" for n in range(6)]
    per_race = 150

    async def one(race: str, n: int) -> tuple[str, int, int]:
        await asyncio.sleep(0.001 * (n % 3))
        return race, n, await broker.append(race, text(event(n)), Condition())

    results = await asyncio.gather(*(one(race, n) for n in range(per_race) for race in races))
    for race in races:
        mine = sorted((seq, n) for r, n, seq in results if r == race)
        assert [seq for seq, _ in mine] == list(range(1, per_race + 1))
        logged = parsed(await broker.read(race, 0))
        assert logged == [{"seq": seq, **event(n)} for seq, n in mine]
        assert parsed(await broker.read(race, per_race - 2)) == logged[-2:]


async def test_a_failed_condition_returns_0(broker: RedisBroker) -> None:
    assert await broker.append("cond", text(event(1)), Condition(log_length=0)) == 1
    with pytest.raises(AppendRefused):
        await broker.append("cond", text(event(2)), Condition(log_length=0))
    player = Condition(player_id="ann", player_events=0)
    assert await broker.append("cond", text(event(3)), player) == 2
    with pytest.raises(AppendRefused):  # ann has one event now
        await broker.append("cond", text(event(4)), player)
    assert await broker.append("cond", text(event(5)), Condition(ends_race=True)) == 3
    later = Condition(player_id="bob", player_events=0)
    with pytest.raises(AppendRefused):  # the race is over
        await broker.append("cond", text(event(6)), later)
    assert [e["seq"] for e in parsed(await broker.read("cond", 0))] == [1, 2, 3]


async def test_appends_survive_a_flushed_script_cache(broker: RedisBroker) -> None:
    assert await broker.append("flush", text(event(0)), Condition()) == 1
    await broker.redis.script_flush()
    # Every one of these is answered NOSCRIPT first, then resent with the script.
    seqs = await asyncio.gather(
        *(broker.append("flush", text(event(n)), Condition()) for n in range(50))
    )
    assert sorted(seqs) == list(range(2, 52))
    stats = await broker.redis.info("commandstats")
    assert stats["cmdstat_eval"]["calls"] == 50  # the resends
    assert stats["cmdstat_evalsha"]["failed_calls"] == 50  # NOSCRIPT
    assert await broker.redis.script_exists(APPEND_SHA) == [True]
    assert await broker.append("flush", text(event(0)), Condition()) == 52


async def test_appends_work_again_after_redis_restarts(
    own_redis: RedisProcess, broker: RedisBroker
) -> None:
    assert await broker.append("restart", text(event(0)), Condition()) == 1
    own_redis.restart()  # AOF on: the log survives, the script cache does not
    assert await append_once_back(broker, "restart", 1) == 2
    seqs = await asyncio.gather(
        *(broker.append("restart", text(event(n)), Condition()) for n in range(20))
    )
    assert sorted(seqs) == list(range(3, 23))


async def test_a_refused_connection_fails_promptly_and_is_retried(
    own_redis: RedisProcess, broker: RedisBroker
) -> None:
    assert await broker.append("down", text(event(0)), Condition()) == 1
    own_redis.stop(kill=True)
    for _ in range(20):  # the lost connection, the refused reconnect, then the backoff
        start = time.monotonic()
        with pytest.raises(BrokerUnavailable):
            await broker.append("down", text(event(1)), Condition())
        assert time.monotonic() - start < 4  # refused at once, not after the 5 s timeout
    own_redis.start()
    assert await append_once_back(broker, "down", 1) == 2  # AOF kept seq 1


async def test_a_silent_redis_times_out_the_appends(
    own_redis: RedisProcess, broker: RedisBroker
) -> None:
    assert await broker.append("stopped", text(event(0)), Condition()) == 1
    with own_redis.paused():
        start = time.monotonic()
        results = await asyncio.gather(
            *(broker.append("stopped", text(event(n)), Condition()) for n in range(10)),
            return_exceptions=True,
        )
        elapsed = time.monotonic() - start
        assert all(isinstance(result, BrokerUnavailable) for result in results)
        assert 0.4 < elapsed < 4  # append_timeout=0.5, not the 5 s default
    # The answers that did not come may yet have been applied: the log says.
    seq = await append_once_back(broker, "stopped", 99)
    assert seq == len(parsed(await broker.read("stopped", 0)))


async def test_close_fails_the_awaited_appends(own_redis: RedisProcess) -> None:
    broker = RedisBroker(own_redis.url)
    await broker.start()
    assert await broker.append("closing", text(event(0)), Condition()) == 1
    with own_redis.paused():  # nothing is answered
        waiting = [
            asyncio.ensure_future(broker.append("closing", text(event(n)), Condition()))
            for n in range(5)
        ]
        await asyncio.sleep(0.05)
        await broker.close()
        results = await asyncio.gather(*waiting, return_exceptions=True)
        assert all(isinstance(result, BrokerUnavailable) for result in results)
        with pytest.raises(BrokerUnavailable):
            await broker.append("closing", text(event(9)), Condition())


async def test_too_many_in_flight_is_refused(
    broker: RedisBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boulanger.broker.redis.appender as module

    assert await broker.append("bound", text(event(0)), Condition()) == 1
    monkeypatch.setattr(module, "APPENDS_IN_FLIGHT", 10)
    results = await asyncio.gather(
        *(broker.append("bound", text(event(n)), Condition()) for n in range(15)),
        return_exceptions=True,
    )
    assert sorted(r for r in results if isinstance(r, int)) == list(range(2, 12))
    assert sum(isinstance(r, BrokerUnavailable) for r in results) == 5
    assert await broker.append("bound", text(event(0)), Condition()) == 12


async def test_auth_and_a_database_of_the_url() -> None:
    with RedisProcess("--requirepass", "s3cret") as redis:
        for url, db in (
            (f"redis://:s3cret@127.0.0.1:{redis.port}/0", 0),
            (f"redis://default:s3cret@127.0.0.1:{redis.port}/3", 3),
        ):
            async with started(RedisBroker(url)) as broker:
                assert await broker.append(f"auth{db}", text(event(0)), Condition()) == 1
                assert await broker.append(f"auth{db}", text(event(1)), Condition()) == 2
                assert len(parsed(await broker.read(f"auth{db}", 0))) == 2
            direct = aioredis.Redis(host="127.0.0.1", port=redis.port, password="s3cret", db=db)
            other = aioredis.Redis(host="127.0.0.1", port=redis.port, password="s3cret", db=5 - db)
            try:
                assert await direct.llen(race_key(f"auth{db}", "log")) == 2
                assert await other.llen(race_key(f"auth{db}", "log")) == 0
            finally:
                await direct.aclose()
                await other.aclose()
        async with started(RedisBroker(f"redis://:wrong@127.0.0.1:{redis.port}")) as broker:
            with pytest.raises(BrokerUnavailable):
                await broker.append("nope", text(event(0)), Condition())


async def test_a_unix_socket(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("sock") / "redis.sock"
    with RedisProcess("--unixsocket", str(path)):
        async with started(RedisBroker(f"unix://{path}?db=2")) as broker:
            assert await broker.append("unix", text(event(0)), Condition()) == 1
            assert parsed(await broker.read("unix", 0)) == [{"seq": 1, **event(0)}]


async def test_an_idle_connection_to_a_silent_redis_is_dropped_before_an_append_needs_it(
    own_redis: RedisProcess,
) -> None:
    # A PING 0.2 s after the last reply; an answer later than 1 s ends the connection.
    options = {"health_check_interval": 0.2, "append_timeout": 1.0}
    async with started(RedisBroker(own_redis.url, **options)) as broker:
        assert await broker.append("idle", text(event(0)), Condition()) == 1
        appender = broker._appends.conn
        assert appender is not None
        pings = own_redis.calls("ping")
        async with asyncio.timeout(5):  # idle and healthy: PINGed twice, answered, kept
            while own_redis.calls("ping") < pings + 2:
                await asyncio.sleep(0.05)
        assert broker._appends.conn is appender and not appender.closed
        with own_redis.paused():
            async with asyncio.timeout(5):  # a PING after 0.2 s, unanswered for 1 s
                while not appender.closed:
                    await asyncio.sleep(0.02)
        assert await append_once_back(broker, "idle", 1) == 2
