"""Several server processes on one Redis: one race, the same events everywhere, faults."""

from __future__ import annotations

import asyncio

import pytest

from boulanger.solver import solve
from support.racer import Racer, create_race
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


async def _ann_and_bo(a: ServerProcess, b: ServerProcess) -> tuple[dict, Racer, Racer]:
    """A started race with Ann (the host) on process a and Bo on process b."""
    created = await create_race(a.base, code=CODE)
    ann = await Racer(a.ws_base, created["race_id"]).connect()
    bo = await Racer(b.ws_base, created["race_id"]).connect()
    await ann.join("Ann", host_key=created["host_key"])
    await bo.join("Bo")
    await _started(created, ann, bo)
    return created, ann, bo


async def test_players_on_two_processes_share_one_race(
    two_servers: tuple[ServerProcess, ServerProcess], winning_actions: list[dict]
) -> None:
    a, b = two_servers
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
    # The same events, in the same order, with no gap, on both processes.
    assert watcher_a.events == watcher_b.events
    seqs = [e["seq"] for e in watcher_a.events]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    # 2 joins, the start, every action of both, the end.
    assert seqs[-1] == 2 + 1 + len(winning_actions) + 21 + 1
    for racer in (ann, bo, watcher_a, watcher_b):
        await racer.close()


async def test_sigkill_of_a_server_loses_no_acknowledged_action(
    two_servers: tuple[ServerProcess, ServerProcess], winning_actions: list[dict]
) -> None:
    a, b = two_servers
    created, ann, bo = await _ann_and_bo(a, b)
    half = len(winning_actions) // 2
    for action in winning_actions[:half]:
        last = await ann.move(action["src"], action["dst"], action["count"])
        assert last["type"] == "ack"
    a.stop(kill=True)  # SIGKILL, mid-race
    with pytest.raises(ConnectionError):
        await ann.expect("never", timeout=5)

    back = await Racer(b.ws_base, created["race_id"]).connect()
    welcome = await back.join(token=ann.token, last_seq=ann.last_seq)
    assert welcome["game"] == last["game"]  # same board, score, undo history
    for action in winning_actions[half:]:
        assert (await back.move(action["src"], action["dst"], action["count"]))["type"] == "ack"
    assert (await bo.act("resign"))["type"] == "ack"
    over = await bo.wait_event("race_over")
    assert over["standings"][0]["status"] == "won"
    assert over["standings"][0]["actions"] == len(winning_actions)
    # Bo saw every event, in order, without a gap.
    seqs = [e["seq"] for e in bo.events]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    for racer in (back, bo):
        await racer.close()


async def test_redis_restart_mid_race_loses_nothing(
    own_redis: RedisProcess,
    two_servers: tuple[ServerProcess, ServerProcess],
    winning_actions: list[dict],
) -> None:
    a, b = two_servers
    _, ann, bo = await _ann_and_bo(a, b)
    half = len(winning_actions) // 2
    for action in winning_actions[:half]:
        assert (await ann.move(action["src"], action["dst"], action["count"]))["type"] == "ack"

    own_redis.stop()  # SIGTERM: Redis writes nothing more; AOF has every acknowledged action
    action = winning_actions[half]
    down = await ann.move(action["src"], action["dst"], action["count"], action_id="while-down")
    assert down["type"] == "reject" and down["code"] == "try_again"
    own_redis.start()

    # The same action id, sent again, now goes through.
    for _ in range(50):
        again = await ann.move(
            action["src"], action["dst"], action["count"], action_id="while-down"
        )
        if again["type"] == "ack":
            break
        await asyncio.sleep(0.1)
    assert again["type"] == "ack"
    for action in winning_actions[half + 1 :]:
        assert (await ann.move(action["src"], action["dst"], action["count"]))["type"] == "ack"
    # Bo's process resubscribed by itself: Bo sees Ann's win.
    won = await bo.wait_event("progress", player_id=ann.player_id, status="won", timeout=15)
    assert won["player"]["actions"] == len(winning_actions)
    seqs = sorted({e["seq"] for e in bo.events})
    if seqs != list(range(seqs[0], seqs[-1] + 1)):
        # Events published while Redis was away are gone from pub/sub: resync fills the gap.
        await bo.send(type="resync", last_seq=seqs[0])
        await asyncio.sleep(0.5)
        seqs = sorted({e["seq"] for e in bo.events})
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    for racer in (ann, bo):
        await racer.close()
