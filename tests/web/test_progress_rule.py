"""Who is sent a progress, through the real protocol (docs/protocol.md, "Who is sent a
progress"): a rival is told every change of what it shows, in order, and nothing
else; a spectator of an open-boards race gets every move of the board it watches;
nothing a rival shows is lost when it reconnects or resyncs, when a server process
is SIGKILLed, or when Redis restarts.

The first tests run the app in this test's event loop on the embedded broker; the
fault tests run real processes on a real Redis. A rival's screen is built from what
its connection was sent (support.screens.Screen) and compared with the truth: the
screen of a client given the whole race at that moment (a spectator joining then).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from boulanger.engine import Game, Move
from boulanger.solver import solve
from boulanger.web.app import create_app
from boulanger.web.settings import Settings
from support.racer import Racer, create_race
from support.screens import Screen, barrier, in_order
from support.servers import RedisProcess, ServerProcess, free_port

CODE = "BK1-C4-AAAAAAB"  # deal 1


@pytest.fixture(scope="module")
def winning_actions() -> list[dict[str, Any]]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


@contextlib.asynccontextmanager
async def _served() -> AsyncIterator[tuple[str, str]]:
    """The app on the embedded broker, served in this event loop: its HTTP and WS bases."""
    settings = Settings.from_env(
        broker_url="memory://", countdown_ms=100, message_burst=10_000, messages_per_second=10_000
    )
    # No win's line is measured (tests/web/test_line_hold.py's subject): its
    # event would come after the race, and its solver process outlive the test.
    settings.review_line_share = settings.review_line_run = 0
    port = free_port()
    config = uvicorn.Config(create_app(settings), port=port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(10):
        while not server.started:
            await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 10)


def screen_of(racer: Racer, screen: Screen | None = None) -> Screen:
    """What ``racer``'s client shows, from its welcome and every event it was sent
    (given ``screen``: that client's screen before, then the events of this connection)."""
    if screen is None:
        screen = Screen()
        assert racer.welcome is not None
        screen.take_race(racer.welcome["race"])
    for event in racer.events:
        screen.receive(event)
    return screen


async def truth(ws_base: str, race_id: str) -> Screen:
    """The race as a client joining now is given it."""
    fresh = await Racer(ws_base, race_id).connect()
    try:
        welcome = await fresh.spectate()
        screen = Screen()
        screen.take_race(welcome["race"])
        return screen
    finally:
        await fresh.close()


def moves_with_detours(winning: list[dict[str, Any]], every: int) -> list[dict[str, Any]]:
    """The winning moves, with a detour taken back after every ``every`` of them (a
    card from a column to a free cell, then undo): moves that change nothing a rival
    sees, unless they change the order (fewer actions go first among the level)."""
    game = Game(CODE)
    out: list[dict[str, Any]] = []
    for n, action in enumerate(winning):
        move = Move.from_dict(action)
        out.append(move.to_dict())
        game.play(move)
        detours = [m for m in game.legal_moves() if m.src[:3] == "col" and m.dst[:4] == "cell"]
        if n % every == every - 1 and detours and not game.board.won:
            out += [detours[0].to_dict(), {"undo": True}]
    return out


def step_action(step: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One step of ``moves_with_detours`` as an action: its kind and fields."""
    if "undo" in step:
        return "undo", {}
    return "move", {"src": step["src"], "dst": step["dst"], "count": step["count"]}


async def play(racer: Racer, step: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One step of ``moves_with_detours``: its answer."""
    kind, fields = step_action(step)
    return await racer.act(kind, **fields, **extra)


async def test_a_rival_is_told_each_change_it_shows_and_a_spectator_each_move(
    winning_actions: list[dict[str, Any]],
) -> None:
    async with _served() as (base, ws_base):
        created = await create_race(base, code=CODE, open_boards=True)
        race_id = created["race_id"]
        ann = await Racer(ws_base, race_id).connect()
        bo = await Racer(ws_base, race_id).connect()
        spectator = await Racer(ws_base, race_id).connect()
        await ann.join("Ann", host_key=created["host_key"])
        await bo.join("Bo")
        await spectator.spectate()
        await ann.start()
        await bo.until_started()
        await spectator.send(type="watch", player_id=ann.player_id)
        assert (await spectator.expect("board"))["game"]["actions"] == 0
        boards: list[dict[str, Any]] = []
        acks: list[dict[str, Any]] = []

        async def everyone_shows_the_truth(why: dict[str, Any]) -> None:
            # What they were sent before now has arrived (a pong leaves after it):
            # each screen shows the race exactly as a client given all of it now would.
            boards.extend(m for m in await barrier(spectator) if m["type"] == "board")
            await barrier(bo)
            await barrier(ann)
            now = (await truth(ws_base, race_id)).picture()
            for racer in (ann, bo, spectator):
                assert screen_of(racer).picture() == now, why

        # Level on cards and score, who has made fewer actions goes first: Bo's moves
        # and Ann's change the order back and forth (some of them), and nothing else.
        bo_acks: list[dict[str, Any]] = []
        for racer in (bo, ann, ann, bo, bo, ann):
            for answer in (await racer.move("col1", "cell1"), await racer.act("undo")):
                assert answer["type"] == "ack", answer
                (acks if racer is ann else bo_acks).append(answer)
                await everyone_shows_the_truth(answer)
        # Ann was told of some of Bo's moves (those that changed the order), not all.
        bo_seqs = {a["seq"] for a in bo_acks}
        told_ann = [e for e in ann.events if e["type"] == "progress" and e["seq"] in bo_seqs]
        assert 0 < len(told_ann) < len(bo_acks)
        for step in moves_with_detours(winning_actions, every=3):
            acks.append(await play(ann, step))
            assert acks[-1]["type"] == "ack", acks[-1]
            await everyone_shows_the_truth(acks[-1])
        assert acks[-1]["status"] == "won"
        # The spectator watching Ann got her board after each of her actions, in order.
        assert [b["game"]["actions"] for b in boards] == [a["actions"] for a in acks]
        assert all(b["player_id"] == ann.player_id for b in boards)
        # Ann was sent each of her progress events; Bo those that changed his screen.
        own = [e for e in ann.events if e["type"] == "progress" and e["seq"] not in bo_seqs]
        told = [e for e in bo.events if e["type"] == "progress" and e["seq"] not in bo_seqs]
        assert [e["seq"] for e in own] == [a["seq"] for a in acks]
        assert 0 < len(told) < len(own) and {e["seq"] for e in told} <= {a["seq"] for a in acks}
        for racer in (ann, bo, spectator):
            assert in_order(racer.events) and screen_of(racer).gaps == 0
        for racer in (ann, bo, spectator):
            await racer.close()


async def test_nothing_a_rival_shows_is_lost_when_it_reconnects_or_resyncs(
    winning_actions: list[dict[str, Any]],
) -> None:
    steps = moves_with_detours(winning_actions, every=2)
    # Bo misses 24 actions: fewer than a resync replays (32), the rest is a snapshot.
    away = (len(steps) // 3, len(steps) // 3 + 24)
    async with _served() as (base, ws_base):
        created = await create_race(base, code=CODE)
        race_id = created["race_id"]
        ann = await Racer(ws_base, race_id).connect()
        bo = await Racer(ws_base, race_id).connect()
        await ann.join("Ann", host_key=created["host_key"])
        await bo.join("Bo")
        await ann.start()
        await bo.until_started()
        for step in steps[: away[0]]:
            assert (await play(ann, step))["type"] == "ack"
        await barrier(bo)
        before = screen_of(bo)
        # Bo's connection drops; Ann plays on; Bo joins again with his last seq.
        await bo.close()
        for step in steps[away[0] : away[1]]:
            assert (await play(ann, step))["type"] == "ack"
        back = await Racer(ws_base, race_id).connect()
        answer = await back.answer(
            "resync_done", events=True, type="join", token=bo.token, last_seq=before.last_seq
        )
        assert answer[0]["type"] == "welcome" and answer[-1]["type"] == "resync_done"
        # The events he missed, quiet ones included, bring his screen to the truth.
        missed = answer[1:-1]
        seqs = list(range(before.last_seq + 1, answer[-1]["seq"] + 1))
        assert [m["seq"] for m in missed] == seqs and len(seqs) >= 24
        for message in missed:
            before.receive(message)
        assert before.gaps == 0
        assert before.picture() == (await truth(ws_base, race_id)).picture()
        # A resync from further back: the same, whatever the client had.
        for step in steps[away[1] :]:
            assert (await play(ann, step))["type"] == "ack"
        await barrier(back)
        again = screen_of(back, before)
        replayed = await back.answer(
            "resync_done", events=True, type="resync", last_seq=before.last_seq - 10
        )
        for message in replayed:
            again.receive(message)
        assert again.gaps == 0
        assert again.picture() == (await truth(ws_base, race_id)).picture()
        for racer in (ann, back):
            await racer.close()


async def _ann_and_bo(a: ServerProcess, b: ServerProcess) -> tuple[dict, Racer, Racer]:
    """A started race with Ann (the host) on process a and Bo on process b."""
    created = await create_race(a.base, code=CODE)
    ann = await Racer(a.ws_base, created["race_id"]).connect()
    bo = await Racer(b.ws_base, created["race_id"]).connect()
    await ann.join("Ann", host_key=created["host_key"])
    await bo.join("Bo")
    await ann.start()
    await bo.until_started()
    return created, ann, bo


async def _bo_is_told(bo: Racer, b: ServerProcess, race_id: str) -> None:
    """Bo (on process b) shows what a client joining b now is given (resyncing, as the
    protocol says, if he saw a gap)."""
    await barrier(bo)
    screen = screen_of(bo)
    if screen.gaps:
        await bo.answer("resync_done", events=True, type="resync", last_seq=screen.last_seq)
        screen = screen_of(bo)
    assert screen.picture() == (await truth(b.ws_base, race_id)).picture()


async def test_nothing_a_rival_shows_is_lost_when_a_process_is_killed(
    two_servers: tuple[ServerProcess, ServerProcess], winning_actions: list[dict[str, Any]]
) -> None:
    a, b = two_servers
    created, ann, bo = await _ann_and_bo(a, b)
    steps = moves_with_detours(winning_actions, every=2)
    half = len(steps) // 2
    for step in steps[:half]:
        assert (await play(ann, step))["type"] == "ack"
    a.stop(kill=True)  # SIGKILL, mid-race: Ann's connection and process are gone
    back = await Racer(b.ws_base, created["race_id"]).connect()
    assert (await back.join(token=ann.token, last_seq=ann.last_seq))["type"] == "welcome"
    await _bo_is_told(bo, b, created["race_id"])
    for step in steps[half:]:
        assert (await play(back, step))["type"] == "ack"
    assert (await bo.act("resign"))["type"] == "ack"
    await bo.wait_event("race_over")
    await _bo_is_told(bo, b, created["race_id"])
    assert in_order(bo.events) and screen_of(bo).gaps == 0
    for racer in (back, bo):
        await racer.close()


async def test_nothing_a_rival_shows_is_lost_when_redis_restarts(
    own_redis: RedisProcess,
    two_servers: tuple[ServerProcess, ServerProcess],
    winning_actions: list[dict[str, Any]],
) -> None:
    a, b = two_servers
    created, ann, bo = await _ann_and_bo(a, b)
    steps = moves_with_detours(winning_actions, every=2)
    half = len(steps) // 2
    for step in steps[:half]:
        assert (await play(ann, step))["type"] == "ack"
    own_redis.stop()  # SIGTERM: AOF has every acknowledged action
    own_redis.start()
    # Ann's process and Bo's reconnect by themselves; her next action goes through again,
    # and so does every later one (each sent again with its id while the server answers
    # try_again: the processes' connections come back one by one).
    for n, step in enumerate(steps[half:]):
        kind, fields = step_action(step)
        answer = await ann.act_through_try_again(
            kind, action_id=f"after-restart-{n}", timeout=30, **fields
        )
        assert answer["type"] == "ack", answer
    await bo.wait_event("progress", player_id=ann.player_id, status="won", timeout=15)
    await _bo_is_told(bo, b, created["race_id"])
    for racer in (ann, bo):
        await racer.close()
