"""The client keeps its own game from short acks, in step with the server's.

An ``ack`` carries the move and the game's numbers, not the board: the page
makes each acknowledged move on its own copy (docs/protocol.md, "ack"). A
player here moves by keyboard, drag, tap and double tap, group moves and
undos included, on a named deal; after every answer the page's game must be
the one the acks make on the engine, and at the end the server's own (a
fresh snapshot, and the game record). A copy made wrong on purpose is put
right by the snapshot the page asks for.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from typing import Any

from boulanger.engine import Game
from boulanger.race.race import game_view
from support.games import game_after

from .conftest import Player
from .test_browser import (
    DEAL,
    card_locator,
    choices,
    drag,
    grab_point,
    key_move,
    practise,
    race_code,
    race_id,
    settled,
    solve,
    until,
)


def received(p: Player) -> list[dict[str, Any]]:
    """Every message the page receives from now on (its sockets to come)."""
    messages: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        def frame(payload: Any) -> None:
            with contextlib.suppress(ValueError, TypeError):
                messages.append(json.loads(payload))

        ws.on("framereceived", frame)

    p.page.on("websocket", on_socket)
    return messages


def confirmed(p: Player) -> dict[str, Any]:
    return p.page.evaluate("() => window.boulanger.confirmed")


def acks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["type"] == "ack"]


def test_the_pages_own_game_stays_the_servers(players: Any) -> None:
    solo = players("Solo")
    messages = received(solo)
    practise(solo)
    code = race_code(solo)
    assert code == DEAL
    solution = solve(code)
    assert any(m["count"] > 1 for m in solution)  # group moves among them
    used: list[str] = []
    for number, move in enumerate(solution):
        how = choices(solo, move)
        if number % 9 == 4:
            # A move, taken back, made again.
            key_move(solo, move)
            solo.page.click(".stats button.undo")
            settled(solo)
            used.append("undo")
            assert confirmed(solo) == game_after(code, acks(messages))
        if how["tap"] == move:
            x, y = grab_point(card_locator(solo, move["src"], move["count"]))
            solo.page.mouse.click(x, y)
            used.append("tap")
        elif how["double"] == move and how["tap"] is None and number % 2:
            x, y = grab_point(card_locator(solo, move["src"], move["count"]))
            solo.page.mouse.dblclick(x, y)
            used.append("double_tap")
        elif number % 5 == 1:
            drag(solo, move)
            used.append("drag")
        else:
            key_move(solo, move, wait=False)
            used.append("group" if move["count"] > 1 else "key")
        settled(solo)
        # The page's game is the one its acks make, numbers checked on the way.
        assert confirmed(solo) == game_after(code, acks(messages)), (number, move)
    assert {"tap", "double_tap", "drag", "key", "group", "undo"} <= set(used), used
    mine = confirmed(solo)
    assert mine["status"] == "won" and mine["foundation_cards"] == 52
    assert solo.page.evaluate("() => window.boulanger.repairs || 0") == 0

    # The server's own: a snapshot asked for now, and the game record.
    solo.page.evaluate("() => window.boulangerSocket.send({type: 'resync', last_seq: -1})")
    until(lambda: any(m["type"] == "snapshot" for m in messages), solo, timeout=10)
    player_id = solo.page.evaluate("() => window.boulanger.me")
    url = f"{solo.base}/api/races/{race_id(solo)}/records/{player_id}"
    with urllib.request.urlopen(url, timeout=5) as answer:
        record = json.load(answer)
    assert game_view(Game.from_record(record), "won") == mine
    assert [m["game"] for m in messages if m["type"] == "snapshot"] == [mine]
    assert confirmed(solo) == mine


def test_a_copy_gone_wrong_is_put_right_by_a_snapshot(players: Any) -> None:
    solo = players("Solo")
    messages = received(solo)
    practise(solo)
    code = race_code(solo)
    solution = solve(code)
    key_move(solo, solution[0])
    key_move(solo, solution[1])

    # The page believes a king is in cell 1; the server's cell 1 is empty. A
    # move there (sent as is: the page's own rules would refuse it) is
    # acknowledged, and the page cannot make it on its copy.
    to_cell = {"src": "col8", "dst": "cell4", "count": 1}
    solo.page.evaluate("() => { window.boulanger.confirmed.board.cells[3] = 'KS'; }")
    solo.page.evaluate("(m) => window.boulanger.act('move', m, m)", to_cell)
    solo.page.wait_for_function(
        "() => window.boulanger.repairs === 1 && !window.boulanger.repairing"
    )
    assert {"type": "resync", "last_seq": -1} in solo.sent
    assert confirmed(solo) == game_after(code, acks(messages))
    assert confirmed(solo)["board"]["cells"][3] != "KS"

    # Numbers that disagree: a card too many on a foundation in the copy.
    solo.page.evaluate("() => { window.boulanger.confirmed.board.foundations.S += 1; }")
    key_move(solo, solution[2])
    solo.page.wait_for_function(
        "() => window.boulanger.repairs === 2 && !window.boulanger.repairing"
    )
    assert confirmed(solo) == game_after(code, acks(messages))

    # And play goes on in step.
    solo.page.click(".stats button.undo")
    settled(solo)
    key_move(solo, solution[2])
    assert confirmed(solo) == game_after(code, acks(messages))
    assert solo.page.evaluate("() => window.boulanger.repairs") == 2
