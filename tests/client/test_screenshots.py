"""docs/screenshots/: the pages a player sees, at a phone size (390x844,
touch) and a desktop size (1440x900), taken from a real race.

Run with BOULANGER_UPDATE_SCREENSHOTS=1 to write them into docs/screenshots/
(the README shows two); otherwise they go to test-artifacts/screenshots/docs/
and the test checks that every page was taken at its size. Motion is reduced
so that no card is caught mid-flight. The lobby is a race on a deal the
server picks (none is shown before the start); the race is on a named deal,
BK1-C4-AAAAAAC.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .conftest import REPO, SCREENSHOTS, Player
from .test_browser import join, play_line, settled, solve, wait_playing
from .test_bugs import DEAL, no_sideways_scroll

SIZES = {
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
    "desktop": {"viewport": {"width": 1440, "height": 900}},
}
PAGES = ("home", "lobby", "race", "results", "daily", "rules")


def folder() -> Path:
    if os.environ.get("BOULANGER_UPDATE_SCREENSHOTS"):
        return REPO / "docs" / "screenshots"
    return SCREENSHOTS / "docs"


def shoot(p: Player, name: str) -> Path:
    assert no_sideways_scroll(p) == 0, name
    p.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    p.page.wait_for_function(
        "() => document.getAnimations().every((a) => a.playState !== 'running')"
    )
    path = folder() / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    p.page.screenshot(path=str(path))
    return path


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_screenshots_of_every_page(players: Any) -> None:
    solution = solve(DEAL)
    taken = []
    for size, options in SIZES.items():
        ann = players("Ann", reduced_motion="reduce", **options)
        bo = players("Bo", reduced_motion="reduce", **options)
        ann.page.goto(ann.base + "/")
        ann.page.fill("#home-name", "Ann")
        expect(ann.page.locator("main h1")).to_be_visible()
        taken.append(shoot(ann, f"{size}-home"))

        # The lobby of a race on a deal the server picks, as most are: no
        # code before the start.
        ann.page.click("button[name=create]")
        ann.page.wait_for_selector(".lobby")
        join(bo, ann.page.input_value("#share-link"))
        expect(ann.page.locator(".players .player")).to_have_count(2)
        expect(ann.page.locator(".race-head")).to_contain_text("deal shown at the start")
        taken.append(shoot(ann, f"{size}-lobby"))

        # The race itself on the named deal (a code the host typed shows from the lobby on).
        ann.page.goto(ann.base + "/")
        ann.page.fill("#home-code", DEAL)
        ann.page.click("button[name=create]")
        ann.page.wait_for_selector(".lobby")
        join(bo, ann.page.input_value("#share-link"))
        expect(ann.page.locator(".players .player")).to_have_count(2)
        ann.page.click("button.start")
        wait_playing(ann)
        wait_playing(bo)
        play_line(bo, solution[:8])
        play_line(ann, solution[:40])
        settled(bo)
        expect(bo.page.locator(".me-bar")).to_contain_text("behind Ann")
        taken.append(shoot(bo, f"{size}-race"))

        play_line(ann, solution[40:])
        bo.page.click(".stats button.resign")
        bo.page.click(".stats button.resign")
        expect(ann.page.locator(".results")).to_be_visible()
        ann.page.evaluate("() => window.scrollTo(0, 0)")
        taken.append(shoot(ann, f"{size}-results"))

        ann.page.goto(ann.base + "/daily")
        ann.page.wait_for_selector(".daily-board table, .daily-board p")
        taken.append(shoot(ann, f"{size}-daily"))

        ann.page.goto(ann.base + "/rules")
        expect(ann.page.locator("main h1")).to_have_text("How to play Baker's Game")
        taken.append(shoot(ann, f"{size}-rules"))
        ann.context.close()
        bo.context.close()
    assert [p.stem for p in taken] == [f"{s}-{page}" for s in SIZES for page in PAGES]
    for path in taken:
        size = SIZES[path.stem.split("-")[0]]["viewport"]
        assert png_size(path) == (size["width"], size["height"]), path
