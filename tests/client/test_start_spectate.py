"""A start that feels like one, and a spectator's screen of a fair race.

The start: "3 · 2 · 1 · Go!" in large over the page, the deal laid out face
down under it (the board does not move at Go), a beep on each count and a
higher one at Go (after a user gesture only), a buzz, the counts told to
screen readers, and the same count on every page at the same moment (the
server's clock). The spectator of a race with hidden boards: a large track
with each racer's time and gap to the leader, the news, and each finished
player's board as they finish, never the board of a player still playing.

The deal is named: BK1-C4-AAAAAAB (deal 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from support.racer import Racer, create_race
from support.racer_loop import RacerLoop

from .conftest import SCREENSHOTS
from .test_accessibility import serious
from .test_browser import DEAL, drag, join, solve, touch_drag
from .test_browser import create_race as create_in_page
from .test_bugs import PHONE, no_sideways_scroll

DESKTOP = {"viewport": {"width": 1440, "height": 900}}
COUNT_TONE = 587  # client/feel.js: the start's counts
GO_TONE = 1175  # and its Go

# Every change of the start overlay's count, of the board's class and of the
# live region, with the real clock (Date.now, shared by the pages of one
# machine), the board's box and whether the count is animated; the tones
# started and the buzzes asked for. Sound is on (the player's choice).
RECORDER = """
(() => {
  localStorage.setItem('boulanger.sound', 'on');
  window.__tones = [];
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...args) {
    window.__tones.push(this.frequency.value);
    return start.apply(this, args);
  };
  window.__buzz = [];
  navigator.vibrate = (pattern) => { window.__buzz.push(pattern); return true; };
  window.__counts = [];
  window.__live = [];
  const look = () => {
    const overlay = document.querySelector('.start-overlay');
    const board = document.querySelector('.board-area .board');
    const box = board && !board.closest('[hidden]') ? board.getBoundingClientRect() : null;
    const count = overlay ? overlay.querySelector('.start-count') : null;
    window.__counts.push({
      at: Date.now(),
      v: overlay ? overlay.dataset.count : null,
      text: count ? count.textContent : null,
      faceDown: Boolean(board && board.classList.contains('face-down')),
      box: box && box.width ? [box.x, box.y, box.width, box.height] : null,
      animated: count ? count.getAnimations().length : 0,
    });
    const live = document.getElementById('live');
    if (live && live.textContent !== window.__live[window.__live.length - 1]) window.__live.push(live.textContent);
  };
  new MutationObserver(look).observe(document, {
    subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ['data-count', 'class', 'data-phase'],
  });
})();
"""


def shown_at(records: list[dict[str, Any]], at: int) -> Any:
    """The overlay's count on a page at a moment (None: no overlay)."""
    value = None
    for r in records:
        if r["at"] > at:
            break
        value = r["v"]
    return value


def counts(records: list[dict[str, Any]]) -> list[str]:
    """The counts a page showed, in order, each once."""
    seen: list[str] = []
    for r in records:
        if r["v"] is not None and (not seen or seen[-1] != r["v"]):
            seen.append(r["v"])
    return seen


