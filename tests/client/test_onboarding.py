"""Learning the game: the rules page, the first-game guide, practice that
starts at once, results of a game of one, leaving a race and coming back.

Practice uses the named deal BK1-C4-AAAAAAC (Microsoft deal 2, 4 cells).
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .test_browser import DEAL, create_race, join, wait_playing
from .test_bugs import PHONE, practise_deal

SAW_COUNTDOWN = """
new MutationObserver(() => {
    if (document.querySelector('.countdown, .start-overlay')) window.sawCountdown = true;
}).observe(document, {childList: true, subtree: true});
"""


def test_the_rules_page_in_plain_words_with_pictures(players: Any) -> None:
    for options in ({}, PHONE):
        p = players("Reader", **options)
        p.page.goto(p.base + "/")
        p.page.click("a:has-text('New here?')")
        expect(p.page).to_have_url(p.base + "/rules")
        expect(p.page.locator("main h1")).to_have_text("How to play Baker's Game")
        pictures = p.page.locator(".rules-page .scene[role=img]")
        assert pictures.count() >= 4
        assert "7♥ goes on 8♥" in (pictures.first.get_attribute("aria-label") or "")
        for words in ("same suit", "free cell", "doubled for each empty column", "Par is"):
            expect(p.page.locator(".rules-page")).to_contain_text(words)
        p.page.goto(p.base + "/rules")  # a page of its own, reloads included
        expect(p.page.locator("main h1")).to_have_text("How to play Baker's Game")
        p.context.close()


def open_practice(p: Any) -> None:
    """A practice game on the named deal, not waiting for its board (a guide may come first)."""
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.goto(f"{p.base}/practice?code={DEAL}")


def test_the_first_game_guide_teaches_and_can_be_skipped(players: Any) -> None:
    new = players("Newcomer", guide=True, **PHONE)
    open_practice(new)
    guide = new.page.locator(".guide")
    expect(guide).to_contain_text("1 of 5")
    # Read before the start: no board, no clock while the guide is open.
    expect(new.page.locator(".race-page")).to_have_attribute("data-phase", "lobby")
    assert "start" not in new.sent_types()
    expect(guide).to_contain_text("same suit")
    words = 0
    seen = []
    for _ in range(5):
        seen.append(guide.locator("h2").text_content())
        words += len((guide.locator(".guide-body").text_content() or "").split())
        guide.locator(".guide-next").click()
    assert seen == [
        "Build down in the same suit",
        "Free cells hold one card each",
        "Move a run at once",
        "Tap, double tap, drag",
        "Score, par and winning",
    ]
    assert words < 170  # read in well under a minute
    expect(guide).to_have_count(0)
    wait_playing(new)  # closed: the game starts, and its clock with it
    assert new.sent_types().count("start") == 1
    new.page.reload()
    wait_playing(new)
    expect(new.page.locator(".guide")).to_have_count(0)  # once is enough

    skipper = players("Skipper", guide=True)
    open_practice(skipper)
    skipper.page.click(".guide .guide-skip")
    expect(skipper.page.locator(".guide")).to_have_count(0)
    wait_playing(skipper)
    assert skipper.page.evaluate("() => localStorage.getItem('boulanger.guide')") == "done"


def test_the_guide_never_opens_in_a_daily(players: Any) -> None:
    new = players("Daily", guide=True)
    new.page.goto(new.base + "/daily")
    new.page.fill("#daily-name", "Daily")
    new.page.click(".daily-play button")
    wait_playing(new)  # the daily's clock runs: nothing to read in its way
    expect(new.page.locator(".guide")).to_have_count(0)


def test_practice_starts_at_once_and_ends_with_a_result(players: Any) -> None:
    p = players("Solo")
    p.context.add_init_script(SAW_COUNTDOWN)
    practise_deal(p)
    assert not p.page.evaluate("() => Boolean(window.sawCountdown)")
    p.page.click(".stats button.resign")
    p.page.click(".stats button.resign")
    results = p.page.locator(".results")
    expect(results.locator("h2")).to_have_text("Your result")
    expect(results).not_to_contain_text(re.compile(r"1st|of 1\b"))
    expect(results.locator(".rematch-button")).to_have_text("New deal")


def test_leaving_a_race_asks_and_the_home_page_leads_back(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    link = create_race(ann)
    join(bo, link)
    ann.page.click("button.start")
    wait_playing(ann)
    ann.page.click("header nav a:has-text('Daily')")
    assert ann.dialogs and "Leave the race?" in ann.dialogs[-1]
    expect(ann.page).to_have_url(link)  # dismissed: still racing
    ann.page.goto(ann.base + "/")
    back = ann.page.locator(".come-back")
    expect(back).to_contain_text("Your race is still on")
    back.locator("a").click()
    wait_playing(ann)
    expect(ann.page).to_have_url(link)
