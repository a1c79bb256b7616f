"""A player who joins again is served by the new connection; the old one is closed (4409)
in whatever process holds it, by a kick on the deployment's control channel.

On every broker, two servers share one store, both apps served in this
test's event loop: on Redis and on Redis Cluster each with its own
connections, on the embedded brokers (one process by design) on one broker,
each with its hubs as a process has.
A listener of the test's own hears the race's channel and the control
channel meanwhile: the race's carries its events and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from boulanger import codec
from boulanger.broker import Broker, Store, open_broker, open_store, race_channel
from boulanger.web.connection import CLOSE_REPLACED
from support.apps import AppServer
from support.listeners import Collector
from support.racer import Racer, create_race
from support.servers import RedisCluster, RedisProcess

CODE = "BK1-C4-AAAAAAB"
ENV = {"BOULANGER_COUNTDOWN_MS": "100"}


@contextlib.asynccontextmanager
async def _serve(store: Store) -> AsyncIterator[str]:
    """An app on ``store`` served in this event loop; yields its ``host:port``."""
    async with AppServer("memory://", env=ENV, store=store) as server:
        yield server.base.removeprefix("http://")


@contextlib.asynccontextmanager
async def _apps(url: str) -> AsyncIterator[tuple[str, str]]:
    """Two apps on the store at ``url``, each with its own connections as a process has."""
    async with AppServer(url, env=ENV) as a, AppServer(url, env=ENV) as b:
        yield a.base.removeprefix("http://"), b.base.removeprefix("http://")


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
async def deployment(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[tuple[str, str], Broker]]:
    """Two servers on one store (``host:port`` each), and a broker of the test's on it."""
    kind = request.param
    if kind in ("memory", "sqlite"):
        url = "memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'boulanger.db'}"
        store = open_store(url)
        await store.start()
        try:
            async with contextlib.AsyncExitStack() as stack:
                a = await stack.enter_async_context(_serve(store))
                b = await stack.enter_async_context(_serve(store))
                yield (a, b), store.broker
        finally:
            await store.close()
        return
    if kind == "redis":
        redis: RedisProcess = request.getfixturevalue("own_redis")
        url = redis.url
    else:
        cluster: RedisCluster = request.getfixturevalue("redis_cluster")
        url = cluster.url
    async with _apps(url) as servers:
        broker = open_broker(url)
        await broker.start()
        mapped = getattr(broker, "mapped", None)
        if mapped is not None:  # the cluster's slot map, asked for on start
            await asyncio.wait_for(mapped.wait(), 10)
        try:
            yield servers, broker
        finally:
            await broker.close()


async def _listening(broker: Broker, race_id: str) -> tuple[Collector, Collector]:
    """A listener on the race's channel and one on the control channel, both live."""
    race, control = Collector(), Collector()
    await broker.subscribe(race_channel(race_id), race)
    await broker.subscribe_control(control)
    # Redis confirms a subscription on its own time: probes until both come back.
    # Harmless to the servers: an event before the first (which a replica passes
    # over as old), and a kick for no race.
    event_probe = codec.with_seq(0, "{}")
    kick_probe = codec.encode_kick(codec.Kick("no-race", "probe", None))
    async with asyncio.timeout(10):
        while event_probe not in race.messages or kick_probe not in control.messages:
            await broker.publish(race_channel(race_id), event_probe)
            await broker.publish_control(kick_probe)
            await asyncio.sleep(0.05)
    race.messages.clear()
    control.messages.clear()
    return race, control


async def test_a_kick_from_one_process_closes_the_connection_held_by_another(
    deployment: tuple[tuple[str, str], Broker],
) -> None:
    (a, b), broker = deployment
    created = await create_race(f"http://{a}", code=CODE)
    race_id = created["race_id"]
    race, control = await _listening(broker, race_id)

    ann = await Racer(f"ws://{a}", race_id).connect()
    assert (await ann.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    await ann.start()
    assert (await ann.move("col1", "cell1"))["type"] == "ack"

    # Ann again, on the other server: that one kicks, this one closes her old connection.
    back = await Racer(f"ws://{b}", race_id).connect()
    welcome = await back.join(token=ann.token, last_seq=ann.last_seq)
    assert welcome["type"] == "welcome" and welcome["player_id"] == ann.player_id
    with pytest.raises(ConnectionError):
        await ann.expect("never", timeout=10)
    assert ann.close_code == CLOSE_REPLACED
    assert (await back.act("undo"))["type"] == "ack"  # the new one plays on

    # The control channel carried the kick; the race's channel, its events alone.
    async with asyncio.timeout(10):
        while not control.messages or len(race.messages) < 4:  # join, start, move, undo
            await asyncio.sleep(0.02)
    (kick,) = [codec.decode_control(text) for text in control.messages]
    assert kick is not None and (kick.race_id, kick.player_id) == (race_id, ann.player_id)
    assert kick.keep is not None  # the new connection's name: it stays open
    logged = [codec.decode_logged(text) for text in race.messages]
    assert [one.seq for one in logged] == list(range(1, len(logged) + 1))
    assert all(codec.decode_control(text) is None for text in race.messages)
    await back.close()