def keep(page: Any, name: str) -> Path:
    """A screenshot of what is on the screen now (test-artifacts/screenshots)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


@pytest.mark.parametrize(
    ("size", "player", "watcher", "language"),
    [
        ("phone", PHONE, {**DESKTOP, "reduced_motion": "reduce"}, "pl-PL"),
        ("desktop", DESKTOP, {**PHONE, "reduced_motion": "reduce"}, "da-DK"),
    ],
)
def test_the_start_counts_down_over_a_face_down_board_the_same_for_everyone(
    players: Any, size: str, player: dict[str, Any], watcher: dict[str, Any], language: str
) -> None:
    ann = players("Ann", **player)
    bo = players("Bo", **PHONE)
    sue = players("Sue", locale=language, **watcher)
    for p in (ann, sue):
        p.context.add_init_script(RECORDER)
    link = create_in_page(ann, DEAL)
    join(bo, link)
    sue.page.goto(f"{link}?watch=1")
    expect(sue.page.locator(".players .name")).to_have_count(2)

    ann.page.click("button.start")  # a user gesture: Ann's page may sound
    overlay = ann.page.locator(".start-overlay")
    expect(overlay).to_have_attribute("data-count", "2")
    # The deal lies face down where it will be played, under the count.
    expect(ann.page.locator(".board-area .board.face-down .card")).to_have_count(52)
    expect(ann.page.locator(".race-page")).to_have_attribute("data-phase", "countdown")
    expect(sue.page.locator(".start-overlay")).to_be_visible()
    keep(ann.page, f"start-{size}-en")
    keep(sue.page, f"start-{'desktop' if size == 'phone' else 'phone'}-{language[:2]}")

    # The overlay lets presses through to the board: checked while it is up
    # (the count is 2 for a second; Go stays less than one, too short a
    # window to aim at on a loaded machine): a point over a card of the
    # face-down deal (inert until Go) does not land on the overlay.
    through = ann.page.evaluate(
        """() => {
            const overlay = document.querySelector('.start-overlay');
            const card = document.querySelector('.board-area .board .column .card:last-child');
            const r = card.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return [Boolean(overlay), getComputedStyle(overlay).pointerEvents,
                    Boolean(hit && !hit.closest('.start-overlay'))];
        }"""
    )
    assert through == [True, "none", True], (
        f"the overlay takes presses meant for the board: {through}"
    )
    expect(ann.page.locator(".race-page")).to_have_attribute("data-phase", "running")
    expect(ann.page.locator(".board-area .board.face-down")).to_have_count(0)
    expect(overlay).to_have_count(0)
    expect(sue.page.locator(".start-overlay")).to_have_count(0)

    # The board's box once the race runs, before any move (see below).
    after, read_at = ann.page.evaluate(
        "() => { const r = document.querySelector('.board-area .board').getBoundingClientRect();"
        " return [[r.x, r.y, r.width, r.height], Date.now()]; }"
    )

    # Playable: a move by drag (mouse) or by finger.
    first = solve(DEAL)[0]
    (touch_drag if size == "phone" else drag)(ann, first)
    ann.page.wait_for_function("() => window.boulanger.confirmed.actions === 1")

    mine = ann.page.evaluate("() => window.__counts")
    theirs = sue.page.evaluate("() => window.__counts")
    # 3, 2, 1, Go, in order, on both pages.
    assert counts(mine) == ["3", "2", "1", "0"], counts(mine)
    assert "Go!" in {r["text"] for r in mine if r["v"] == "0"}, "Go! was never shown"
    assert counts(theirs)[-3:] == ["2", "1", "0"], counts(theirs)
    # At every moment either page changed, the two show the same count
    # (one step apart at most, while one of them is between two).
    for at in sorted({r["at"] for r in mine + theirs}):
        a, b = shown_at(mine, at), shown_at(theirs, at)
        if a is not None and b is not None:
            assert abs(int(a) - int(b)) <= 1, (at, a, b)
    go = [next(r["at"] for r in rs if r["v"] == "0") for rs in (mine, theirs)]
    assert abs(go[0] - go[1]) < 400, go

    # The board did not move: its box from the first face-down count to after Go.
    boxes = [r["box"] for r in mine if r["box"] and r["at"] <= read_at]
    assert boxes and any(r["faceDown"] for r in mine)
    for box in boxes:
        assert box == pytest.approx(after, abs=0.5), (box, after)

    # A beep for each count and a higher one at Go, with a buzz, where the
    # page was touched; the spectator, who touched nothing, hears nothing.
    tones = ann.page.evaluate("() => window.__tones")
    assert tones[:4] == [COUNT_TONE, COUNT_TONE, COUNT_TONE, GO_TONE], tones
    assert ann.page.evaluate("() => window.__buzz")[:4] == [30, 30, 30, 120]
    assert sue.page.evaluate("() => window.__tones") == []
    # Told to screen readers; under reduced motion the numbers come unanimated.
    live = ann.page.evaluate("() => window.__live")
    assert "The race starts in 3" in live and "2" in live and "1" in live and "Go!" in live, live
    assert any(r["animated"] for r in mine)
    assert not any(r["animated"] for r in theirs)


class Bots(RacerLoop):
    """Scripted racers on a loop of their own (the real WebSocket protocol)."""

    def __init__(self, ws_base: str) -> None:
        super().__init__(ws_base, timeout=60)

    def play(self, racer: Racer, moves: list[dict[str, Any]]) -> None:
        async def played() -> None:
            for move in moves:
                answer = await racer.move(move["src"], move["dst"], move["count"])
                assert answer["type"] == "ack", answer

        self.run(played())


@pytest.fixture
def bots(server: Any) -> Iterator[Bots]:
    made = Bots(server.base.replace("http://", "ws://"))
    yield made
    made.close()


@pytest.mark.parametrize(
    ("size", "options", "language"),
    [("phone", PHONE, "en-US"), ("desktop", DESKTOP, "en-US"), ("phone", PHONE, "ru-RU")],
)
def test_a_spectator_of_a_fair_race_sees_the_track_the_news_and_finished_boards(
    players: Any, bots: Bots, server: Any, size: str, options: dict[str, Any], language: str
) -> None:
    race = bots.run(create_race(server.base, code=DEAL))
    assert race["open_boards"] is False  # a fair race: boards hidden while played
    race_id = race["race_id"]
    ann = bots.join(race_id, "Ann", host_key=race["host_key"])
    bo = bots.join(race_id, "Bo")
    cy = bots.join(race_id, "Cy")
    sue = players("Sue", locale=language, **options)
    sue.page.goto(f"{server.base}/race/{race_id}?watch=1")
    expect(sue.page.locator(".players .name")).to_have_count(3)
    bots.run(ann.send(type="start"))
    page = sue.page
    # The spectator counts down with the players (told, not shown, to screen readers).
    expect(page.locator(".start-overlay")).to_be_visible()
    problems = serious(sue, "countdown")
    bots.run(ann.until_started())
    expect(page.locator(".race-page")).to_have_attribute("data-phase", "running")

    english = language.startswith("en")
    area = page.locator(".spectate-area")
    expect(area).to_be_visible()
    lanes = area.locator(".lane")
    expect(lanes).to_have_count(3)
    expect(area.locator(".lane .name")).to_have_text(["Ann", "Bo", "Cy"])
    clock = area.locator(".race-clock")
    expect(clock).to_have_text(re.compile(r"^0:0[1-9]$"))  # the race's clock runs
    assert page.locator(".board .card").count() == 0  # no board of a player still playing

    # Bo puts cards up: his lane moves, the others are behind him.
    solution = solve(DEAL)
    first_up = next(i for i, m in enumerate(solution) if m["dst"] == "foundation")
    lane = {
        p: area.locator(f'.lane[data-player="{r.player_id}"]')
        for p, r in (("ann", ann), ("bo", bo), ("cy", cy))
    }
    kept = lane["bo"].element_handle()
    bots.play(bo, solution[: first_up + 1])
    expect(lane["bo"].locator(".cards")).to_have_text("1/52")
    expect(area.locator(".lane").first).to_have_attribute("data-player", bo.player_id)
    if english:
        expect(lane["bo"].locator(".gap")).to_have_text("leader")
        expect(lane["ann"].locator(".gap")).to_have_text("1 card behind")
    # Patched in place: the same lane element, moved to the top.
    assert kept.evaluate("(el) => el.isConnected && el.closest('.lanes') !== null")
    assert page.locator(".board .card").count() == 0

    # Cy resigns: the news says so, and his board appears; no one else's.
    assert bots.run(cy.act("resign"))["type"] == "ack"
    feed = area.locator(".spectate-feed li")
    if english:
        expect(feed.first).to_contain_text("Cy resigned with 0/52")
    cy_board = area.locator(f'.finished-board[data-player="{cy.player_id}"]')
    expect(cy_board.locator(".board .card")).to_have_count(52)
    if english:
        expect(cy_board.locator("figcaption")).to_have_text("Cy resigned with 0/52")
    expect(page.locator(".board .card")).to_have_count(52)

    # Bo wins: his final board (every card up) joins Cy's; Ann's stays hidden.
    bots.play(bo, solution[first_up + 1 :])
    bo_board = area.locator(f'.finished-board[data-player="{bo.player_id}"]')
    expect(bo_board.locator(".board .foundations .card")).to_have_count(4)
    expect(area.locator(".finished-board")).to_have_count(2)
    expect(lane["bo"].locator(".time")).to_have_text(re.compile(r"^\d+:\d\d$"))
    if english:
        expect(feed.first).to_contain_text("Bo finished 1st in")
        expect(bo_board.locator("figcaption")).to_contain_text("Bo won in")
    expect(area.locator(f'.finished-board[data-player="{ann.player_id}"]')).to_have_count(0)
    # Only finished players' boards were asked for.
    asked = {m.get("player_id") for m in sue.sent if m.get("type") == "watch"}
    assert ann.player_id not in asked, asked
    assert {bo.player_id, cy.player_id} <= asked
    assert serious(sue, "spectator") + problems == []
    page.evaluate("() => window.scrollTo(0, 0)")
    keep(page, f"spectate-{size}-{language[:2]}")
    sue.screenshot(f"spectate-{size}-{language[:2]}-full")
    if size == "phone":  # no sideways scroll on a phone, the narrowest too
        for width in (390, 320):
            page.set_viewport_size({"width": width, "height": 844})
            assert no_sideways_scroll(sue) == 0, width

    # The race ends: the results take the main area.
    assert bots.run(ann.act("resign"))["type"] == "ack"
    expect(page.locator(".results")).to_be_visible()
    expect(area).to_be_hidden()
