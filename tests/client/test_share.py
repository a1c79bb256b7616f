"""Sharing a result in Chromium: one text (client/share.js) for a race's results and
the daily's page, spoiler-free (no deal, no move, a link to the site or the day's
page only); the system's share sheet where the browser has one, else a copy said
"Copied". At 390x844 (touch) and 1440x900, in English and Danish."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from boulanger.race import daily as d
from support.days import clear_of_midnight

from .conftest import SCREENSHOTS, Player
from .test_browser import play_line, solve, wait_playing

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1440, "height": 900}}

# The system's share sheet, stubbed: what it was handed is kept.
SHARE_SHEET = """
Object.defineProperty(Navigator.prototype, 'share', { configurable: true, value(data) {
  window.sharedPayloads = (window.sharedPayloads || []).concat([data]);
  return Promise.resolve();
} });
"""
NO_SHARE_SHEET = "delete Navigator.prototype.share;"

SQUARE = "[🟩🟨⬜]"


def shoot(p: Player, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    p.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    width = p.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= p.page.viewport_size["width"], f"{name} scrolls sideways"
    p.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def share_text(p: Player, result: dict[str, Any]) -> str:
    text: str = p.page.evaluate(
        "async (r) => (await import('/static/share.js')).shareText(r)", result
    )
    return text


def test_the_share_text_is_spoiler_free_with_the_day_and_a_link(players: Any) -> None:
    p = players("Pure", **DESKTOP)
    p.page.goto(p.base + "/")
    expect(p.page.locator("#account-link")).to_have_text("Sign in")
    daily = {
        "date": "2026-12-03",
        "won": True,
        "place": 2,
        "total": 7,
        "review": None,
        "time_ms": 221_300,
        "cards": 52,
        "moves": 96,
        "par": 88,
        "streak": 3,
        "origin": "https://example.org",
    }
    assert share_text(p, daily) == (
        "Baker's Game daily #337\n"
        "Won in 3:41.3 · 2nd of 7\n"
        "96 moves · par 88\n"
        f"{'🟩' * 13} 3 days in a row\n"
        "https://example.org/daily/2026-12-03"
    )
    # The first daily is day 1, as the server counts it (from 0) plus one.
    first = share_text(p, {**daily, "date": d.FIRST_DAY.isoformat()})
    assert first.startswith("Baker's Game daily #1\n")
    race = {
        **daily,
        "date": None,
        "won": False,
        "place": 3,
        "total": 4,
        "cards": 18,
        "moves": 40,
        "par": None,
        "streak": 0,
    }
    assert share_text(p, race) == (
        "Baker's Game race\n"
        "Not won: 18/52 cards · 3rd of 4\n"
        "40 moves\n"
        f"{'🟩' * 4}🟨{'⬜' * 8}\n"
        "https://example.org/"
    )
    # A result held for review has no place; a game of one none either.
    held = share_text(p, {**daily, "place": None, "review": "held"})
    assert held.splitlines()[1] == "Won in 3:41.3 · under review"
    alone = share_text(p, {**race, "place": 1, "total": 1})
    assert alone.splitlines()[1] == "Not won: 18/52 cards"
    # In Danish: the same lines, in its words.
    p.page.goto(p.base + "/?lang=da")
    expect(p.page.locator("html")).to_have_attribute("lang", "da")
    dansk = share_text(p, daily).splitlines()
    assert dansk[0] == "Bagerspillet, dagens udfordring #337"
    assert dansk[1] == "Vundet på 3:41,3 · 2. af 7"
    assert dansk[3].endswith("3 dage i træk")


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("size", "language", "sheet"),
    [("phone", "en", True), ("desktop", "en", False), ("phone", "da", False)],
)
def test_results_and_daily_share_one_text(
    players: Any, size: str, language: str, sheet: bool
) -> None:
    clear_of_midnight(120)  # the day's deal is read, then played: on one day
    options = PHONE if size == "phone" else DESKTOP
    p = players("Sharer", locale="da-DK" if language == "da" else "en-US", **options)
    p.context.add_init_script(SHARE_SHEET if sheet else NO_SHARE_SHEET)
    if not sheet:
        p.context.grant_permissions(["clipboard-read", "clipboard-write"])
    today = d.today(int(time.time() * 1000))
    code = str(d.game_code(today))
    p.page.goto(p.base + "/daily")
    p.page.fill("#daily-name", "Sharer")
    p.page.click(".daily-play button[type=submit]")
    wait_playing(p)
    play_line(p, solve(code))
    expect(p.page.locator(".results")).to_be_visible()
    # The day's date is one line on a phone too, above the game and on its page.
    assert p.page.locator(".race-head h1 .date").evaluate("(el) => el.getClientRects().length") == 1
    # The day's place is asked of the server: the text waits for it.
    of = "af" if language == "da" else "of"
    field = p.page.locator("#share-text")
    expect(field).to_have_value(re.compile(rf" {of} \d+\n"))
    text = field.input_value()
    lines = text.splitlines()
    assert lines[0].endswith(f"#{d.day_number(today) + 1}")
    assert re.fullmatch(f"{SQUARE}{{13}}( .*)?", lines[3]), lines[3]
    assert lines[4] == f"{p.base}/daily/{today.isoformat()}"
    assert code not in text and "/race/" not in text
    button = p.page.locator(".results .share-button")
    name = f"share-results-{language}-{size}"
    if sheet:
        button.click()
        p.page.wait_for_function("() => (window.sharedPayloads || []).length === 1")
        assert p.page.evaluate("() => window.sharedPayloads[0]") == {"text": text}
    else:
        button.click()
        expect(button).to_have_text("Kopieret" if language == "da" else "Copied")
        expect(p.page.locator("#toast")).to_be_visible()
        assert p.page.evaluate("() => navigator.clipboard.readText()") == text
    expect(p.page.locator(".cascade")).to_have_count(0)  # the win's cards have landed
    p.page.locator(".results .share").scroll_into_view_if_needed()
    shoot(p, name)

    # The daily's page shares the same text.
    p.page.click(".results a[href^='/daily/']")
    expect(p.page.locator(".my-result")).to_be_visible()
    expect(p.page.locator("#daily-share")).to_have_value(text)
    assert p.page.locator(".daily h1 .date").evaluate("(el) => el.getClientRects().length") == 1
    p.page.locator(".daily .share").scroll_into_view_if_needed()
    shoot(p, f"share-daily-{language}-{size}")
