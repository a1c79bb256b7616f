"""The Redis Cluster broker on a real cluster: shards, a slot moving, the replica wait, failover."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import pytest

from boulanger.broker import AppendRefused, BrokerUnavailable, Condition, race_channel
from boulanger.broker.redis.appender import NotReplicated
from boulanger.broker.redis.cluster import RedisClusterBroker
from boulanger.broker.redis.slots import key_slot
from support.listeners import Collector
from support.servers import RedisCluster

from .conftest import eventually, meta, parsed, started, subscribed, text


async def mapped(broker: RedisClusterBroker) -> RedisClusterBroker:
    await asyncio.wait_for(broker.mapped.wait(), 10)
    return broker


@pytest.fixture
async def broker(redis_cluster: RedisCluster) -> AsyncIterator[RedisClusterBroker]:
    async with started(RedisClusterBroker(redis_cluster.url)) as opened:
        yield await mapped(opened)


def races_by_shard(cluster: RedisCluster, prefix: str) -> dict[int, str]:
    """One race id per primary (by port): the first of prefix-0, prefix-1... on each."""
    primaries = {node.port: node for node in cluster.nodes if cluster.role(node) == "master"}
    found: dict[int, str] = {}
    for n in range(200):
        name = f"{prefix}-{n}"
        port = cluster.primary_of(key_slot(race_channel(name))).port
        found.setdefault(port, name)
        if len(found) == len(primaries):
            return found
    raise AssertionError("no race id on every shard")


def player_event(n: int) -> tuple[str, Condition]:
    """Ann's n-th event, appended only if she has n events (so never twice)."""
    event = {"kind": "action", "player_id": "ann", "n": n}
    return text(event), Condition(player_id="ann", player_events=n)


async def test_races_live_on_the_primary_of_their_slot(
    redis_cluster: RedisCluster, broker: RedisClusterBroker
) -> None:
    races = races_by_shard(redis_cluster, "shard")
    listeners = {race: Collector() for race in races.values()}
    for race, listener in listeners.items():
        await subscribed(broker, race_channel(race), listener)
        await broker.create_race(meta(race, race))

    async def one(race: str, n: int) -> tuple[str, int, int]:
        await asyncio.sleep(0.001 * (n % 3))
        return race, n, await broker.append(race, text({"kind": "x", "n": n}), Condition())

    results = await asyncio.gather(*(one(race, n) for n in range(60) for race in listeners))
    for port, race in races.items():
        mine = sorted((seq, n) for r, n, seq in results if r == race)
        assert [seq for seq, _ in mine] == list(range(1, 61))
        assert parsed(await broker.read(race, 0)) == [
            {"seq": s, "kind": "x", "n": n} for s, n in mine
        ]
        assert await broker.race_meta(race) == meta(race, race)
        listener = listeners[race]
        await eventually(lambda listener=listener: len(listener.messages) == 60)
        assert [json.loads(m)["seq"] for m in listener.messages] == list(range(1, 61))
        # Stored on that primary, replicated to its replica.
        node = next(n for n in redis_cluster.nodes if n.port == port)
        assert redis_cluster.command(node, "LLEN", f"bk:race:{{{race}}}:log") == 60
    # Our slots are Redis's.
    node = redis_cluster.nodes[0]
    for key in ("somekey", "{}x", "a{}{b}", "{a}{b}", *races.values()):
        assert redis_cluster.command(node, "CLUSTER", "KEYSLOT", key) == key_slot(key)
    assert await broker.ping()


async def test_the_control_channel_is_plain_pub_sub_on_any_primary(
    redis_cluster: RedisCluster,
) -> None:
    """Each process subscribes to the control channel on a primary of its own pick; a
    message published on another primary reaches it all the same (PUBLISH goes to
    every node of a cluster)."""
    first, second = RedisClusterBroker(redis_cluster.url), RedisClusterBroker(redis_cluster.url)
    first._control_pick, second._control_pick = 0, 1  # two different primaries
    async with started(first), started(second):
        await mapped(first)
        await mapped(second)
        heard = Collector()
        await second.subscribe_control(heard)
        assert first._control is None  # no listener, no subscription
        assert second._control is not None
        node = second._control[0]
        assert node == sorted(redis_cluster_primaries(second))[1]
        async with asyncio.timeout(10):
            while "kick" not in heard.messages:
                await first.publish_control("kick")  # on the first primary
                await asyncio.sleep(0.05)
        # One subscription per process, whatever its listeners.
        other = Collector()
        await second.subscribe_control(other)
        assert second._control[0] == node
        await second.unsubscribe_control(heard)
        await second.unsubscribe_control(other)
        assert second._control is None


