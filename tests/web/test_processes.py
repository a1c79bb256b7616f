"""Several servers on one Redis: one race, the same events everywhere, faults.

Two apps in the test's event loop, each with its own connections to Redis as
a process has; real processes where one is killed.
"""

from __future__ import annotations

import asyncio

import pytest

from boulanger.solver import solve
from support.apps import AppServer
from support.games import game_after
from support.racer import Racer, create_race
from support.screens import in_order
from support.servers import RedisProcess, ServerProcess

CODE = "BK1-C4-AAAAAAB"


@pytest.fixture(scope="module")
def winning_actions() -> list[dict]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


async def _started(created: dict, *racers: Racer) -> None:
    await racers[0].start()
    for racer in racers[1:]:
        await racer.until_started()


async def _ann_and_bo(
    a: AppServer | ServerProcess, b: AppServer | ServerProcess
) -> tuple[dict, Racer, Racer]:
    """A started race with Ann (the host) on process a and Bo on process b."""
    created = await create_race(a.base, code=CODE)
    ann = await Racer(a.ws_base, created["race_id"]).connect()
    bo = await Racer(b.ws_base, created["race_id"]).connect()
    await ann.join("Ann", host_key=created["host_key"])
    await bo.join("Bo")
    await _started(created, ann, bo)
    return created, ann, bo


async def test_players_on_two_processes_share_one_race(
    two_apps: tuple[AppServer, AppServer], winning_actions: list[dict]
) -> None:
    a, b = two_apps
    created = await create_race(a.base, code=CODE)
    ann = await Racer(a.ws_base, created["race_id"]).connect()
    bo = await Racer(b.ws_base, created["race_id"]).connect()
    watcher_a = await Racer(a.ws_base, created["race_id"]).connect()
    watcher_b = await Racer(b.ws_base, created["race_id"]).connect()
    await ann.join("Ann", host_key=created["host_key"])
    await bo.join("Bo")
    await watcher_a.spectate()
    await watcher_b.spectate()
    await _started(created, ann, bo, watcher_b)

    # Both play at once, on different processes.
    async def play_ann() -> None:
        for action in winning_actions:
            assert (await ann.move(action["src"], action["dst"], action["count"]))["type"] == "ack"

    async def play_bo() -> None:
        for _ in range(10):
            assert (await bo.move("col1", "cell1"))["type"] == "ack"
            assert (await bo.act("undo"))["type"] == "ack"
        assert (await bo.act("resign"))["type"] == "ack"

    await asyncio.gather(play_ann(), play_bo())
    overs = [await r.wait_event("race_over") for r in (ann, bo, watcher_a, watcher_b)]
    assert all(o["standings"] == overs[0]["standings"] for o in overs)
    assert [s["name"] for s in overs[0]["standings"]] == ["Ann", "Bo"]
    # The same events, in the same order, with no gap, on both processes (each
    # naming the one before it: those that change nothing shown go to their player).
    assert watcher_a.events == watcher_b.events
    assert in_order(watcher_a.events)
    # 2 joins, the start, every action of both, the end.
    assert watcher_a.events[-1]["seq"] == 2 + 1 + len(winning_actions) + 21 + 1
    for racer in (ann, bo, watcher_a, watcher_b):
        await racer.close()


async def test_sigkill_of_a_server_loses_no_acknowledged_action(
    two_servers: tuple[ServerProcess, ServerProcess], winning_actions: list[dict]
) -> None:
    a, b = two_servers
    created, ann, bo = await _ann_and_bo(a, b)
    half = len(winning_actions) // 2
    acks = []
    for action in winning_actions[:half]:
        acks.append(await ann.move(action["src"], action["dst"], action["count"]))
        assert acks[-1]["type"] == "ack"
    a.stop(kill=True)  # SIGKILL, mid-race
    with pytest.raises(ConnectionError):
        await ann.expect("never", timeout=5)

    back = await Racer(b.ws_base, created["race_id"]).connect()
    welcome = await back.join(token=ann.token, last_seq=ann.last_seq)
    assert welcome["game"] == game_after(CODE, acks)  # same board, score, undo history
    for action in winning_actions[half:]:
        assert (await back.move(action["src"], action["dst"], action["count"]))["type"] == "ack"
    assert (await bo.act("resign"))["type"] == "ack"
    over = await bo.wait_event("race_over")
    assert over["standings"][0]["status"] == "won"
    assert over["standings"][0]["actions"] == len(winning_actions)
    # Bo saw every event sent to everyone, in order, without a gap.
    assert in_order(bo.events)
    for racer in (back, bo):
        await racer.close()


