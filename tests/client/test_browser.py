"""The web client in a real browser against a real server.

Two players race one deal (drag, tap, double tap, keyboard, undo, live
progress, results, rematch); an illegal drop snaps back; a dropped
connection comes back with the game intact; a spectator follows both
players of a race with open boards, and, in a fair race, sees no board of
a player still playing nor the deal before the start; results beyond human
pace show as held; a hostile display name stays text; the client's move
rules agree with the engine's.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import expect
from websockets.sync.client import connect

from boulanger.engine import Game
from boulanger.engine.cards import Suit
from boulanger.engine.moves import FIRST_CELL, FOUNDATION, PLACE_NAMES
from boulanger.race import daily as d
from support.days import clear_of_midnight
from support.games import random_record
from support.servers import ServerProcess

from .conftest import Player

KEYS = {
    **{f"col{i}": str(i) for i in range(1, 9)},
    **{f"cell{i}": "abcd"[i - 1] for i in range(1, 5)},
    "foundation": "f",
}
HOSTILE = "<script>alert(1)</script>"
# The deals the tests play, named. The solver is deterministic: deal 1's
# solution offers, early on, a drag, a tap, a double tap and a group move.
DEAL = "BK1-C4-AAAAAAB"  # deal 1
OTHER_DEAL = "BK1-C4-AAAAA24"  # deal 860: any deal will do

# -- helpers ------------------------------------------------------------------------


def create_race(
    p: Player, code: str | None = DEAL, open_boards: bool = False, account: str | None = None
) -> str:
    """Create a race on a deal from the home page; return the share link the lobby shows.

    ``code`` None: the server deals from its catalog (in the test servers' seeded
    sequence), and keeps the deal secret until the start. ``account``: the player is
    signed in as it, so the page asks no name.
    """
    p.page.goto(p.base + "/")
    if account is None:
        p.page.fill("#home-name", p.name)
    else:
        expect(p.page.locator(".who .playing-as")).to_have_text(f"Playing as {account}")
    if code is not None:
        p.page.fill("#home-code", code)
    if open_boards:
        p.page.check("input[name=open_boards]")
    p.page.click("button[name=create]")
    p.page.wait_for_selector(".lobby")
    return p.page.input_value("#share-link")


def join(p: Player, link: str) -> None:
    p.page.goto(link)
    p.page.fill("#join-name", p.name)
    p.page.click("form.join button[type=submit]")
    p.page.wait_for_selector(".lobby")


def practise(p: Player, code: str = DEAL) -> None:
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.fill("#home-code", code)
    p.page.click("button[name=practice]")
    wait_playing(p)


def wait_playing(p: Player) -> None:
    p.page.wait_for_selector(".race-page[data-phase=running] .board .card")


def settled(p: Player) -> None:
    """Wait until the server has answered every action the page sent."""
    p.page.wait_for_function("() => window.boulanger && window.boulanger.predictions.length === 0")


def view(p: Player) -> dict[str, Any]:
    return p.page.evaluate("() => window.boulanger.view()")


def race_code(p: Player) -> str:
    return p.page.text_content(".race-head .code") or ""


def race_id(p: Player) -> str:
    return p.page.evaluate("() => window.boulanger.raceId")


def snapshot(p: Player) -> dict[str, Any]:
    with urllib.request.urlopen(f"{p.base}/api/races/{race_id(p)}", timeout=5) as answer:
        return json.load(answer)


def solve(code: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "boulanger", "solve", code, "--json", "--budget", "20"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answer = json.loads(done.stdout)
    assert answer["result"] == "won", answer
    return answer["actions"]


def key_move(p: Player, move: dict[str, Any], wait: bool = True) -> None:
    """Play a move with the keyboard: source key, exact count with the arrows, destination key."""
    keyboard = p.page.keyboard
    keyboard.press(KEYS[move["src"]])
    if move["src"].startswith("col"):
        keyboard.press("ArrowDown")  # an explicit count of 1 ...
        for _ in range(move["count"] - 1):
            keyboard.press("ArrowUp")  # ... raised to the move's count
    keyboard.press(KEYS[move["dst"]])
    if wait:
        settled(p)


def play_line(p: Player, moves: list[dict[str, Any]]) -> None:
    """Play ``moves`` through the page's own move path (where a drop, a key or a tap
    ends), each answered before the next: the way to a position for tests about what
    comes after it. How moves are entered is tested move by move (key_move, drag...)."""
    p.page.evaluate(
        """async (moves) => {
            const race = window.boulanger;
            const answered = async (move) => {
                const until = Date.now() + 10000;
                while (race.predictions.length) {
                    if (Date.now() > until) throw new Error(`no answer to ${JSON.stringify(move)}`);
                    await new Promise((done) => setTimeout(done, 5));
                }
            };
            await answered(null);
            for (const move of moves) {
                const before = race.confirmed.actions;
                race.sendMove(move.src, move.dst, move.count);
                if (!race.predictions.length) throw new Error(`not sent: ${JSON.stringify(move)}`);
                await answered(move);
                if (race.confirmed.actions !== before + 1) {
                    throw new Error(`refused: ${JSON.stringify(move)}`);
                }
            }
        }""",
        moves,
    )


def until(check: Any, p: Player, timeout: float) -> None:
    """Wait until ``check()`` holds, letting the page run (at most ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        p.page.wait_for_timeout(50)


def card_locator(p: Player, place: str, count: int = 1) -> Any:
    cards = p.page.locator(f'.board [data-place="{place}"] .card')
    if place.startswith("cell"):
        return cards.first
    return cards.nth(cards.count() - count)


def still(p: Any) -> None:
    """Wait until no card is sliding (moves animate for about 150 ms)."""
    p.page.wait_for_function(
        "() => [...document.querySelectorAll('.board .card')].every((c) => !c.getAnimations().length)"
    )


def grab_point(locator: Any) -> tuple[float, float]:
    """A point on the visible top strip of a (maybe covered) card, once cards are still."""
    locator.page.wait_for_function(
        "() => [...document.querySelectorAll('.board .card')].every((c) => !c.getAnimations().length)"
    )
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + 8


def drag(p: Player, move: dict[str, Any]) -> None:
    source = card_locator(p, move["src"], move["count"])
    x, y = grab_point(source)
    target = p.page.locator(f'.board [data-place="{move["dst"]}"]').bounding_box()
    tx = target["x"] + target["width"] / 2
    ty = target["y"] + min(target["height"] / 2, 60)
    mouse = p.page.mouse
    mouse.move(x, y)
    mouse.down()
    mouse.move((x + tx) / 2, (y + ty) / 2, steps=4)
    mouse.move(tx, ty, steps=4)
    mouse.up()


def choices(p: Player, move: dict[str, Any]) -> dict[str, Any]:
    """The card a move carries and what a tap or a double tap on it would do."""
    return p.page.evaluate(
        """async (move) => {
            const R = await import('/static/rules.js');
            const board = window.boulanger.view().board;
            const card = R.movingCards(board, move.src, move.count)[0];
            return {card, tap: R.tapMove(board, card), double: R.doubleTapMove(board, card)};
        }""",
        move,
    )


def standing_cards(p: Player, name: str) -> Any:
    return (
        p.page.locator(".players .player")
        .filter(has=p.page.locator(".name", has_text=name))
        .locator(".cards")
    )


# -- tests -----------------------------------------------------------------------------


def test_two_players_race_one_deal(players: Any) -> None:
    ann = players("Ann", permissions=["clipboard-read", "clipboard-write"])
    bo = players("Bo")
    # Bo's clock is an hour fast: countdown and times must follow the server's.
    bo.page.add_init_script("(() => { const now = Date.now; Date.now = () => now() + 3600000; })()")
    link = create_race(ann)
    assert "/race/" in link
    join(bo, link)
    expect(ann.page.locator(".players .name", has_text="Bo")).to_be_visible()  # live join
    expect(bo.page.locator("button.start")).to_have_count(0)  # only the host starts
    ann.screenshot("race-lobby-host")

    ann.page.click("button.start")
    # Bo's page counts down by the server's clock (it would say "Go!" at once by its own).
    expect(bo.page.locator(".start-overlay .start-count")).to_have_text(re.compile(r"^[1-3]$"))
    wait_playing(ann)
    wait_playing(bo)
    # Under a minute since the start (by its own clock it would be an hour).
    expect(bo.page.locator('[data-stat="time"] .value')).to_have_text(re.compile(r"^0:\d\d$"))
    assert ann.page.locator(".board .cells .slot").count() == 4
    assert ann.page.locator(".board .column").count() == 8
    assert ann.page.locator(".board .card").count() == 52
    solution = solve(race_code(ann))

    # Bo plays the solution's first moves by drag, tap and double tap.
    used: list[str] = []
    boards = []
    for move in solution[:30]:
        if {"drag", "double_tap"} <= set(used) and view(bo)["foundation_cards"] > 0:
            break
        boards.append(view(bo)["board"])
        how = choices(bo, move)
        card = card_locator(bo, move["src"], move["count"])
        x, y = grab_point(card)
        if "drag" not in used:
            drag(bo, move)
            used.append("drag")
        elif how["double"] == move and how["tap"] is None:
            bo.page.mouse.dblclick(x, y)
            used.append("double_tap")
        elif how["tap"] == move:
            bo.page.mouse.click(x, y)
            used.append("tap")
        else:
            drag(bo, move)
            used.append("drag")
        settled(bo)
        assert view(bo)["actions"] == len(used), (move, used)
    assert {"drag", "double_tap"} <= set(used), used
    assert {"move", "double_tap"} <= set(bo.sent_types())
    cards = view(bo)["foundation_cards"]
    assert cards > 0
    expect(standing_cards(ann, "Bo")).to_have_text(f"{cards}/52")  # live progress
    bo.screenshot("race-board-bo")

    # Undo takes back Bo's last move, on Bo's board and in Ann's standings.
    bo.page.click(".stats button.undo")
    settled(bo)
    assert view(bo)["board"] == boards[-1]
    after = view(bo)["foundation_cards"]
    expect(standing_cards(ann, "Bo")).to_have_text(f"{after}/52")

    # Ann plays the whole solution with the keyboard.
    for number, move in enumerate(solution):
        key_move(ann, move)
        if number == len(solution) // 2:
            ann.screenshot("race-board-ann")
            expect(standing_cards(bo, "Ann")).to_have_text(f"{view(ann)['foundation_cards']}/52")
    expect(ann.page.locator(".banner.status-won")).to_contain_text("You won")
    expect(standing_cards(bo, "Ann")).to_have_text("52/52")
    expect(bo.page.locator(".player.status-won .state")).to_contain_text("1st")
    assert "move" in ann.sent_types()

    # Bo resigns (two clicks: the first only arms the button); the race is over.
    bo.page.click(".stats button.resign")
    bo.page.click(".stats button.resign")
    for p in (ann, bo):
        expect(p.page.locator(".results")).to_be_visible()
        rows = p.page.locator(".results-table tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("Ann")
        expect(rows.nth(0)).to_contain_text("won")
        expect(rows.nth(1)).to_contain_text("Bo")
        expect(rows.nth(1)).to_contain_text("resigned")
    share = ann.page.input_value("#share-text")
    # The result, a link to the site: never the deal, nor the race that shows it.
    assert "won" in share.lower() and race_code(ann) not in share and "/race/" not in share
    ann.page.click(".results .share button.copy")
    assert ann.page.evaluate("() => navigator.clipboard.readText()") == share
    ann.screenshot("race-results-ann")
    bo.screenshot("race-results-bo")

    # The host opens a rematch and is taken there; Bo joins it with one click.
    expect(bo.page.locator(".rematch-button")).to_have_count(0)
    ann.page.click(".rematch-button")
    expect(ann.page.locator("button.start")).to_be_visible()  # still the host
    expect(bo.page.locator(".notice.rematch a")).to_be_visible()
    bo.page.click(".notice.rematch a")  # joins under the same name at once
    expect(bo.page.locator(".lobby")).to_be_visible()
    expect(ann.page.locator(".players .name", has_text="Bo")).to_be_visible()


def test_an_armed_resign_outlives_a_rivals_progress(players: Any) -> None:
    """The first click arms the resign button for three seconds; a rival's move
    re-renders the page in between, and the second click still resigns."""
    ann, bo = players("Ann"), players("Bo")
    link = create_race(ann)
    join(bo, link)
    expect(ann.page.locator(".players .name", has_text="Bo")).to_be_visible()
    ann.page.click("button.start")
    wait_playing(ann)
    wait_playing(bo)
    # Armed for a minute here: the three seconds may run out on a loaded machine.
    ann.page.evaluate(
        """async () => {
            const url = document.querySelector('link[href$="/race.js"]').href;
            (await import(url)).arming.ms = 60000;
        }"""
    )
    ann.page.click(".stats button.resign")
    expect(ann.page.locator(".stats button.resign")).to_have_text("Really resign?")
    key_move(bo, solve(DEAL)[0])
    ann.page.wait_for_function(
        "() => [...window.boulanger.players.values()].some((s) => s.actions === 1)"
    )
    armed = ann.page.locator(".stats button.resign.armed")
    expect(armed).to_have_text("Really resign?")
    ann.screenshot("resign-armed")
    ann.page.set_viewport_size(PHONE["viewport"])
    expect(armed).to_be_visible()
    ann.screenshot("resign-armed-phone")
    armed.click()
    expect(ann.page.locator(".banner.status-resigned")).to_contain_text("You resigned")
    expect(ann.page.locator(".stats button.resign")).to_have_count(0)


def test_illegal_drop_snaps_back_with_the_reason(players: Any) -> None:
    solo = players("Solo")
    practise(solo)
    assert solo.page.locator(".race-head h1").text_content() == "Practice"
    illegal = solo.page.evaluate(
        """async () => {
            const R = await import('/static/rules.js');
            const board = window.boulanger.view().board;
            for (let i = 1; i <= 8; i++) for (let j = 1; j <= 8; j++) {
                if (i === j) continue;
                const col = board.columns[i - 1];
                // Not a king: the page's board is doctored below with the rank above it.
                if (!col.length || R.rankOf(col[col.length - 1]) === 13) continue;
                const why = R.whyIllegal(board, `col${i}`, `col${j}`, 1);
                if (why && why.includes('does not go on')) return {src: `col${i}`, dst: `col${j}`, count: 1, why};
            }
            return null;
        }"""
    )
    assert illegal is not None
    card = card_locator(solo, illegal["src"])
    name = card.get_attribute("data-card")
    before = card.bounding_box()
    drag(solo, illegal)
    # Said in plain words with card names, next to the card.
    note = solo.page.locator(".board-note")
    expect(note).to_contain_text("does not go on")
    expect(note).to_contain_text(re.compile("[♠♥♦♣]"))
    expect(
        solo.page.locator(f'[data-place="{illegal["src"]}"] [data-card="{name}"]')
    ).to_have_count(1)
    # The snap-back animation ends where the card started.
    solo.page.wait_for_function(
        """([name, x, y]) => {
            const box = document.querySelector(`[data-card="${name}"]`).getBoundingClientRect();
            return Math.abs(box.x - x) < 1 && Math.abs(box.y - y) < 1;
        }""",
        arg=[name, before["x"], before["y"]],
    )
    assert "move" not in solo.sent_types()
    assert view(solo)["actions"] == 0

    # The keyboard path refuses it too, with the same words.
    solo.page.evaluate("() => { document.querySelector('.board-note').hidden = true; }")
    key_move(solo, illegal, wait=False)
    expect(note).to_contain_text("does not go on")
    assert "move" not in solo.sent_types()

    # When the server refuses a move the page showed, the move is rolled back
    # and the server's reason shown. (The page's copy of the board is doctored
    # so that it believes the move legal.)
    solo.page.evaluate("() => { document.querySelector('.board-note').hidden = true; }")
    shown = solo.page.evaluate(
        """async (move) => {
            const R = await import('/static/rules.js');
            const race = window.boulanger;
            const truth = race.confirmed.board;
            const col = truth.columns[Number(move.src.slice(3)) - 1];
            const card = col[col.length - 1];
            const fake = R.copyBoard(truth);
            const target = fake.columns[Number(move.dst.slice(3)) - 1];
            target[target.length - 1] = R.cardOf(R.rankOf(card) + 1, R.suitOf(card));
            race.confirmed = {...race.confirmed, board: fake};
            race.sendMove(move.src, move.dst, 1);
            const optimistic = race.view().board;
            race.confirmed = {...race.confirmed, board: truth};
            return {card, optimistic, truth};
        }""",
        illegal,
    )
    dst = int(illegal["dst"][3:]) - 1
    assert shown["optimistic"]["columns"][dst][-1] == shown["card"]
    expect(note).to_be_visible()
    expect(note).to_contain_text("does not go on")
    expect(note).not_to_contain_text(f"{illegal['src']}>")  # no developer notation
    settled(solo)
    assert view(solo)["board"] == shown["truth"]
    assert view(solo)["actions"] == 0
    expect(
        solo.page.locator(f'[data-place="{illegal["src"]}"] [data-card="{name}"]')
    ).to_have_count(1)

    # A game with no legal move left says so and offers undo and resign.
    solo.page.evaluate(
        "() => { const r = window.boulanger; r.confirmed = {...r.confirmed, status: 'stuck'}; r.renderNow(); }"
    )
    banner = solo.page.locator(".banner.status-stuck")
    expect(banner).to_contain_text("No legal move")
    expect(banner.locator("button")).to_have_text(["↶ Undo", "Resign"])


@pytest.mark.parametrize(
    ("size", "options"),
    [("desktop", {}), ("phone", {"viewport": {"width": 390, "height": 844}, "has_touch": True})],
)
def test_a_dead_end_is_told_once_the_player_pauses(
    players: Any, size: str, options: dict[str, Any]
) -> None:
    """Played into a dead end, the page says so when the server's verdict comes (after a
    pause), with undo and resign at hand; an undo takes the banner away."""
    p = players(f"Dead end {size}", **options)
    practise(p)
    for action in random_record(DEAL, 1)["actions"]:  # ten actions to a dead end
        if "undo" in action:
            p.page.evaluate("() => window.boulanger.sendUndo()")
        else:
            p.page.evaluate(
                "(m) => window.boulanger.sendMove(m.src, m.dst, m.count)",
                {k: action[k] for k in ("src", "dst", "count")},
            )
        settled(p)
    banner = p.page.locator(".banner.status-dead_end")
    expect(banner).to_contain_text("Dead end", timeout=10_000)
    expect(banner.locator("button")).to_have_text(["↶ Undo", "Resign"])
    p.screenshot(f"{size}-dead-end")
    banner.locator("button", has_text="Undo").click()
    settled(p)
    expect(banner).to_have_count(0)


def touch_drag(p: Player, move: dict[str, Any]) -> None:
    """Drag with a finger (Chrome turns touch events into pointer events)."""
    x, y = grab_point(card_locator(p, move["src"], move["count"]))
    target = p.page.locator(f'.board [data-place="{move["dst"]}"]').bounding_box()
    tx = target["x"] + target["width"] / 2
    ty = target["y"] + min(target["height"] / 2, 40)
    cdp = p.context.new_cdp_session(p.page)
    touch = "Input.dispatchTouchEvent"
    cdp.send(touch, {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 7):
        px, py = x + (tx - x) * step / 6, y + (ty - y) * step / 6
        cdp.send(touch, {"type": "touchMove", "touchPoints": [{"x": px, "y": py}]})
    cdp.send(touch, {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_touch_drag_and_tap_on_a_phone(players: Any) -> None:
    phone = players("Phone", viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    practise(phone)
    solution = solve(race_code(phone))
    dragged = tapped = False
    for move in solution[:40]:
        if dragged and tapped:
            break
        how = choices(phone, move)
        if how["tap"] == move and not tapped:
            phone.page.touchscreen.tap(*grab_point(card_locator(phone, move["src"])))
            tapped = True
        else:
            touch_drag(phone, move)
            dragged = True
        settled(phone)
    assert dragged and tapped
    assert {"move", "tap"} <= set(phone.sent_types())

    # A run of the same suit moves as one group under the finger.
    done = view(phone)["actions"]
    group = next(i for i, m in enumerate(solution) if m["count"] > 1 and i >= done)
    for move in solution[done:group]:
        key_move(phone, move)
    before = view(phone)["board"]
    touch_drag(phone, solution[group])
    settled(phone)
    src, dst, count = (solution[group][k] for k in ("src", "dst", "count"))
    run = before["columns"][int(src[3:]) - 1][-count:]
    assert view(phone)["board"]["columns"][int(dst[3:]) - 1][-count:] == run
    assert [m for m in phone.sent if m["type"] == "move"][-1]["count"] == count
    played = view(phone)["actions"]
    assert snapshot(phone)["players"][0]["actions"] == played
    # Every covered card still shows its corner: at least 15 px of it.
    offsets = phone.page.evaluate(
        """() => [...document.querySelectorAll('.board .column')].map(
            (col) => parseFloat(getComputedStyle(col).getPropertyValue('--offset')))"""
    )
    assert min(offsets) >= 15
    phone.screenshot("phone-board")


def test_dropped_connection_reconnects_with_the_game_intact(players: Any) -> None:
    solo = players("Solo")
    practise(solo)
    solution = solve(race_code(solo))
    key_move(solo, solution[0])
    key_move(solo, solution[1])
    before = view(solo)
    conn = solo.page.locator("#conn")
    expect(conn).to_have_attribute("data-state", "connected")

    # The server side of the socket goes away: the page joins again by itself.
    solo.page.evaluate("() => window.boulangerSocket.drop()")
    solo.page.wait_for_function("() => window.boulangerSocket.welcomes === 2")
    expect(conn).to_have_attribute("data-state", "connected")
    assert solo.sent_types().count("join") == 2
    rejoin = [m for m in solo.sent if m.get("type") == "join"][-1]
    assert rejoin["token"] and rejoin["last_seq"] is not None and rejoin.get("name") is None
    assert view(solo) == before

    # Offline: the move shows at once, waits, and is sent when the network is back.
    solo.context.set_offline(True)
    solo.page.evaluate("() => window.boulangerSocket.drop()")
    expect(conn).to_have_attribute("data-state", "offline")
    expect(conn).to_have_text("Offline")
    key_move(solo, solution[2], wait=False)
    assert solo.page.evaluate("() => window.boulanger.predictions.length") == 1
    assert view(solo)["actions"] == 3
    solo.context.set_offline(False)
    expect(conn).to_have_attribute("data-state", "connected")
    settled(solo)
    assert snapshot(solo)["players"][0]["actions"] == 3
    assert view(solo)["actions"] == 3

    # A gap in the event numbers (an event sent to everyone missed: the start's, here)
    # asks for the missed events.
    solo.page.evaluate("() => { window.boulangerSocket.lastSeq = 1; }")
    key_move(solo, solution[3])
    solo.page.wait_for_function(
        "(seq) => window.boulangerSocket.lastSeq >= seq", arg=snapshot(solo)["seq"]
    )
    assert "resync" in solo.sent_types()
    assert view(solo)["actions"] == 4
    solo.screenshot("reconnected-board")

    # The server's pings (every 2 s here) are answered.
    until(lambda: "pong" in solo.sent_types(), solo, timeout=10)


def test_an_action_answered_on_a_lost_connection_is_not_drawn_twice(players: Any) -> None:
    """The server applies a move, its ack is lost with the connection; the welcome
    of the next one holds the move, and the page does not draw it again on top
    while it waits for the resent action's answer."""
    solo = players("Solo")
    holding = {"acks": False}
    routes: list[tuple[Any, list[str]]] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        held: list[str] = []
        routes.append((ws, held))

        def from_server(message: str | bytes) -> None:
            if holding["acks"] and json.loads(message).get("type") == "ack":
                held.append(str(message))
            else:
                ws.send(message)

        server.on_message(from_server)

    solo.page.route_web_socket(re.compile(r"/ws/races/"), route)
    practise(solo)
    solution = solve(race_code(solo))
    key_move(solo, solution[0])
    holding["acks"] = True
    key_move(solo, solution[1], wait=False)
    until(lambda: routes[-1][1], solo, timeout=10)  # applied, its ack held back
    assert snapshot(solo)["players"][0]["actions"] == 2

    solo.page.evaluate("() => window.boulangerSocket.drop()")
    solo.page.wait_for_function("() => window.boulangerSocket.welcomes === 2")
    until(lambda: len(routes) == 2 and routes[-1][1], solo, timeout=10)  # the resent one's
    shown = view(solo)
    confirmed = solo.page.evaluate("() => window.boulanger.confirmed")
    assert confirmed["actions"] == 2  # the welcome's game holds the move
    assert shown["actions"] == 2 and shown["board"] == confirmed["board"]
    assert solo.page.evaluate("() => window.boulanger.predictions.length") == 1
    expect(solo.page.locator('[data-stat="actions"] .value')).to_have_text("2")

    holding["acks"] = False
    ws, held = routes[-1]
    for message in held:
        ws.send(message)
    settled(solo)
    assert view(solo) == shown
    key_move(solo, solution[2])
    assert snapshot(solo)["players"][0]["actions"] == view(solo)["actions"] == 3


def test_spectator_sees_both_players(players: Any) -> None:
    """A race with open boards: a spectator follows the players' boards live."""
    ann = players("Ann")
    bo = players("Bo")
    link = create_race(ann, OTHER_DEAL, open_boards=True)
    expect(ann.page.locator(".lobby .fair-play")).to_contain_text("Open boards")
    expect(ann.page.locator(".race-head .open-boards")).to_have_text("open boards")
    join(bo, link)
    ann.page.click("button.start")
    wait_playing(ann)
    wait_playing(bo)

    cy = players("Cy", viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    cy.page.goto(link + "?watch=1")
    names = cy.page.locator(".players .name")
    expect(names).to_have_count(2)
    expect(names).to_contain_text(["Ann", "Bo"])
    expect(cy.page.locator(".race-head .badge")).to_have_text("spectator")
    cy.page.locator(".player", has_text="Ann").locator("button.watch").click()
    expect(cy.page.locator(".watch-caption")).to_contain_text("Watching Ann")
    expect(cy.page.locator(".board .card")).to_have_count(52)

    # Ann moves: the spectator sees her board and her progress change.
    solution = solve(race_code(ann))
    foundation = next(i for i, m in enumerate(solution) if m["dst"] == "foundation")
    for move in solution[: foundation + 1]:
        key_move(ann, move)
    expect(cy.page.locator(".board .foundations .card")).to_have_count(1)
    expect(standing_cards(cy, "Ann")).to_have_text("1/52")
    key_move(bo, solution[0])
    expect(cy.page.locator(".player", has_text="Bo").locator(".score")).to_be_visible()
    assert cy.page.evaluate("() => window.boulanger.players.size") == 2
    cy.screenshot("spectator-phone")
    assert not {"move", "tap", "double_tap"} & set(cy.sent_types())

    # Someone who comes after the start cannot join, and is offered to watch.
    late = players("Late")
    late.page.goto(link)
    expect(late.page.locator("form.join")).to_contain_text("This race has started")
    expect(late.page.locator("#join-name")).to_have_count(0)
    late.page.click("form.join button:has-text('Watch instead')")
    expect(late.page.locator(".race-head .badge")).to_have_text("spectator")
    expect(late.page.locator(".players .name")).to_have_count(2)


PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def test_a_fair_race_hides_the_deal_and_the_boards_of_players_still_playing(
    players: Any,
) -> None:
    ann = players("Ann")
    bo = players("Bo", **PHONE)
    link = create_race(ann, code=None)  # a deal the server picks: secret until the start
    # No code in the lobby: the deal is dealt when the race starts.
    expect(ann.page.locator(".lobby .fair-play")).to_contain_text("nobody sees a board")
    expect(ann.page.locator(".race-head .code")).to_have_count(0)
    assert ann.page.evaluate("() => window.boulanger.race.code") is None
    assert ann.page.evaluate("() => window.boulanger.confirmed") is None
    bo.page.goto(link)
    expect(bo.page.locator("form.join")).to_contain_text("dealt when the race starts")
    bo.page.fill("#join-name", "Bo")
    bo.page.click("form.join button[type=submit]")
    bo.page.wait_for_selector(".lobby")
    cy = players("Cy", **PHONE)
    cy.page.goto(link + "?watch=1")
    expect(cy.page.locator(".players .name")).to_have_count(2)
    expect(cy.page.locator(".race-head .code")).to_have_count(0)
    ann.screenshot("fair-lobby-host")

    ann.page.click("button.start")
    wait_playing(ann)  # the board came with race_starting
    wait_playing(bo)
    code = race_code(ann)
    assert code.startswith("BK1-C4-")
    expect(cy.page.locator(".race-head .code")).to_have_text(code)
    # No watch button for players still playing: their boards are hidden.
    expect(cy.page.locator(".player .board-hidden")).to_have_count(2)
    expect(cy.page.locator("button.watch")).to_have_count(0)
    expect(cy.page.locator(".watch-caption")).to_contain_text("Boards are hidden")
    expect(cy.page.locator(".board .card")).to_have_count(0)
    cy.screenshot("fair-spectator-phone")

    # Bo resigns: his board may be watched now; Ann's, still playing, not.
    bo.page.click(".stats button.resign")
    bo.page.click(".stats button.resign")
    bo_row = cy.page.locator(".player").filter(has=cy.page.locator(".name", has_text="Bo"))
    ann_row = cy.page.locator(".player").filter(has=cy.page.locator(".name", has_text="Ann"))
    expect(bo_row.locator("button.watch")).to_be_visible()
    expect(ann_row.locator("button.watch")).to_have_count(0)
    expect(ann_row.locator(".board-hidden")).to_have_text("board hidden until they finish")
    bo_row.locator("button.watch").click()
    expect(cy.page.locator(".watch-caption")).to_contain_text("Watching Bo")
    expect(cy.page.locator(".board-area .board .card")).to_have_count(52)
    mine = bo.page.locator(".player").filter(has=bo.page.locator(".name", has_text="Ann"))
    expect(mine.locator(".board-hidden")).to_be_visible()  # finished Bo: still not Ann's
    expect(mine.locator("button.watch")).to_have_count(0)
    bo.screenshot("fair-finished-phone")
    assert "watch" not in bo.sent_types()


def _bot_wins(base: str, race_id: str, name: str, host_key: str | None = None) -> None:
    """A bot: joins, learns the deal at race_starting, solves it, plays it at full speed."""
    url = base.replace("http://", "ws://") + f"/ws/races/{race_id}"
    with connect(url) as ws:
        ws.send(json.dumps({"type": "join", "role": "player", "name": name, "host_key": host_key}))
        if host_key is not None:
            ws.send(json.dumps({"type": "start"}))
        while True:
            message = json.loads(ws.recv(timeout=30))
            if message["type"] == "race_starting":
                break
        line = solve(message["code"])
        time.sleep(max(0, message["start_at"] - message["now"]) / 1000 + 0.05)
        for number, move in enumerate(line):
            ws.send(json.dumps({"type": "move", "action_id": f"b{number}", **move}))
            while True:
                answer = json.loads(ws.recv(timeout=10))
                if answer.get("action_id") == f"b{number}":
                    assert answer["type"] == "ack", answer
                    break
        assert answer["status"] == "won"


def test_a_result_beyond_human_pace_shows_held(players: Any, review_server: ServerProcess) -> None:
    ann = players("Ann", base=review_server.base, **PHONE)
    link = create_race(ann)
    bot = threading.Thread(target=_bot_wins, args=(ann.base, link.rsplit("/", 1)[1], "Bot"))
    bot.start()
    expect(ann.page.locator(".players .name", has_text="Bot")).to_be_visible()
    ann.page.click("button.start")
    bot.join(60)
    assert not bot.is_alive()
    expect(ann.page.locator(".player.status-won .name")).to_have_text("Bot")
    ann.page.click(".stats button.resign")
    ann.page.click(".stats button.resign")
    row = ann.page.locator(".results-table tbody tr").filter(has_text="Bot")
    expect(row.locator(".tag.held")).to_have_text("under review")
    assert "under 100 ms" in (row.locator(".tag.held").get_attribute("title") or "")
    mine = ann.page.locator(".results-table tbody tr.me")
    expect(mine.locator(".tag.held")).to_have_count(0)  # too few actions to judge
    # At 390 px nothing of the table runs out of its cell or of the panel,
    # and a mark is not broken over two lines.
    overflow = ann.page.evaluate(
        """() => {
            const panel = document.querySelector('.results').getBoundingClientRect();
            const out = [];
            for (const el of document.querySelectorAll('.results-table td, .results-table .tag')) {
                const box = el.getBoundingClientRect();
                const cell = el.closest('td').getBoundingClientRect();
                if (el.scrollWidth > el.clientWidth + 1 || box.right > cell.right + 1
                    || box.right > panel.right) out.push(el.textContent);
                if (el.matches('.tag') && el.getClientRects().length > 1) out.push(el.textContent);
            }
            return out;
        }"""
    )
    assert overflow == [], overflow
    ann.screenshot("held-results-phone")


def test_a_held_daily_result_is_shown_to_its_player_off_the_leaderboard(
    players: Any, review_server: ServerProcess
) -> None:
    key = "k" + "".join(random.choice("abcdefghij") for _ in range(30))
    me = players("Held", base=review_server.base)
    me.context.add_init_script(f"localStorage.setItem('boulanger.player_key', '{key}')")
    body = json.dumps({"player_key": key, "name": "Bot"}).encode()
    request = urllib.request.Request(
        f"{review_server.base}/api/daily/{d.today(int(time.time() * 1000))}/attempts",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        attempt = json.load(answer)
    assert attempt["code"] is None and attempt["ranked"] is True
    _bot_wins(review_server.base, attempt["race_id"], "Bot", host_key=attempt["host_key"])
    me.page.goto(me.base + "/daily")
    expect(me.page.locator(".my-result")).to_contain_text("under review, off the leaderboard")
    expect(me.page.locator("p.held").first).to_contain_text("under 100 ms")
    # What happens next, without the review's limits.
    expect(me.page.locator("p.held").nth(1)).to_contain_text("A moderator will look at the game")
    expect(me.page.locator(".daily-board")).not_to_contain_text("Bot")
    expect(me.page.locator("#daily-share")).to_have_value(re.compile("under review"))
    me.screenshot("held-daily")


def test_hostile_display_names_are_text(players: Any) -> None:
    # Names have at most 24 characters: the name field keeps the first 24 of
    # HOSTILE, which is still markup; the guest then tries the whole of it.
    host = players(HOSTILE)
    guest = players("guest")
    link = create_race(host, OTHER_DEAL)
    guest.page.goto(link)
    field = guest.page.locator("#join-name")
    field.evaluate("(input) => input.removeAttribute('maxlength')")
    field.fill(HOSTILE)
    guest.page.click("form.join button[type=submit]")
    expect(guest.page.locator("form.join .problem")).to_contain_text("24")  # bad_name
    other = '<img src=x onerror="alert(2)">'[:24]
    guest.page.fill("#join-name", other)
    guest.page.click("form.join button[type=submit]")
    for p in (host, guest):
        names = p.page.locator(".players .name")
        expect(names).to_have_count(2)
        expect(names.nth(0)).to_have_text(HOSTILE[:24])
        expect(names.nth(1)).to_have_text(other)
        assert p.page.locator("main script, main img").count() == 0
    host.page.click("button.start")
    wait_playing(guest)
    assert not host.dialogs and not guest.dialogs
    host.screenshot("hostile-names")


def test_daily_challenge_ranked_game_and_live_leaderboard(players: Any) -> None:
    clear_of_midnight(120)  # the day's deal is read, then played: on one day
    watcher = players("Watcher")
    watcher.page.goto(watcher.base + "/daily")
    heading = watcher.page.locator("main h1")
    expect(heading).to_contain_text("Daily challenge")
    # Today's deal is secret until the day ends: no code on the page.
    expect(watcher.page.locator(".daily")).to_contain_text("secret until the day ends")
    expect(watcher.page.locator(".daily .code")).to_have_count(0)
    code = str(d.game_code(d.today(int(time.time() * 1000))))
    expect(watcher.page.locator("#conn")).to_have_attribute("data-state", "connected")

    dee = players("Dee")
    dee.page.goto(dee.base + "/")
    dee.page.click("header nav a:has-text('Daily')")
    expect(dee.page).to_have_url(dee.base + "/daily")
    dee.page.fill("#daily-name", "Dee")
    dee.page.click(".daily-play button[type=submit]")
    wait_playing(dee)  # a daily game starts by itself
    expect(dee.page.locator(".race-head .badge")).to_have_text("ranked")
    expect(dee.page.locator(".race-head .code")).to_have_count(0)
    play_line(dee, solve(code))
    expect(dee.page.locator(".results")).to_be_visible()
    shared = dee.page.input_value("#share-text")
    assert "daily" in shared and code not in shared and "/race/" not in shared
    dee.page.click(".results a:has-text('Daily leaderboard')")
    expect(dee.page.locator(".my-result")).to_contain_text("won")
    share = dee.page.input_value("#daily-share")
    assert "daily" in share and code not in share and "/race/" not in share  # not the deal
    expect(dee.page.locator(".daily-board tr.me")).to_contain_text("Dee")
    expect(dee.page.locator(".daily-play button")).to_have_text("Play it again (practice)")

    # The watcher's leaderboard got the result without a reload.
    # (Other tests of this server may have played today's deal too, faster.)
    dee_cell = watcher.page.locator(".daily-board tbody td", has_text=re.compile(r"^Dee$"))
    expect(dee_cell).to_be_visible()
    dee.screenshot("daily-after-win")

    # Days without a challenge, and things that are not days, say so.
    watcher.page.goto(watcher.base + "/daily/2025-06-01")
    expect(watcher.page.locator("main")).to_contain_text("no daily challenge for that day")
    watcher.page.goto(watcher.base + "/daily/yesterday")
    expect(watcher.page.locator("main")).to_contain_text("not a day")


FIRST_VISIT_LIMIT = 60 * 1024  # bytes on the wire, gzipped, headers included


class Wire:
    """What a page fetched over the network (not from its cache), from Chrome's own counts."""

    def __init__(self, p: Player) -> None:
        self.cdp = p.context.new_cdp_session(p.page)
        self.urls: dict[str, str] = {}
        self.network: set[str] = set()  # request ids answered by the server
        self.bytes: dict[str, int] = {}
        self.cached: set[str] = set()
        self.cdp.on("Network.requestServedFromCache", lambda e: self.cached.add(e["requestId"]))
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.responseReceived", self._received)
        self.cdp.on("Network.loadingFinished", self._finished)
        self.cdp.send("Network.enable")

    def _sent(self, event: dict[str, Any]) -> None:
        self.urls[event["requestId"]] = event["request"]["url"]

    def _received(self, event: dict[str, Any]) -> None:
        response = event["response"]
        if not (response.get("fromDiskCache") or response.get("fromMemoryCache")):
            self.network.add(event["requestId"])

    def _finished(self, event: dict[str, Any]) -> None:
        self.bytes[event["requestId"]] = int(event["encodedDataLength"])

    def fetched(self) -> dict[str, int]:
        """URL -> bytes on the wire, for what came over the network (websockets aside)."""
        ids = self.network - self.cached
        return {self.urls[i]: self.bytes.get(i, 0) for i in ids if i in self.urls}


def test_first_visit_is_small_and_the_next_is_cached(players: Any) -> None:
    p = players("Light")
    wire = Wire(p)
    p.page.goto(p.base + "/", wait_until="networkidle")
    expect(p.page.locator("main h1")).to_be_visible()
    first = wire.fetched()
    assert any(re.search(r"/static/v-[0-9a-f]+/app\.js$", url) for url in first), first
    total = sum(first.values())
    print(f"first visit: {total} bytes over {len(first)} requests")
    assert total <= FIRST_VISIT_LIMIT, first
    # The next visit fetches the page (a revalidation) and no static file.
    wire.network.clear()
    p.page.goto(p.base + "/rules", wait_until="networkidle")
    p.page.goto(p.base + "/", wait_until="networkidle")
    expect(p.page.locator("main h1")).to_be_visible()
    again = [url for url in wire.fetched() if "/static/" in url and not url.endswith("guide.js")]
    assert again == [], again


def _wire_board(game: Game) -> dict[str, Any]:
    board = game.board
    return {
        "columns": [[str(c) for c in col] for col in board.columns],
        "cells": [None if c is None else str(c) for c in board.cells],
        "foundations": {s.letter: board.foundations[s] for s in Suit},
    }


def test_client_rules_agree_with_the_engine(players: Any) -> None:
    """Every move from positions of random games: same verdict, same reason, same taps."""
    rng = random.Random(20261130)
    cases = []
    for deal, cells in ((1, 4), (860, 2), (31, 1), (617, 4)):
        game = Game(f"BK1-C{cells}-{_base32(deal)}")
        for _ in range(40):
            board = game.board
            places = [*range(8), *range(FIRST_CELL, FIRST_CELL + len(board.cells)), FOUNDATION]
            verdicts = []
            for src in places[:-1]:
                size = len(board.columns[src]) if src < FIRST_CELL else 1
                for dst in places:
                    for count in range(1, max(size, 1) + 1):
                        try:
                            board.check(src, dst, count)
                            why = None
                        except ValueError as error:
                            why = str(error)
                        verdicts.append([PLACE_NAMES[src], PLACE_NAMES[dst], count, why])
            cards = [str(c) for col in board.columns for c in col] + [
                str(c) for c in board.cells if c is not None
            ]
            taps = {
                card: [_move(game.tap_move(card)), _move(game.double_tap_move(card))]
                for card in cards
            }
            cases.append({"board": _wire_board(game), "verdicts": verdicts, "taps": taps})
            moves = game.legal_moves()
            if not moves:
                break
            game.play(rng.choice(moves))
    p = players("Rules")
    p.page.goto(p.base + "/")
    mismatches = p.page.evaluate(
        """async (cases) => {
            const R = await import('/static/rules.js');
            const bad = [];
            for (const c of cases) {
                for (const [src, dst, count, why] of c.verdicts) {
                    const mine = R.whyIllegal(c.board, src, dst, count);
                    if (mine !== why) bad.push({src, dst, count, why, mine});
                }
                for (const [card, [tap, double]] of Object.entries(c.taps)) {
                    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
                    if (!same(R.tapMove(c.board, card), tap)) bad.push({card, tap});
                    if (!same(R.doubleTapMove(c.board, card), double)) bad.push({card, double});
                }
            }
            return bad.slice(0, 10);
        }""",
        cases,
    )
    assert mismatches == []


def _move(move: Any) -> dict[str, Any] | None:
    return None if move is None else {"src": move.src, "dst": move.dst, "count": move.count}


def _base32(deal: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    return "".join(alphabet[(deal >> (5 * i)) & 31] for i in reversed(range(7)))