def redis_cluster_primaries(broker: RedisClusterBroker) -> set[tuple[str, int]]:
    assert broker.slots is not None
    return broker.slots.primaries()


async def test_many_appends_in_flight_with_the_replica_wait(redis_cluster: RedisCluster) -> None:
    """Pipelined appends and WAITs on one connection per shard: every append is
    answered once its WAIT is, even when one read brings replies of several."""
    broker = RedisClusterBroker(redis_cluster.url, replica_wait=1)
    async with started(broker):
        await mapped(broker)
        races = [f"waits-{n}" for n in range(12)]

        async def worker(w: int) -> list[tuple[str, int]]:
            out = []
            for j in range(25):
                race = races[(w * 7 + j) % len(races)]
                out.append((race, await broker.append(race, text({"w": w, "j": j}), Condition())))
            return out

        async with asyncio.timeout(30):
            results = [r for rs in await asyncio.gather(*map(worker, range(60))) for r in rs]
        for race in races:
            seqs = sorted(seq for r, seq in results if r == race)
            assert seqs == list(range(1, len(seqs) + 1))
            assert len(parsed(await broker.read(race, 0))) == len(seqs)
        assert len(results) == 60 * 25


async def test_a_slot_moving_to_another_shard_is_followed(own_cluster: RedisCluster) -> None:
    """MIGRATING: ASK (answered with ASKING); moved: MOVED, a new slot map, the
    channel subscribed on its new primary and its listeners resynced."""
    async with started(RedisClusterBroker(own_cluster.url)) as broker:
        await mapped(broker)
        race = "moving"
        slot = key_slot(race_channel(race))
        source = own_cluster.primary_of(slot)
        target = next(n for n in own_cluster.nodes[:3] if n is not source)
        listener = Collector()
        await subscribed(broker, race_channel(race), listener)
        resyncs = listener.resyncs
        assert await broker.append(race, *player_event(0)) == 1

        own_cluster.command(
            target, "CLUSTER", "SETSLOT", slot, "IMPORTING", own_cluster.node_id(source)
        )
        own_cluster.command(
            source, "CLUSTER", "SETSLOT", slot, "MIGRATING", own_cluster.node_id(target)
        )
        assert await broker.append(race, *player_event(1)) == 2  # its keys still on the source
        keys = own_cluster.command(source, "CLUSTER", "GETKEYSINSLOT", slot, 10)
        assert sorted(keys) == [f"bk:race:{{{race}}}:log", f"bk:race:{{{race}}}:state"]  # type: ignore[arg-type]
        own_cluster.command(source, "MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)  # type: ignore[misc]
        assert await broker.append(race, *player_event(2)) == 3  # ASK, then ASKING on the target
        asking = own_cluster.command(target, "INFO", "commandstats")
        assert asking["cmdstat_asking"]["calls"] >= 1  # type: ignore[index]

        for node in own_cluster.nodes[:3]:
            own_cluster.command(
                node, "CLUSTER", "SETSLOT", slot, "NODE", own_cluster.node_id(target)
            )
        assert await broker.append(race, *player_event(3)) == 4  # MOVED
        await eventually(lambda: listener.resyncs > resyncs, timeout=10)
        assert broker.slots is not None and broker.slots.owner(slot) == ("127.0.0.1", target.port)
        # The channel is subscribed on the target now: what is appended reaches us.
        assert await broker.append(race, *player_event(4)) == 5
        await eventually(lambda: any(json.loads(m)["seq"] == 5 for m in listener.messages))
        assert [e["n"] for e in parsed(await broker.read(race, 0))] == [0, 1, 2, 3, 4]


async def test_the_replica_wait_acknowledges_only_replicated_appends(
    own_cluster: RedisCluster,
) -> None:
    race = "waiting"
    primary = own_cluster.primary_of(key_slot(race_channel(race)))
    replica = own_cluster.replica_of(primary)
    waiting = RedisClusterBroker(own_cluster.url, replica_wait=1, replica_wait_ms=300)
    async with started(waiting), started(RedisClusterBroker(own_cluster.url)) as plain:
        await mapped(waiting)
        await mapped(plain)
        assert await waiting.append(race, *player_event(0)) == 1
        with replica.paused():  # it acknowledges nothing meanwhile
            with pytest.raises(NotReplicated):
                await waiting.append(race, *player_event(1))
            # Refused, yet in the primary's log: WAIT comes after the script.
            logged = parsed(await waiting.read(race, 0))
            assert [e["n"] for e in logged] == [0, 1]
            with pytest.raises(NotReplicated):
                await waiting.confirm(race, text(logged[1]))
            # Without the wait, the primary's log is enough.
            assert await plain.append(race, *player_event(2)) == 3
            assert await plain.confirm(race, text(logged[1]))
        # Back: the same event is confirmed now, and an event the log does not hold is not.
        async with asyncio.timeout(10):
            while True:
                try:
                    assert await waiting.confirm(race, text(logged[1]))
                    break
                except NotReplicated:
                    await asyncio.sleep(0.1)
        assert not await waiting.confirm(race, text({**logged[1], "n": 99}))
        assert await waiting.append(race, *player_event(3)) == 4


async def append_until_acked(broker: RedisClusterBroker, race: str, n: int) -> int:
    """Event ``n`` (Ann's only events in ``race``), sent until acknowledged (within 60 s).

    As the race hub does: an append answered with an error may still be in the
    log; sent again it is refused (Ann's events moved on), and the log has it:
    from then on it is only confirmed, never appended again. The log may also
    have lost events (a failover without the replica wait): the condition
    follows the log.
    """
    event = {"kind": "action", "player_id": "ann", "n": n}
    count: int | None = None
    found: dict[str, object] | None = None  # n's event, found in the log
    async with asyncio.timeout(60):
        while True:
            try:
                if found is None:
                    if count is None:
                        count = len(parsed(await broker.read(race, 0)))
                    ann = Condition(player_id="ann", player_events=count)
                    with contextlib.suppress(AppendRefused):
                        return await broker.append(race, text(event), ann)
                    logged = parsed(await broker.read(race, 0))
                    count = len(logged)
                    found = next((e for e in logged if e["n"] == n), None)
                if found is not None:
                    if await broker.confirm(race, text(found)):
                        return int(found["seq"])  # type: ignore[call-overload]
                    found = count = None  # the log lost it: append it again
            except BrokerUnavailable:
                pass
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("replica_wait", [1, 0])
async def test_a_primary_killed_its_replica_takes_over(
    own_cluster: RedisCluster, replica_wait: int
) -> None:
    race = "failover"
    slot = key_slot(race_channel(race))
    primary = own_cluster.primary_of(slot)
    replica = own_cluster.replica_of(primary)
    broker = RedisClusterBroker(own_cluster.url, replica_wait=replica_wait, replica_wait_ms=500)
    async with started(broker):
        await mapped(broker)
        listener = Collector()
        await subscribed(broker, race_channel(race), listener)
        acked: dict[int, int] = {}  # n -> seq
        for n in range(30):
            acked[n] = await broker.append(race, *player_event(n))

        async def writer() -> None:
            n = len(acked)
            while n < 130:
                acked[n] = await append_until_acked(broker, race, n)
                n += 1

        writing = asyncio.create_task(writer())
        await eventually(lambda: len(acked) >= 50, timeout=10)
        resyncs = listener.resyncs
        primary.stop(kill=True)  # mid-appends
        # Its replica takes its slots over.
        assert await asyncio.to_thread(own_cluster.wait_failover, primary, slot) is replica
        primary.start()  # back as the new primary's replica (with the wait on, appends need one)
        await asyncio.to_thread(own_cluster.wait_replicated, replica)
        await asyncio.wait_for(writing, 60)
        logged = parsed(await broker.read(race, 0))
        by_seq = {event["seq"]: event["n"] for event in logged}
        lost = [n for n, seq in acked.items() if by_seq.get(seq) != n]
        print(f"replica wait {replica_wait}: {len(lost)} of {len(acked)} acknowledged appends lost")
        if replica_wait:
            assert lost == []
        # The log is whole from then on: every event after the failover is there, in order.
        assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
        assert len({e["n"] for e in logged}) == len(logged)
        # The subscription moved to the new primary: a resync, then the new events.
        # (What was published before the subscription moved is the resync's to
        # read from the log: the event to wait for is one appended after it.)
        await eventually(lambda: listener.resyncs > resyncs, timeout=10)
        after = await append_until_acked(broker, race, len(acked))
        await eventually(lambda: any(json.loads(m)["seq"] == after for m in listener.messages))


async def test_the_control_channel_moves_off_a_killed_primary(own_cluster: RedisCluster) -> None:
    listening, sending = RedisClusterBroker(own_cluster.url), RedisClusterBroker(own_cluster.url)
    async with started(listening), started(sending):
        await mapped(listening)
        await mapped(sending)
        heard = Collector()
        await listening.subscribe_control(heard)
        assert listening._control is not None and listening.slots is not None
        home = listening._control[0]
        slot = next(n for n in range(16384) if listening.slots.owner(n) == home)
        primary = own_cluster.primary_of(slot)
        assert primary.port == home[1]
        primary.stop(kill=True)
        assert await asyncio.to_thread(own_cluster.wait_failover, primary, slot) is not primary
        # A new slot map, and the subscription is on a primary of it.
        async with asyncio.timeout(30):
            while "kick" not in heard.messages:
                with contextlib.suppress(BrokerUnavailable):
                    await sending.publish_control("kick")
                await asyncio.sleep(0.1)
        assert listening._control is not None and listening._control[0] != home


async def test_a_cluster_down_at_start_is_waited_for(own_cluster: RedisCluster) -> None:
    for node in own_cluster.nodes:
        node.stop()
    broker = RedisClusterBroker(own_cluster.url)
    async with started(broker):
        with pytest.raises(BrokerUnavailable):
            await broker.append("early", *player_event(0))
        assert not await broker.ping()
        for node in own_cluster.nodes:
            node.start()
        await asyncio.to_thread(own_cluster.wait_ok)
        await mapped(broker)
        assert await append_until_acked(broker, "early", 0) == 1
        assert await broker.ping()


@pytest.mark.parametrize("replica_wait", [1, 0])
async def test_a_failover_onto_a_lagging_replica(
    own_cluster: RedisCluster, replica_wait: int
) -> None:
    """The replica cut off (stopped, its link to the primary closed), appends go on,
    then the primary dies and the replica takes over with what it had. Without the
    replica wait those appends were acknowledged, and are lost; with it, none was."""
    race = "lagging"
    slot = key_slot(race_channel(race))
    primary = own_cluster.primary_of(slot)
    replica = own_cluster.replica_of(primary)
    broker = RedisClusterBroker(own_cluster.url, replica_wait=replica_wait, replica_wait_ms=200)
    async with started(broker):
        await mapped(broker)
        acked = {n: await broker.append(race, *player_event(n)) for n in range(10)}
        # Replication is asynchronous: without the wait the replica may not have
        # these yet either (it then lost all twenty, once).
        await asyncio.to_thread(own_cluster.wait_caught_up, primary)
        with replica.paused():
            own_cluster.command(primary, "CLIENT", "KILL", "TYPE", "replica")
            for n in range(10, 20):
                try:
                    acked[n] = await broker.append(race, *player_event(n))
                except NotReplicated:
                    break  # not acknowledged (with the wait); Ann's next would need it
            primary.stop(kill=True)
        assert await asyncio.to_thread(own_cluster.wait_failover, primary, slot) is replica
        logged = {e["seq"]: e["n"] for e in await reader_log(broker, race)}
        lost = [n for n, seq in acked.items() if logged.get(seq) != n]
        print(f"replica wait {replica_wait}: {len(lost)} of {len(acked)} acknowledged appends lost")
        if replica_wait:
            assert lost == [] and len(acked) == 10
        else:
            assert lost == list(range(10, 20))  # acknowledged while only the primary had them


async def reader_log(broker: RedisClusterBroker, race: str) -> list[dict[str, object]]:
    """The race's log as the cluster has it now (after a failover: once the map follows)."""
    async with asyncio.timeout(30):
        while True:
            try:
                return parsed(await broker.read(race, 0))
            except BrokerUnavailable:
                await asyncio.sleep(0.1)
