"""The home page invites play, and a quick race's queue is the same for everyone in it.

At 390x844 (touch) and 1440x900: one big Quick race button with the live
figures, today's daily with its countdown and the streak, a picture of the
table, the name asked once (its whole hint visible) and one free-cells
choice; in the queue, the same "N waiting · starts in N s" for every player,
and a Leave that frees the place. Screenshots go where test_screenshots
puts its own (docs/screenshots/ with BOULANGER_UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from support.servers import ServerProcess

from .conftest import SERVER_ENV, Player
from .test_accessibility import serious
from .test_screenshots import shoot

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1440, "height": 900}}
SIZES = {"phone": PHONE, "desktop": DESKTOP}
LOCALES = {"en": "en-US", "ru": "ru-RU"}
STARTS_IN = re.compile(r"^(\d+) waiting · starts in (\d+) s$")


@pytest.fixture(scope="module")
def queue_server() -> Iterator[ServerProcess]:
    """A server whose quick races wait 30 s after the second player (time to look)."""
    proc = ServerProcess("memory://", env={**SERVER_ENV, "BOULANGER_QUICK_RACE_WAIT_S": "30"})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def placeholder_fits(p: Player, selector: str) -> bool:
    """Whether the field's placeholder is drawn whole (its text within the box)."""
    return bool(
        p.page.evaluate(
            """(selector) => {
              const input = document.querySelector(selector);
              const style = getComputedStyle(input);
              const context = document.createElement('canvas').getContext('2d');
              context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
              const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
              return context.measureText(input.placeholder).width <= room;
            }""",
            selector,
        )
    )


@pytest.mark.parametrize("lang", LOCALES)
@pytest.mark.parametrize("size", SIZES)
def test_home_invites_play(players: Any, size: str, lang: str) -> None:
    p = players("Home", locale=LOCALES[lang], reduced_motion="reduce", **SIZES[size])
    p.page.goto(p.base + "/")
    quick = p.page.locator("button[name=quick]")
    expect(quick).to_be_visible()
    figures = quick.locator(".figures")
    expect(figures).to_have_attribute("data-waiting", re.compile(r"^\d+$"))
    expect(figures).to_have_attribute("data-racing", re.compile(r"^\d+$"))
    if lang == "en":
        expect(figures).to_have_text(re.compile(r"^\d+ waiting · \d+ racing now$"))
    box = quick.bounding_box()
    assert box is not None and box["height"] >= 60, box  # the big way in
    # Today's daily: its countdown moves, and the streak is said.
    daily = p.page.locator(".daily-card")
    expect(daily.locator(".daily-next")).to_have_text(re.compile(r"\d+:\d\d:\d\d|\d+:\d\d"))
    expect(daily.locator(".daily-streak")).to_have_attribute("data-streak", "0")
    expect(daily.locator(".daily-streak")).not_to_be_empty()
    expect(daily.locator("a.button.primary")).to_be_visible()
    before = daily.locator(".daily-next").inner_text()
    expect(daily.locator(".daily-next")).not_to_have_text(before, timeout=3000)
    # The table's picture, with cards drawn on it.
    picture = p.page.locator(".table-picture[role=img]")
    expect(picture).to_be_visible()
    assert picture.locator("svg text").count() >= 60
    # The name once, its hint whole; the free cells once.
    expect(p.page.locator("#home-name")).to_have_count(1)
    expect(p.page.locator("#home-name")).to_be_visible()
    assert placeholder_fits(p, "#home-name"), p.page.locator("#home-name").bounding_box()
    expect(p.page.locator("fieldset.cells-choice")).to_have_count(1)
    expect(p.page.locator("input[type=radio][name=cells]")).to_have_count(3)
    assert serious(p, f"home {lang} {size}") == []
    shoot(p, f"home-{lang}-{size}")


def quick_race(p: Player) -> str:
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.click("button[name=quick]")
    p.page.wait_for_selector(".lobby .quick-when")
    race_id: str = p.page.evaluate("() => window.boulanger.raceId")
    return race_id


