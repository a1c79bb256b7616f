"""A board you can read, on a phone first: card sizes, strips, the top row,
plain-word notes next to the card, the lifted card, no sideways scroll.

The deal is named: BK1-C4-AAAAAAC (Microsoft deal 2, 4 cells).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from .conftest import Player
from .test_browser import card_locator, grab_point, settled, wait_playing
from .test_bugs import DEAL, PHONE, no_sideways_scroll, practise_deal


def test_phone_board_uses_the_screen(players: Any) -> None:
    p = players("Phone", **PHONE)
    practise_deal(p)
    board = p.page.locator(".board").bounding_box()
    assert board["width"] >= 380  # the whole width of the phone
    # Covered cards leave strips of at least 24 px (the height allows it here).
    offsets = p.page.evaluate(
        """() => [...document.querySelectorAll('.board .column')].map(
            (col) => parseFloat(getComputedStyle(col).getPropertyValue('--offset')))"""
    )
    assert min(offsets) >= 24, offsets
    # Cells and foundations do not look alike: captions, a divider, a frame.
    expect(p.page.locator(".board .caption")).to_have_text(["Free cells", "Foundations"])
    looks = p.page.evaluate(
        """() => {
            const cell = getComputedStyle(document.querySelector('.slot.cell'));
            const up = getComputedStyle(document.querySelector('.foundation-slot'));
            return {cell: cell.borderTopStyle, up: up.boxShadow};
        }"""
    )
    assert looks["cell"] == "dashed" and looks["up"] != "none", looks


def test_a_dragged_card_rides_above_the_finger(players: Any) -> None:
    p = players("Finger", **PHONE)
    practise_deal(p)
    card = card_locator(p, "col1")  # the ace of spades, free to move
    x, y = grab_point(card)
    cdp = p.context.new_cdp_session(p.page)
    touch = "Input.dispatchTouchEvent"
    cdp.send(touch, {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 5):
        cdp.send(
            touch, {"type": "touchMove", "touchPoints": [{"x": x + 4 * step, "y": y + 30 * step}]}
        )
    finger_y = y + 120
    box = p.page.locator('[data-card="AS"]').bounding_box()
    assert box["y"] + box["height"] * 0.4 < finger_y, (box, finger_y)  # in sight above the finger
    cdp.send(touch, {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_refusals_speak_plainly_next_to_the_card(players: Any) -> None:
    for options in ({}, PHONE):
        p = players("Plain", **options)
        practise_deal(p)
        # 5♠ (top of column 2) cannot go to its foundation: a tap says why, by the card.
        card = p.page.locator('[data-card="5S"]')
        x, y = grab_point(card)
        if options:
            p.page.touchscreen.tap(x, y)
        else:
            p.page.mouse.click(x, y)
        note = p.page.locator(".board-note")
        expect(note).to_be_visible()
        expect(note).to_contain_text("5♠ cannot go up yet: A♠ first")
        card_box = card.bounding_box()
        note_box = note.bounding_box()
        assert abs(note_box["y"] - (card_box["y"] + card_box["height"])) < 40, (note_box, card_box)
        assert "tap" not in p.sent_types()
        # A group too big for the free space says how many cards may move.
        p.page.evaluate(
            """async () => {
                const R = await import('/static/rules.js');
                const r = window.boulanger;
                r.showReason('col1>col2: group of 6 cards exceeds capacity 5', null, 'col1');
            }"""
        )
        expect(note).to_contain_text("You can move 5 cards at once now, not 6")
        p.context.close()


def test_card_names_in_every_message(players: Any) -> None:
    p = players("Names")
    p.page.goto(p.base + "/")
    texts = p.page.evaluate(
        """async () => {
            const R = await import('/static/rules.js');
            return [
                R.cardText('TC'), R.cardText('2D'),
                R.plainReason('col3>col5: 7H does not go on 8D: same suit, one rank higher required'),
                R.plainReason('7H cannot go to the foundation: it takes 3H next'),
                R.plainReason('cell2 already holds KS'),
            ];
        }"""
    )
    assert texts == [
        "10♣",
        "2♦",
        "7♥ does not go on 8♦: only on 8♥ (same suit, one higher)",
        "7♥ cannot go to its foundation yet: 3♥ goes up first",
        "Cell 2 already holds K♠",
    ]


def test_no_page_scrolls_sideways(players: Any) -> None:
    for width in (320, 390, 768):
        p: Player = players(f"W{width}", viewport={"width": width, "height": 780}, has_touch=True)
        for path in ("/", "/daily", "/rules", "/nowhere"):
            p.page.goto(p.base + path)
            p.page.wait_for_selector("main h1")
            assert no_sideways_scroll(p) == 0, (width, path)
        p.page.goto(p.base + "/")
        p.page.fill("#home-name", "Wide")
        p.page.click("button[name=create]")
        p.page.wait_for_selector(".lobby")
        assert no_sideways_scroll(p) == 0, (width, "lobby")
        p.page.goto(f"{p.base}/practice?code={DEAL}")
        wait_playing(p)
        settled(p)
        assert no_sideways_scroll(p) == 0, (width, "race")
        p.context.close()


EIGHT = """() => {
    const r = window.boulanger;
    const names = ['Ann', 'Bo', 'Cy', 'Dee', 'Eve', 'Fay', 'Gus'];
    names.forEach((name, i) => r.players.set(`p${i}`, {
        player_id: `p${i}`, name, host: false, foundation_cards: 40 - i * 5, score: 0, actions: 9,
        status: 'playing', elapsed_ms: 0, rank: null, time_ms: null}));
    r.race.leaderboard = [...names.map((_, i) => `p${i}`).slice(0, 3), r.me, ...names.map((_, i) => `p${i}`).slice(3)];
    r.race.practice = false;
    r.renderNow();
}"""


def test_eight_racers_on_a_phone(players: Any) -> None:
    p = players("Hal", **PHONE)
    practise_deal(p)
    p.page.evaluate(EIGHT)  # seven rivals (the page's view of them)
    bar = p.page.locator(".me-bar")
    expect(bar).to_contain_text("4th of 8")
    expect(bar).to_contain_text("40 behind Ann")
    expect(bar.locator(".runner")).to_have_count(8)
    box = bar.bounding_box()
    assert box["y"] < 200 and box["x"] >= 0 and box["x"] + box["width"] <= 390  # above the board
    # Every racer has a line of the track, one under the other, none off to the side.
    rows = p.page.locator(".players .player")
    expect(rows).to_have_count(8)
    for i in range(8):
        row = rows.nth(i).bounding_box()
        assert row["x"] >= 0 and row["x"] + row["width"] <= 390, row
    assert no_sideways_scroll(p) == 0
    # The bar stays in sight while the page scrolls down to the track.
    p.page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    p.page.wait_for_function("() => window.scrollY > 100")
    assert bar.bounding_box()["y"] >= -1 and bar.bounding_box()["y"] < 10