async def test_redis_restart_mid_race_loses_nothing(
    own_redis: RedisProcess,
    two_apps: tuple[AppServer, AppServer],
    winning_actions: list[dict],
) -> None:
    a, b = two_apps
    _, ann, bo = await _ann_and_bo(a, b)
    half = len(winning_actions) // 2
    for action in winning_actions[:half]:
        assert (await ann.move(action["src"], action["dst"], action["count"]))["type"] == "ack"

    # SIGTERM: Redis writes nothing more; AOF has every acknowledged action. (In a
    # thread, as the start below: the servers in this loop run on meanwhile.)
    await asyncio.to_thread(own_redis.stop)
    action = winning_actions[half]
    down = await ann.move(action["src"], action["dst"], action["count"], action_id="while-down")
    assert down["type"] == "reject" and down["code"] == "try_again"
    await asyncio.to_thread(own_redis.start)

    # The same action id, sent again, goes through once the broker is back; so
    # does every later action (each one, as a client does, sent again while the
    # answer is try_again: the processes' connections come back one by one).
    for n, action in enumerate(winning_actions[half:]):
        answer = await ann.act_through_try_again(
            "move",
            src=action["src"],
            dst=action["dst"],
            count=action["count"],
            action_id="while-down" if n == 0 else f"after-{n}",
            timeout=30,
        )
        assert answer["type"] == "ack", answer
    # Bo's process resubscribed by itself: Bo sees Ann's win.
    won = await bo.wait_event("progress", player_id=ann.player_id, status="won", timeout=15)
    assert won["player"]["actions"] == len(winning_actions)

    def received() -> list[dict]:
        return sorted({e["seq"]: e for e in bo.events}.values(), key=lambda e: e["seq"])

    if not in_order(received()):
        # Events published while Redis was away are gone from pub/sub: resync fills the gap.
        await bo.answer("resync_done", events=True, type="resync", last_seq=bo.events[0]["seq"])
    assert in_order(received())
    for racer in (ann, bo):
        await racer.close()


async def test_players_of_one_race_act_at_once_on_both_processes(
    two_apps: tuple[AppServer, AppServer],
) -> None:
    """Each player's actions are in flight alongside the others' (they wait only
    for their own): every action is acknowledged once, and both processes see
    every event once, in order."""
    a, b = two_apps
    created = await create_race(a.base, code=CODE)
    names = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo"]
    racers = [
        await Racer((a if i % 2 == 0 else b).ws_base, created["race_id"]).connect()
        for i in range(len(names))
    ]
    watchers = [await Racer(s.ws_base, created["race_id"]).connect() for s in (a, b)]
    for i, (racer, name) in enumerate(zip(racers, names, strict=True)):
        await racer.join(name, **({"host_key": created["host_key"]} if i == 0 else {}))
    for watcher in watchers:
        await watcher.spectate()
    await _started(created, *racers, *watchers)

    async def play(racer: Racer) -> list[int]:
        seqs = []
        for _ in range(15):
            for answer in (await racer.move("col1", "cell1"), await racer.act("undo")):
                assert answer["type"] == "ack", answer
                seqs.append(answer["seq"])
        return seqs

    acked = [seq for seqs in await asyncio.gather(*map(play, racers)) for seq in seqs]
    assert len(set(acked)) == len(acked) == 30 * len(racers)
    # Everyone resigns: the race ends, an event that reaches every connection.
    resigned = [(await racer.act("resign"))["seq"] for racer in racers]
    for watcher in watchers:
        await watcher.wait_event("race_over", timeout=20)
    assert watchers[0].events == watchers[1].events
    assert in_order(watchers[0].events)
    progress = {e["seq"] for e in watchers[0].events if e["type"] == "progress"}
    assert progress <= {*acked, *resigned} and set(resigned) <= progress
    # Each player was told each of their own actions (the others, what changed).
    for racer in racers:
        own = [e for e in racer.events if e["type"] == "progress"]
        mine = [e["seq"] for e in own if e["player"]["player_id"] == racer.player_id]
        assert len(mine) == 31 and in_order(racer.events)
    for racer in (*racers, *watchers):
        await racer.close()