def told(p: Player) -> tuple[int, int]:
    """The waiting count and the seconds left that the page shows."""
    match = STARTS_IN.match(p.page.locator(".quick-when").inner_text())
    assert match, p.page.locator(".quick-when").inner_text()
    return int(match[1]), int(match[2])


def test_the_queue_counts_down_the_same_for_everyone_and_leave_frees_a_place(
    players: Any, queue_server: ServerProcess
) -> None:
    base = queue_server.base
    ann = players("Ann", base=base, reduced_motion="reduce", **PHONE)
    bo = players("Bo", base=base, reduced_motion="reduce", **DESKTOP)
    race = quick_race(ann)
    expect(ann.page.locator(".quick-when")).to_have_text(
        re.compile(r"^1 waiting · it starts 30 s after a second player comes")
    )
    # Alone: something to do meanwhile.
    expect(ann.page.locator(".queue-side a")).to_be_visible()
    assert ann.page.locator(".queue-side a").get_attribute("target") == "_blank"
    with ann.context.expect_page() as opened:
        ann.page.click(".queue-side a")
    side = opened.value
    side.wait_for_selector(".race-page .board .card")  # a practice game, in its own tab
    side.close()
    expect(ann.page.locator(".quick-when")).to_contain_text("1 waiting")  # still queued
    assert serious(ann, "queue alone") == []
    shoot(ann, "quick-en-phone-alone")
    # Someone at home sees them waiting.
    watcher = players("Dee", base=base, **DESKTOP)
    watcher.page.goto(base + "/")
    expect(watcher.page.locator("button[name=quick] .figures")).to_have_attribute(
        "data-waiting", "1", timeout=15_000
    )
    assert quick_race(bo) == race
    for p in (ann, bo):
        expect(p.page.locator(".quick-when")).to_have_text(STARTS_IN)
        expect(p.page.locator(".quick-when")).to_contain_text("2 waiting")
    # The same start for both: the server's, not each page's guess.
    start_by = [p.page.evaluate("() => window.boulanger.queue.start_by") for p in (ann, bo)]
    assert start_by[0] == start_by[1], start_by
    (ann_waiting, ann_left), (bo_waiting, bo_left) = told(ann), told(bo)
    assert ann_waiting == bo_waiting == 2
    assert abs(ann_left - bo_left) <= 1 and 20 <= ann_left <= 30, (ann_left, bo_left)
    expect(ann.page.locator(".queue-side")).to_be_hidden()
    assert serious(bo, "queue of two") == []
    shoot(ann, "quick-en-phone")
    shoot(bo, "quick-en-desktop")
    # A third comes and leaves: out of the race, and the others' count drops.
    cy = players("Cy", base=base, locale="ru-RU", reduced_motion="reduce", **PHONE)
    assert quick_race(cy) == race
    for p in (ann, bo):
        expect(p.page.locator(".quick-when")).to_contain_text("3 waiting")
    expect(cy.page.locator(".quick-when")).to_contain_text("3 ждут")
    shoot(cy, "quick-ru-phone")
    cy.page.click(".queue button.leave")
    expect(cy.page.locator("button[name=quick]")).to_be_visible()
    for p in (ann, bo):
        expect(p.page.locator(".quick-when")).to_contain_text("2 waiting")
        expect(p.page.locator(".players .name", has_text="Cy")).to_have_count(0)
    assert told(ann)[1] - told(bo)[1] in (-1, 0, 1)
    # Bo leaves too: Ann waits for a second player again.
    bo.page.click(".queue button.leave")
    expect(ann.page.locator(".quick-when")).to_contain_text("1 waiting · it starts 30 s after")
    expect(ann.page.locator(".queue-side a")).to_be_visible()
    expect(watcher.page.locator("button[name=quick] .figures")).to_have_attribute(
        "data-waiting", "1", timeout=15_000
    )
