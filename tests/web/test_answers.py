"""What the server answers, exactly as docs/protocol.md says: refs, resync
answers and their end, who may watch, a resign, a second start, /healthz.

On both brokers, with scripted clients speaking the real protocol.
"""

from __future__ import annotations

import httpx
import pytest

from support.apps import AppServer
from support.racer import EVENT_TYPES, Racer, create_race
from support.screens import barrier

CODE = "BK1-C4-AAAAAAB"  # deal 1: 6S tops column 1, col1>cell1 is legal, col1>col2 is not


async def _race(
    server: AppServer, *names: str, open_boards: bool = False
) -> tuple[dict, list[Racer]]:
    """A race on CODE; with ``open_boards``, spectators watch boards of players still playing."""
    created = await create_race(server.base, code=CODE, open_boards=open_boards)
    racers = []
    for i, name in enumerate(names):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        extra = {"host_key": created["host_key"]} if i == 0 else {}
        welcome = await racer.join(name, ref=f"join-{name}", **extra)
        assert welcome["type"] == "welcome" and welcome["ref"] == f"join-{name}"
        racers.append(racer)
    return created, racers


def _events(messages: list[dict]) -> list[int]:
    return [m["seq"] for m in messages if m["type"] in EVENT_TYPES]


async def test_every_direct_answer_echoes_the_ref(server: AppServer) -> None:
    created, (ann, bo) = await _race(server, "Ann", "Bo", open_boards=True)
    cy = await Racer(server.ws_base, created["race_id"]).connect()
    [welcome] = await cy.answer("welcome", type="join", role="spectator", ref="w")
    assert welcome["ref"] == "w" and welcome["token"] is None

    [pong] = await ann.answer("pong", type="ping", t=5, ref="p")
    assert pong == {"type": "pong", "t": 5, "ref": "p"}
    # No ref, none in the answer.
    assert await ann.answer("pong", type="ping", t=6) == [{"type": "pong", "t": 6}]

    early = await ann.act("move", src="col1", dst="cell1", action_id="a0", ref="r0")
    assert (early["type"], early["code"], early["ref"]) == ("reject", "not_started", "r0")
    # Refusals of messages that are not actions: error, with the ref.
    [not_host] = await bo.answer("error", type="start", ref="s1")
    assert (not_host["code"], not_host["ref"]) == ("not_host", "s1")
    await ann.start()
    [again] = await ann.answer("error", type="start", ref="s2")
    assert (again["code"], again["ref"]) == ("already_started", "s2")
    [no_hint] = await ann.answer("error", type="hint", ref="h")
    assert (no_hint["code"], no_hint["ref"]) == ("no_hints", "h")

    # Actions: ack and reject carry the ref; an action that cannot be read
    # gets an error with its action_id and ref.
    ack = await ann.act("move", src="col1", dst="cell1", action_id="a1", ref="r1")
    assert (ack["type"], ack["action_id"], ack["ref"]) == ("ack", "a1", "r1")
    reject = await ann.act("move", src="col1", dst="col2", action_id="a2", ref="r2")
    assert (reject["type"], reject["code"], reject["ref"]) == ("reject", "illegal_move", "r2")
    [unread] = await ann.answer("error", type="move", action_id="a3", src=3, dst="x", ref="r3")
    assert (unread["code"], unread["action_id"], unread["ref"]) == ("bad_message", "a3", "r3")
    [bad_ref] = await ann.answer("error", type="ping", ref="")
    assert bad_ref["code"] == "bad_message" and "ref" not in bad_ref

    # watch: the first board answers it, with the ref.
    [board] = await cy.answer("board", type="watch", player_id=ann.player_id, ref="v")
    assert (board["player_id"], board["ref"]) == (ann.player_id, "v")
    for racer in (ann, bo, cy):
        await racer.close()


@pytest.mark.parametrize("open_boards", [False, True])
async def test_a_player_may_watch_only_as_the_document_says(
    server: AppServer, open_boards: bool
) -> None:
    _, (ann, bo) = await _race(server, "Ann", "Bo", open_boards=open_boards)
    await ann.start()
    await bo.until_started()
    # While both play: Bo sees his own board, not Ann's.
    [mine] = await bo.answer("board", type="watch", player_id=bo.player_id)
    assert mine["player_id"] == bo.player_id and "ref" not in mine
    [refused] = await bo.answer("error", type="watch", player_id=ann.player_id, ref="x")
    assert (refused["code"], refused["ref"]) == ("watch_refused", "x")
    [unknown] = await bo.answer("error", type="watch", player_id="nobody")
    assert unknown["code"] == "unknown_player"
    assert (await bo.act("resign"))["type"] == "ack"
    if not open_boards:
        # A fair race: Ann's board stays hidden while she plays, even from Bo who finished.
        [hidden] = await bo.answer("error", type="watch", player_id=ann.player_id)
        assert hidden["code"] == "boards_hidden"
    else:
        # Open boards: once Bo has finished, he may watch Ann, who still plays.
        [board] = await bo.answer("board", type="watch", player_id=ann.player_id)
        assert board["player_id"] == ann.player_id and board["game"]["status"] == "playing"
    for racer in (ann, bo):
        await racer.close()


