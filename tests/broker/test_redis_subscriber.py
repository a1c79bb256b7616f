"""The Redis broker's own subscriber connection: restarts, a silent peer, AUTH, unix sockets."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from boulanger.broker import open_broker
from boulanger.broker.redis import RedisBroker
from support.listeners import Collector
from support.servers import RedisProcess

from .conftest import eventually, started, subscribed


@pytest.fixture
async def broker(own_redis: RedisProcess) -> AsyncIterator[RedisBroker]:
    opened = RedisBroker(own_redis.url)
    await opened.start()
    yield opened
    await opened.close()


class Order:
    """Records resyncs and messages in the order they come."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.messages: list[str] = []

    def on_message(self, data: str) -> None:
        self.events.append(data)
        self.messages.append(data)

    def on_resync(self) -> None:
        self.events.append("<resync>")


async def test_a_subscriber_recovers_after_redis_is_killed_and_restarted(
    own_redis: RedisProcess, broker: RedisBroker
) -> None:
    kept, gone, added = Collector(), Collector(), Collector()
    await asyncio.wait_for(broker.connected.wait(), 5)
    await subscribed(broker, "bk:kept", kept)
    await subscribed(broker, "bk:gone", gone)
    assert kept.resyncs == 0  # subscribed after the connect: nothing to catch up on
    own_redis.stop(kill=True)
    await eventually(lambda: not broker.connected.is_set())
    # While Redis is down, (un)subscribing neither raises nor blocks.
    async with asyncio.timeout(1):
        await broker.subscribe("bk:added", added)
        await broker.unsubscribe("bk:gone", gone)
    own_redis.start()
    await asyncio.wait_for(broker.connected.wait(), 10)
    assert kept.resyncs == 1
    assert added.resyncs == 1
    assert gone.resyncs == 0
    for n in range(20):
        await broker.publish("bk:kept", f"k{n}")
        await broker.publish("bk:added", f"a{n}")
        await broker.publish("bk:gone", f"g{n}")
    await eventually(lambda: len(kept.messages) == 20 and len(added.messages) == 20)
    assert kept.messages == [f"k{n}" for n in range(20)]
    assert added.messages == [f"a{n}" for n in range(20)]
    assert gone.messages == []


async def test_a_silent_connection_is_detected_by_the_health_check(
    own_redis: RedisProcess,
) -> None:
    broker = RedisBroker(own_redis.url, health_check_interval=0.3, health_check_timeout=0.3)
    await broker.start()
    listener = Order()
    try:
        await subscribed(broker, "bk:silent", listener)
        # A stopped process keeps its sockets open: only the PING's missing
        # answer tells the connection is dead.
        with own_redis.paused():
            start = time.monotonic()
            await eventually(lambda: not broker.connected.is_set(), timeout=5)
            assert time.monotonic() - start < 4  # the PING's 0.3 s, not the socket's end
        await asyncio.wait_for(broker.connected.wait(), 15)
        await broker.publish("bk:silent", "back")
        await eventually(lambda: "back" in listener.messages)
        assert listener.events[-2:] == ["<resync>", "back"]
    finally:
        await broker.close()


async def test_an_idle_healthy_connection_stays_up(own_redis: RedisProcess) -> None:
    broker = RedisBroker(own_redis.url, health_check_interval=0.1, health_check_timeout=1.0)
    await broker.start()
    listener = Order()
    try:
        await asyncio.wait_for(broker.connected.wait(), 5)
        await subscribed(broker, "bk:idle", listener)
        pings = own_redis.calls("ping")
        await eventually(lambda: own_redis.calls("ping") >= pings + 3)  # each answered
        assert broker.connected.is_set()
        assert "<resync>" not in listener.events
    finally:
        await broker.close()


