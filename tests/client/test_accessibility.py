"""Accessibility: axe-core finds no serious or critical violation on any
page, at a phone size and a desktop size; focus rings contrast 3:1 or more;
every card of a column can be read; moves and rivals' finishes are said.

axe-core comes with the axe-playwright-python package (installed by
``make test``); it runs inside the page, no browser is downloaded.
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from .conftest import Player
from .test_browser import create_race, join, settled, wait_playing
from .test_bugs import DEAL, PHONE, practise_deal

AXE = Axe()
SIZES = {"desktop": {}, "phone": PHONE}


def serious(p: Player, where: str) -> list[str]:
    """The serious and critical violations axe finds on the page as it is."""
    results = AXE.run(p.page)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [n["target"] for n in violation["nodes"]][:3]
            found.append(f"{where}: {violation['id']} ({violation['impact']}) {targets}")
    return found


def test_axe_finds_nothing_serious_on_any_page(players: Any) -> None:
    problems: list[str] = []
    for size, options in SIZES.items():
        ann = players(f"Ann-{size}", **options)
        bo = players(f"Bo-{size}", **options)
        for path in ("/", "/rules", "/daily", "/nowhere"):
            ann.page.goto(ann.base + path)
            ann.page.wait_for_selector("main h1")
            if path == "/daily":
                ann.page.wait_for_selector(".daily-board table, .daily-board p")
            problems += serious(ann, f"{size} {path}")
        link = create_race(ann)
        join(bo, link)
        problems += serious(ann, f"{size} lobby")
        ann.page.click("button.start")
        wait_playing(ann)
        problems += serious(ann, f"{size} race")
        for p in (ann, bo):
            wait_playing(p)
            p.page.click(".stats button.resign")
            p.page.click(".stats button.resign")
        expect(ann.page.locator(".results")).to_be_visible()
        problems += serious(ann, f"{size} results")
        ann.context.close()
        bo.context.close()
    assert problems == []


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""

    def luminance(colour: str) -> float:
        parts = [float(x) for x in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]]
        lin = [
            c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4
            for c in parts
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


FOCUS = """() => {
    const el = document.activeElement;
    const cs = getComputedStyle(el);
    return {outline: cs.outlineColor, style: cs.outlineStyle, width: parseFloat(cs.outlineWidth)};
}"""


def test_focus_rings_stand_out(players: Any) -> None:
    p = players("Keys")
    practise_deal(p)
    # On the paper: the Undo button's ring against the page.
    p.page.focus(".stats button.hint")
    p.page.keyboard.press("Shift+Tab")
    p.page.keyboard.press("Tab")
    ring = p.page.evaluate(FOCUS)
    paper = p.page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor")
    assert ring["style"] == "solid" and ring["width"] >= 2, ring
    assert contrast(ring["outline"], paper) >= 3, (ring, paper)
    # On the felt: a column's ring against the board's green.
    p.page.focus('[data-place="col1"]')
    p.page.keyboard.press("Tab")
    p.page.keyboard.press("Shift+Tab")
    ring = p.page.evaluate(FOCUS)
    assert contrast(ring["outline"], "rgb(29, 92, 63)") >= 3, ring  # --felt
    assert contrast(ring["outline"], "rgb(22, 74, 50)") >= 3, ring  # --felt-dark


def test_screen_readers_hear_every_card_and_the_moves(players: Any) -> None:
    p = players("Ears")
    practise_deal(p)
    label = p.page.get_attribute('[data-place="col1"]', "aria-label") or ""
    cards = p.page.evaluate("() => window.boulanger.view().board.columns[0]")
    assert len(cards) == 7
    assert "bottom to top" in label and label.endswith("ace of spades")
    for name in (
        "queen of diamonds",
        "4 of diamonds",
        "10 of diamonds",
        "7 of spades",
        "ace of hearts",
    ):
        assert name in label, label
    p.page.keyboard.press("1")
    p.page.keyboard.press("1")  # the same key twice: where a double tap sends it
    settled(p)
    expect(p.page.locator("#live")).to_contain_text("ace of spades to the foundation")
    assert DEAL in p.page.locator(".race-head .code").text_content()
