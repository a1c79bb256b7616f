"""An ack means the configured durability, also for an action sent again.

With the replica wait on, an append whose WAIT saw no replica is refused
(try_again), yet its event is in the primary's log and, by pub/sub, in the
race's replica. The action sent again with the same id must not be
acknowledged until a WAIT confirms the event replicated. On a real Redis
Cluster whose replica is stopped (SIGSTOP) meanwhile.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from boulanger import codec
from boulanger.broker import race_channel
from boulanger.broker.redis.cluster import RedisClusterBroker
from boulanger.broker.redis.slots import key_slot
from boulanger.race import protocol as p
from boulanger.race.errors import Refused
from boulanger.race.events import Acted, Resigned
from boulanger.race.ids import secret_hash
from boulanger.race.race import Duplicate, RaceMeta
from boulanger.web.hub import RaceHub, now_ms
from support.servers import RedisCluster

CODE = "BK1-C4-AAAAAAB"
RACE = "durable"


@pytest.fixture
async def brokers(own_cluster: RedisCluster) -> AsyncIterator[list[RedisClusterBroker]]:
    """Two brokers (two processes' worth) with the replica wait on, and the race created."""
    opened = [
        RedisClusterBroker(own_cluster.url, replica_wait=1, replica_wait_ms=300) for _ in range(2)
    ]
    for broker in opened:
        await broker.start()
        await asyncio.wait_for(broker.mapped.wait(), 10)
    meta = RaceMeta(RACE, CODE, now_ms(), secret_hash("host"), countdown_ms=0)
    await opened[0].create_race(meta)
    yield opened
    for broker in opened:
        await broker.close()


async def started_hub(broker: RedisClusterBroker) -> RaceHub:
    """The race's hub, Ann joined and the race started (countdown 0)."""
    meta = await broker.race_meta(RACE)
    assert meta is not None
    hub = RaceHub(broker, meta)
    await hub.open()
    if "ann" not in hub.race.players:
        join = codec.decode_client(
            json.dumps({"type": "join", "role": "player", "name": "Ann", "host_key": "host"})
        )
        assert isinstance(join, p.Join)
        race = hub.race
        await _settled(
            hub,
            lambda: race.decide_join(join, now_ms(), "ann", "token"),
            lambda: "ann" in race.players,
        )
        await _settled(
            hub, lambda: race.decide_start("ann", now_ms()), lambda: race.start_at is not None
        )
    return hub


async def _settled(hub: RaceHub, decide: Callable[[], Any], done: Callable[[], bool]) -> None:
    """A setup step, submitted until ``done``: a replica of a cluster just made may take a
    moment to confirm writes within the 300 ms wait (try_again), though the step was made."""
    async with asyncio.timeout(20):
        while not done():
            try:
                await hub.submit(decide)
            except Refused as error:
                assert error.code == "try_again", error
                await asyncio.sleep(0.1)
                await hub.catch_up()


def move(action_id: str) -> Callable[[RaceHub], Callable[[], Acted | Resigned | Duplicate]]:
    action = codec.decode_client(
        json.dumps({"type": "move", "action_id": action_id, "src": "col1", "dst": "cell1"})
    )
    assert isinstance(action, p.MoveAction)
    return lambda hub: lambda: hub.race.decide_action("ann", action, now_ms())


async def test_an_action_applied_but_not_replicated_is_not_acknowledged_again(
    own_cluster: RedisCluster, brokers: list[RedisClusterBroker]
) -> None:
    hub = await started_hub(brokers[0])
    replica = own_cluster.replica_of(own_cluster.primary_of(key_slot(race_channel(RACE))))
    decide = move("m1")
    with replica.paused():
        with pytest.raises(Refused, match="try_again"):
            await hub.submit(decide(hub), "ann")
        # The event reached the primary's log, and this hub by pub/sub.
        async with asyncio.timeout(5):
            while "m1" not in hub.race.players["ann"].applied:
                await asyncio.sleep(0.02)
        # Sent again: found applied (a Duplicate), not confirmed, so not acknowledged.
        with pytest.raises(Refused, match="try_again"):
            await hub.submit(decide(hub), "ann")
    # The replica back: confirmed, acknowledged with the seq of the first append.
    async with asyncio.timeout(10):
        while True:
            try:
                answer = await hub.submit(decide(hub), "ann")
                break
            except Refused as error:
                assert error.code == "try_again"
                await asyncio.sleep(0.1)
    logged = [
        e for e in map(json.loads, await brokers[0].read(RACE, 0)) if e.get("action_id") == "m1"
    ]
    assert len(logged) == 1
    assert isinstance(answer, Duplicate) and answer.seq == logged[0]["seq"]
    await hub.close()


async def test_an_action_found_in_the_log_is_confirmed_before_its_ack(
    own_cluster: RedisCluster, brokers: list[RedisClusterBroker]
) -> None:
    """The other path: a process whose replica has not seen the first append (it
    went through another process) finds it in the log when its own is refused."""
    first = await started_hub(brokers[0])
    lagging = await started_hub(brokers[1])
    # This process hears no more of the race (its pub/sub lags, as on a slow link).
    await brokers[1].unsubscribe(lagging.channel, lagging)
    replica = own_cluster.replica_of(own_cluster.primary_of(key_slot(race_channel(RACE))))
    decide = move("m2")
    with replica.paused():
        with pytest.raises(Refused, match="try_again"):
            await first.submit(decide(first), "ann")  # in the log, WAIT saw no replica
        assert "m2" not in lagging.race.players["ann"].applied
        # Sent again elsewhere: its append refused (Ann's events moved on), found
        # in the log on catching up, not confirmed: not acknowledged.
        with pytest.raises(Refused, match="try_again"):
            await lagging.submit(decide(lagging), "ann")
        assert "m2" in lagging.race.players["ann"].applied
    async with asyncio.timeout(10):
        while True:
            try:
                answer = await lagging.submit(decide(lagging), "ann")
                break
            except Refused as error:
                assert error.code == "try_again"
                await asyncio.sleep(0.1)
    logged = [
        e for e in map(json.loads, await brokers[1].read(RACE, 0)) if e.get("action_id") == "m2"
    ]
    assert len(logged) == 1
    assert isinstance(answer, Duplicate) and answer.seq == logged[0]["seq"]
    await first.close()
    await lagging.close()
