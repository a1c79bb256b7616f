"""Two servers on a real Redis Cluster: races on every shard, and a failover.

The cluster has 3 primaries and 3 replicas (tests/support/servers.py). A
race lives on the shard that owns its slot; the processes append there and
hear its events through sharded pub/sub. Then a primary is killed mid-race:
its replica takes over, and every player keeps playing after reconnecting.
With the replica wait on, no acknowledged action is lost. (Two apps in the
test's loop for the first, two real processes for the failover.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from boulanger.broker import race_channel
from boulanger.broker.redis.cluster import RedisClusterBroker
from boulanger.broker.redis.slots import key_slot
from boulanger.solver import solve
from support.apps import AppServer
from support.games import game_after
from support.racer import Racer, create_race
from support.screens import in_order
from support.servers import RedisCluster, ServerProcess

CODE = "BK1-C4-AAAAAAB"
ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
}


@pytest.fixture(scope="module")
def winning_actions() -> list[dict[str, Any]]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


def two_servers(url: str, **env: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    pair = (ServerProcess(url, env={**ENV, **env}), ServerProcess(url, env={**ENV, **env}))
    try:
        for proc in pair:
            proc.start()
        yield pair
    finally:
        for proc in pair:
            proc.stop()


@pytest.fixture
async def on_cluster(redis_cluster: RedisCluster) -> AsyncIterator[tuple[AppServer, AppServer]]:
    """Two apps on the session's cluster, served in the test's loop."""
    async with AppServer(redis_cluster.url, ENV) as a, AppServer(redis_cluster.url, ENV) as b:
        yield a, b


async def races_on_every_shard(cluster: RedisCluster, base: str) -> list[dict[str, Any]]:
    """Races created until one lies on each primary (ids are random: bounded tries)."""
    found: dict[int, dict[str, Any]] = {}
    for _ in range(60):
        created = await create_race(base, code=CODE)
        port = cluster.primary_of(key_slot(race_channel(created["race_id"]))).port
        found.setdefault(port, created)
        if len(found) == cluster.primaries:
            return list(found.values())
    raise AssertionError("60 races, not one on every shard")


async def test_races_on_every_shard_with_two_processes(
    redis_cluster: RedisCluster,
    on_cluster: tuple[AppServer, AppServer],
    winning_actions: list[dict[str, Any]],
) -> None:
    a, b = on_cluster
    races = await races_on_every_shard(redis_cluster, a.base)

    async def one(created: dict[str, Any]) -> None:
        race_id = created["race_id"]
        ann = await Racer(a.ws_base, race_id).connect()
        bo = await Racer(b.ws_base, race_id).connect()
        watchers = [await Racer(s.ws_base, race_id).connect() for s in (a, b)]
        await ann.join("Ann", host_key=created["host_key"])
        await bo.join("Bo")
        for watcher in watchers:
            await watcher.spectate()
        await ann.start()
        await bo.until_started()

        async def play_ann() -> None:
            for action in winning_actions:
                answer = await ann.move(action["src"], action["dst"], action["count"])
                assert answer["type"] == "ack", answer

        async def play_bo() -> None:
            for _ in range(10):
                assert (await bo.move("col1", "cell1"))["type"] == "ack"
                assert (await bo.act("undo"))["type"] == "ack"
            assert (await bo.act("resign"))["type"] == "ack"

        await asyncio.gather(play_ann(), play_bo())
        overs = [await r.wait_event("race_over") for r in (ann, bo, *watchers)]
        assert all(o["standings"] == overs[0]["standings"] for o in overs)
        assert [s["name"] for s in overs[0]["standings"]] == ["Ann", "Bo"]
        assert overs[0]["standings"][0]["status"] == "won"
        # The same events, in the same order, without a gap, on both processes (those
        # that change nothing a spectator shows go to their player alone).
        assert watchers[0].events == watchers[1].events
        assert in_order(watchers[0].events)
        assert watchers[0].events[-1]["seq"] == 2 + 1 + len(winning_actions) + 21 + 1
        for racer in (ann, bo, *watchers):
            await racer.close()

    await asyncio.gather(*(one(created) for created in races))


@pytest.mark.parametrize("replica_wait", ["1", "0"])
async def test_a_primary_killed_mid_race_players_play_on(
    own_cluster: RedisCluster, winning_actions: list[dict[str, Any]], replica_wait: str
) -> None:
    """Ann (on process A) plays her solution and Bo (on B) moves and takes back,
    while the primary of their race's shard is killed; its replica takes over
    (and the killed node comes back as the replica of its replica: with the
    wait on, appends need one). Then both reconnect, each to the other
    process, and play on. Counted: actions acknowledged to them that the log
    lacks (none, with the wait on)."""
    servers = two_servers(own_cluster.url, BOULANGER_REPLICA_WAIT=replica_wait)
    a, b = next(servers)
    try:
        created = await create_race(a.base, code=CODE)
        race_id = created["race_id"]
        slot = key_slot(race_channel(race_id))
        primary = own_cluster.primary_of(slot)
        ann = await Racer(a.ws_base, race_id).connect()
        bo = await Racer(b.ws_base, race_id).connect()
        await ann.join("Ann", host_key=created["host_key"])
        await bo.join("Bo")
        await ann.start()
        await bo.until_started()

        acked: dict[str, list[str]] = {"Ann": [], "Bo": []}  # action ids acknowledged
        answers: dict[str, list[dict[str, Any]]] = {"Ann": [], "Bo": []}  # the acks of each
        killed = asyncio.Event()
        half = len(winning_actions) // 2

        async def play_ann(racer: Racer, actions: list[dict[str, Any]]) -> None:
            for n, action in enumerate(actions):
                if n == 10 and not killed.is_set():
                    killed.set()  # mid-race: the kill starts now
                answer = await racer.act_through_try_again("move", **action)
                assert answer["type"] == "ack", answer
                acked["Ann"].append(answer["action_id"])
                answers["Ann"].append(answer)

        async def play_bo(racer: Racer, rounds: int) -> None:
            for _ in range(rounds):
                for kind, fields in (("move", {"src": "col1", "dst": "cell1"}), ("undo", {})):
                    answer = await racer.act_through_try_again(kind, **fields)
                    assert answer["type"] == "ack", answer
                    acked["Bo"].append(answer["action_id"])
                    answers["Bo"].append(answer)

        async def kill() -> None:
            await killed.wait()
            primary.stop(kill=True)
            assert await asyncio.to_thread(own_cluster.wait_failover, primary, slot) is not primary
            primary.start()
            await asyncio.to_thread(own_cluster.wait_replicated, own_cluster.primary_of(slot))

        await asyncio.gather(play_ann(ann, winning_actions[:half]), play_bo(bo, 15), kill())
        # Every player reconnects, to the other process, and plays on.
        new_ann = await Racer(b.ws_base, race_id).connect()
        new_bo = await Racer(a.ws_base, race_id).connect()
        welcomes = {
            "Ann": await new_ann.join(token=ann.token, last_seq=ann.last_seq),
            "Bo": await new_bo.join(token=bo.token, last_seq=bo.last_seq),
        }
        reader = RedisClusterBroker(own_cluster.url)
        await reader.start()
        try:
            await asyncio.wait_for(reader.mapped.wait(), 10)
            logged = {e.get("action_id") for e in map(json.loads, await reader.read(race_id, 0))}
        finally:
            await reader.close()
        lost = {name: [a for a in ids if a not in logged] for name, ids in acked.items()}
        count = sum(len(ids) for ids in lost.values())
        total = sum(len(ids) for ids in acked.values())
        print(f"replica wait {replica_wait}: {count} of {total} acknowledged actions lost")
        if replica_wait == "1":
            assert count == 0
            for name, welcome in welcomes.items():
                assert welcome["game"] == game_after(CODE, answers[name])
        done = welcomes["Ann"]["game"]["actions"]  # Ann's moves in the log: she goes on from there
        await asyncio.gather(play_ann(new_ann, winning_actions[done:]), play_bo(new_bo, 3))
        assert (await new_bo.act_through_try_again("resign"))["type"] == "ack"
        over = await new_bo.wait_event("race_over", timeout=20)
        assert [s["name"] for s in over["standings"]] == ["Ann", "Bo"]
        assert over["standings"][0]["status"] == "won"
        assert over["standings"][0]["actions"] == len(winning_actions)
        for racer in (ann, bo, new_ann, new_bo):
            await racer.close()
    finally:
        servers.close()