async def test_messages_in_order_and_a_failing_listener_is_only_logged(
    broker: RedisBroker, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing:
        def on_message(self, data: str) -> None:
            raise RuntimeError("boom")

        def on_resync(self) -> None:
            raise RuntimeError("boom too")

    listener = Order()
    await subscribed(broker, "bk:busy", listener)
    await broker.subscribe("bk:busy", Failing())
    big = "é" * 500_000  # 1 MB of UTF-8, read in many pieces
    texts = [f"m{n}" for n in range(500)]
    with caplog.at_level(logging.ERROR, "boulanger.broker"):
        async with broker.redis.pipeline(transaction=False) as pipe:
            for text in [*texts[:250], big, *texts[250:]]:
                pipe.publish("bk:busy", text)
            await pipe.execute()
        await eventually(lambda: len(listener.messages) == 501)
    assert listener.messages == [*texts[:250], big, *texts[250:]]
    assert "listener failed" in caplog.text
    assert broker.connected.is_set()


async def test_a_subscription_made_while_connecting_is_not_lost(own_redis: RedisProcess) -> None:
    broker = RedisBroker(own_redis.url)
    listeners = [Collector() for _ in range(30)]
    await broker.start()
    try:
        # Spread over the connect: some before the SUBSCRIBE, some after it.
        for n, listener in enumerate(listeners):
            await broker.subscribe(f"bk:early:{n}", listener)
            await asyncio.sleep(0.001)
        await asyncio.wait_for(broker.connected.wait(), 5)

        async def probe() -> bool:
            for n in range(len(listeners)):
                await broker.publish(f"bk:early:{n}", "probe")
            await asyncio.sleep(0.05)
            return all("probe" in listener.messages for listener in listeners)

        async with asyncio.timeout(5):
            while not await probe():
                pass
    finally:
        await broker.close()


async def test_a_password_is_sent_with_auth(caplog: pytest.LogCaptureFixture) -> None:
    with RedisProcess("--requirepass", "s3cret") as redis:
        for url in (
            f"redis://:s3cret@127.0.0.1:{redis.port}/0",
            f"redis://default:s3cret@127.0.0.1:{redis.port}/2",
        ):
            async with started(open_broker(url)) as broker:
                listener = Collector()
                await subscribed(broker, "bk:auth", listener)
                assert listener.resyncs == 1
        # A wrong password: the broker keeps trying, reporting it, and closes cleanly.
        caplog.set_level(logging.WARNING, "boulanger.broker.redis.subscriber")
        async with started(RedisBroker(f"redis://:wrong@127.0.0.1:{redis.port}")) as wrong:
            # Refused, and tried again: two refusals reported.
            await eventually(
                lambda: sum("WRONGPASS" in r.getMessage() for r in caplog.records) >= 2
            )
            assert not wrong.connected.is_set()


async def test_a_unix_socket(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("sock") / "redis.sock"
    with RedisProcess("--unixsocket", str(path)):
        async with started(open_broker(f"unix://{path}?db=0")) as broker:
            listener = Collector()
            await subscribed(broker, "bk:unix", listener)


def test_the_url_is_read_as_redis_py_reads_it() -> None:
    from boulanger.broker.redis.endpoint import Endpoint as _Endpoint

    plain = _Endpoint("redis://example.org")
    assert (plain.host, plain.port, plain.path, plain.ssl, plain.hello) == (
        "example.org",
        6379,
        None,
        None,
        b"",
    )
    full = _Endpoint("rediss://ann:p%40ss@10.0.0.1:6380/3?ssl_cert_reqs=none")
    assert (full.host, full.port) == ("10.0.0.1", 6380)
    assert full.hello == b"*3\r\n$4\r\nAUTH\r\n$3\r\nann\r\n$4\r\np@ss\r\n"
    assert full.ssl is not None and not full.ssl.check_hostname
    assert _Endpoint("rediss://h").ssl.check_hostname  # type: ignore[union-attr]
    assert _Endpoint("unix:///run/redis.sock?password=pw").path == "/run/redis.sock"
    assert _Endpoint("unix:///run/redis.sock?password=pw").hello == (
        b"*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n"
    )
