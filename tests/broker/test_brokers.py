"""Both brokers keep ordered race logs and fan out; Redis survives a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from boulanger.broker import Broker, BrokerUnavailable, open_broker, race_channel
from support.servers import RedisProcess


class Collector:
    def __init__(self) -> None:
        self.messages: list[str] = []
        self.resyncs = 0

    def on_message(self, data: str) -> None:
        self.messages.append(data)

    def on_resync(self) -> None:
        self.resyncs += 1


async def _eventually(check, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


@pytest.fixture(params=["memory", "redis"])
async def broker(request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    url = "memory://" if request.param == "memory" else request.getfixturevalue("redis_proc").url
    opened = open_broker(url)
    await opened.start()
    yield opened
    await opened.close()


async def test_append_is_conditional_and_ordered(broker: Broker) -> None:
    race_id = f"t-{id(broker)}"
    await broker.create_race(race_id, {"code": "BK1-C4-AAAAAAB"})
    assert await broker.race_meta(race_id) == {"code": "BK1-C4-AAAAAAB"}
    assert await broker.race_meta("missing") is None
    assert await broker.append(race_id, {"seq": 1, "kind": "a"})
    assert not await broker.append(race_id, {"seq": 1, "kind": "b"})  # someone was first
    assert not await broker.append(race_id, {"seq": 3, "kind": "c"})  # no gaps
    assert await broker.append(race_id, {"seq": 2, "kind": "d"})
    assert [e["kind"] for e in await broker.read(race_id, 0)] == ["a", "d"]
    assert [e["seq"] for e in await broker.read(race_id, 1)] == [2]


async def test_appends_are_published_in_order(broker: Broker) -> None:
    race_id = f"p-{id(broker)}"
    listener = Collector()
    await broker.subscribe(race_channel(race_id), listener)
    if broker.kind == "redis":
        await asyncio.wait_for(broker.connected.wait(), 5)  # type: ignore[attr-defined]
    for seq in range(1, 51):
        assert await broker.append(race_id, {"seq": seq})
    await _eventually(lambda: len(listener.messages) == 50)
    assert [int(m.split(":")[1].rstrip("}")) for m in listener.messages] == list(range(1, 51))
    await broker.unsubscribe(race_channel(race_id), listener)
    await broker.publish(race_channel(race_id), "after")
    await asyncio.sleep(0.2)
    assert "after" not in listener.messages


async def test_redis_broker_resubscribes_after_a_restart() -> None:
    redis = RedisProcess()
    redis.start()
    broker = open_broker(redis.url)
    await broker.start()
    try:
        listener = Collector()
        await broker.subscribe("bk:test", listener)
        await asyncio.wait_for(broker.connected.wait(), 5)  # type: ignore[attr-defined]
        await broker.create_race("r", {"x": 1})
        assert await broker.append("r", {"seq": 1})
        redis.restart()
        # While it is down (or just back), calls fail with a clear error or succeed.
        await _eventually(lambda: listener.resyncs >= 2, timeout=15)
        await broker.publish("bk:test", "hello")
        await _eventually(lambda: "hello" in listener.messages)
        assert await broker.race_meta("r") == {"x": 1}  # the AOF kept it
        assert [e["seq"] for e in await broker.read("r", 0)] == [1]
        redis.stop()
        with pytest.raises(BrokerUnavailable):
            await broker.append("r", {"seq": 2})
        assert not await broker.ping()
    finally:
        await broker.close()
        redis.cleanup()


def test_unknown_broker_urls_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown broker URL"):
        open_broker("kafka://nope")