async def test_a_resign_shows_in_the_game_and_reaches_the_watchers(server: AppServer) -> None:
    created, (ann, bo) = await _race(server, "Ann", "Bo", open_boards=True)
    cy = await Racer(server.ws_base, created["race_id"]).connect()
    await cy.spectate()
    await ann.start()
    await cy.answer("board", type="watch", player_id=bo.player_id)
    moved = await bo.act("move", src="col1", dst="cell1")
    seen = await cy.expect("board")
    resigned = await bo.act("resign", ref="bye")
    assert (resigned["move"], resigned["card"], resigned["ref"]) == (None, None, "bye")
    assert resigned["status"] == "resigned"
    assert resigned["actions"] == moved["actions"] == 1  # a resign is not an action
    final = await cy.expect("board")
    assert final["player_id"] == bo.player_id and final["game"]["status"] == "resigned"
    assert final["game"] == {**seen["game"], "status": "resigned"}  # the same board
    progress = await cy.wait_event("progress", player_id=bo.player_id, status="resigned")
    assert progress["player"]["actions"] == 1
    # Back with the token: the welcome's game says resigned too.
    back = await Racer(server.ws_base, created["race_id"]).connect()
    welcome = await back.join(token=bo.token)
    assert welcome["game"]["status"] == "resigned"
    late = await back.act("undo")
    assert (late["type"], late["code"]) == ("reject", "finished")
    for racer in (ann, bo, cy, back):
        await racer.close()


async def test_resync_answers_end_with_resync_done(server: AppServer) -> None:
    created, (ann, bo) = await _race(server, "Ann", "Bo")
    await ann.start()
    for _ in range(3):
        assert (await ann.act("move", src="col1", dst="cell1"))["type"] == "ack"
        assert (await ann.act("undo"))["type"] == "ack"
    # Ann is sent each of her progress events (Bo only those that change what he sees).
    await ann.wait_event("progress", player_id=ann.player_id, actions=6)
    n = ann.last_seq
    await barrier(bo)  # what Bo was sent live has come (held ones too)

    # Behind by a few: those events, in order, each as first sent, then the end.
    first_sent = [e for e in ann.events if n - 4 < e["seq"] <= n]
    answer = await bo.answer("resync_done", events=True, type="resync", last_seq=n - 4, ref="r")
    assert _events(answer) == list(range(n - 3, n + 1)) and len(answer) == 5
    assert answer[:-1] == first_sent
    assert answer[-1] == {"type": "resync_done", "seq": n, "ref": "r"}
    # Up to date (or ahead): only the end.
    for last_seq in (n, n + 10):
        assert await bo.answer("resync_done", events=True, type="resync", last_seq=last_seq) == [
            {"type": "resync_done", "seq": n}
        ]
    # A negative last_seq: a snapshot with the player's game, however few
    # events were missed (how a client whose own copy went wrong asks for it).
    snapshot, done = await bo.answer("resync_done", events=True, type="resync", last_seq=-1)
    assert snapshot["type"] == "snapshot" and snapshot["race"]["seq"] == n
    assert snapshot["game"]["actions"] == 0 and done == {"type": "resync_done", "seq": n}

    # Further back than the last 256 events: a snapshot, then the end.
    for _ in range(140):
        assert (await ann.act("move", src="col1", dst="cell1"))["type"] == "ack"
        assert (await ann.act("undo"))["type"] == "ack"
    await ann.wait_event("progress", player_id=ann.player_id, actions=286)
    n = ann.last_seq
    await barrier(bo)
    snapshot, done = await bo.answer(
        "resync_done", events=True, type="resync", last_seq=1, ref="far"
    )
    assert snapshot["type"] == "snapshot" and snapshot["ref"] == "far"
    assert snapshot["race"]["seq"] == n and snapshot["game"]["actions"] == 0
    assert done == {"type": "resync_done", "seq": n, "ref": "far"}

    # A join with last_seq: the welcome, the missed events, the end.
    await bo.close()
    back = await Racer(server.ws_base, created["race_id"]).connect()
    answer = await back.answer(
        "resync_done", events=True, type="join", token=bo.token, last_seq=n - 2, ref="j"
    )
    assert [m["type"] for m in answer] == ["welcome", "progress", "progress", "resync_done"]
    assert answer[0]["ref"] == "j" and answer[0]["race"]["seq"] == n
    assert _events(answer) == [n - 1, n]
    assert answer[-1] == {"type": "resync_done", "seq": n, "ref": "j"}
    # A spectator's join with last_seq gets the same.
    watcher = await Racer(server.ws_base, created["race_id"]).connect()
    answer = await watcher.answer(
        "resync_done", events=True, type="join", role="spectator", last_seq=n - 1
    )
    assert [m["type"] for m in answer] == ["welcome", "progress", "resync_done"]
    for racer in (ann, back, watcher):
        await racer.close()


async def test_healthz_counts_the_races_this_process_holds(server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        before = (await http.get("/healthz")).json()
        _, (ann,) = await _race(server, "Ann")
        after = (await http.get("/healthz")).json()
    assert set(after) == {"ok", "broker", "races"}
    assert after["ok"] is True and after["races"] >= 1 and isinstance(before["races"], int)
    await ann.close()
