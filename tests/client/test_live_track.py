"""The live track, where the eye already is: every racer by name above the board,
names spread apart when racers are level, my lane marked; an overtake told once
("You passed Chloé", "Chloé passed you"), a rival's finish flashing the board's
edge with a sound; a mute toggle that is remembered; reduced motion honoured.

Rivals are scripted over the real WebSocket protocol. The deal is named:
BK1-C4-AAAAAAB (deal 1), whose solution puts its fourth move on a foundation.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from support.racer_loop import RacerLoop

from .conftest import REPO, SCREENSHOTS, Player
from .test_browser import DEAL, create_race, play_line, solve, wait_playing
from .test_bugs import PHONE

DESKTOP = {"viewport": {"width": 1440, "height": 900}}
RIVALS = ["Chloé", "Bartholomew", "Cy", "Dee", "Evangeline", "Fay"]


def shoot(p: Player, name: str) -> None:
    """A picture of the viewport; kept in docs/screenshots/ with BOULANGER_UPDATE_SCREENSHOTS=1."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    p.page.screenshot(path=str(path))
    if os.environ.get("BOULANGER_UPDATE_SCREENSHOTS"):  # as test_screenshots.py does
        shutil.copy(path, REPO / "docs" / "screenshots" / f"{name}.png")


def catalog(lang: str) -> dict[str, Any]:
    return dict(json.loads((REPO / "client" / "lang" / f"{lang}.json").read_text("utf-8")))


class Crowd(RacerLoop):
    """Scripted rivals on an event loop of their own; each plays the solution when told."""

    def __init__(self, ws_base: str, race_id: str, names: list[str]) -> None:
        super().__init__(ws_base)
        self.solution = solve(DEAL)
        self.played = dict.fromkeys(names, 0)
        self.named = {name: self.join(race_id, name) for name in names}

    def up_to(self, name: str, cards: int) -> None:
        """``name`` plays on until ``cards`` cards are on the foundations."""
        racer = self.named[name]

        async def played() -> None:
            await racer.until_started()
            up = sum(1 for m in self.solution[: self.played[name]] if m["dst"] == "foundation")
            while up < cards:
                move = self.solution[self.played[name]]
                answer = await racer.move(move["src"], move["dst"], move["count"])
                assert answer["type"] == "ack", answer
                self.played[name] += 1
                up += move["dst"] == "foundation"

        self.run(played())


@pytest.fixture
def crowds(server: Any) -> Iterator[Any]:
    made: list[Crowd] = []

    def make(race_id: str, names: list[str]) -> Crowd:
        made.append(Crowd(server.base.replace("http://", "ws://"), race_id, names))
        return made[-1]

    yield make
    for crowd in made:
        crowd.close()


def race_with(ann: Player, crowds: Any, names: list[str]) -> Crowd:
    link = create_race(ann, DEAL)
    crowd = crowds(link.rstrip("/").rsplit("/", 1)[-1], names)
    expect(ann.page.locator(".players li")).to_have_count(len(names) + 1)
    ann.page.click("button.start")
    wait_playing(ann)
    return crowd


def play_until(p: Player, cards: int, at: int) -> int:
    """Ann plays the solution from move ``at`` until ``cards`` are up; the next move's index."""
    solution = solve(DEAL)
    up, end = p.page.evaluate("() => window.boulanger.view().foundation_cards"), at
    while up < cards:
        up += solution[end]["dst"] == "foundation"
        end += 1
    play_line(p, solution[at:end])
    return end


def boxes(p: Player) -> list[dict[str, float]]:
    """Where the names on the track are, once they stand still."""
    p.page.wait_for_function(
        "() => [...document.querySelectorAll('.track .runner')].every((r) => !r.getAnimations().length)"
    )
    return [b for b in (r.bounding_box() for r in p.page.locator(".track .runner").all()) if b]


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def apart(p: Player, count: int) -> None:
    """The names on the track: ``count`` of them, inside the bar, no two overlapping."""
    placed = boxes(p)
    bar = p.page.locator(".me-bar").bounding_box()
    assert bar is not None and len(placed) == count, placed
    for i, a in enumerate(placed):
        assert a["x"] >= bar["x"] and a["x"] + a["width"] <= bar["x"] + bar["width"], (a, bar)
        for b in placed[i + 1 :]:
            assert not overlap(a, b), (a, b)


def moments(p: Player, kind: str, name: str) -> int:
    return int(
        p.page.evaluate(
            "([kind, name]) => window.boulangerMoments.filter((m) => m.kind === kind && m.name === name).length",
            [kind, name],
        )
    )


def sounds(p: Player, name: str) -> int:
    return int(p.page.evaluate("(name) => window.boulangerSounds[name] || 0", name))


@pytest.mark.parametrize(
    ("size", "lang"), [("phone", "en"), ("desktop", "en"), ("phone", "pl"), ("desktop", "ru")]
)
def test_the_track_names_everyone_and_makes_moments_of_a_race(
    players: Any, crowds: Any, size: str, lang: str
) -> None:
    options = PHONE if size == "phone" else DESKTOP
    words = catalog(lang)
    ann = players("Ann", locale=lang, **options)
    crowd = race_with(ann, crowds, RIVALS)
    page = ann.page
    height = options["viewport"]["height"]

    # Everyone by name on the track, level at the start, and no two names overlap.
    track = page.locator(".me-bar .track")
    expect(track.locator(".runner")).to_have_count(len(RIVALS) + 1)
    for name in ["Ann", *RIVALS]:
        expect(track.locator(".runner", has_text=name)).to_have_count(1)
    expect(track.locator(".runner.me")).to_have_text("Ann")
    expect(track.locator(".dot.me")).to_have_count(1)
    apart(ann, len(RIVALS) + 1)
    # The track is at the top of the screen, and the board is there to play under it.
    bar = page.locator(".me-bar").bounding_box()
    assert bar is not None and bar["y"] >= 0 and bar["y"] + bar["height"] <= height * 0.3, bar
    board = page.locator(".board").bounding_box()
    assert board is not None and board["y"] >= bar["y"] + bar["height"] - 1
    assert board["y"] < height * 0.45, board  # the top of the board, its columns, in sight
    if size == "phone":  # scrolled down to the board's last cards, the track stays on top
        page.evaluate("() => window.scrollBy(0, 300)")
        page.wait_for_function("() => window.scrollY > 100")
        bar = page.locator(".me-bar").bounding_box()
        assert bar is not None and -1 <= bar["y"] < 10, bar
        page.evaluate("() => window.scrollTo(0, 0)")

    # Chloé goes ahead by two; Ann passes her (told once), then Chloé passes Ann.
    crowd.up_to("Chloé", 2)
    expect(page.locator(".players li[data-player] .cards").first).to_have_text("2/52")
    at = play_until(ann, 3, 0)
    passed = words["moment.you_passed"].replace("{name}", "Chloé")
    expect(page.locator(".me-bar .moment")).to_have_text(passed)
    expect(page.locator("#live")).to_contain_text(passed)
    if size == "phone" and lang == "en":
        shoot(ann, "track-passed-phone-en")
    assert moments(ann, "passed", "Chloé") == 1
    assert sounds(ann, "pass") == 1
    crowd.up_to("Chloé", 6)
    passed_by = words["moment.passed_you"].replace("{name}", "Chloé")
    expect(page.locator(".me-bar .moment")).to_have_text(passed_by)
    expect(page.locator("#live")).to_contain_text(passed_by)
    assert sounds(ann, "passed") == 1
    # Ann passes her again, through level with her: told once more.
    at = play_until(ann, 7, at)
    expect(page.locator(".me-bar .moment")).to_have_text(passed)
    assert moments(ann, "passed", "Chloé") == 2
    assert moments(ann, "passed_by", "Chloé") == 1
    assert all(moments(ann, kind, n) == 0 for kind in ("passed", "passed_by") for n in RIVALS[1:])

    # Chloé finishes: the board's edge flashes, with a sound.
    crowd.up_to("Chloé", 52)
    expect(page.locator(".board-area")).to_have_attribute("data-edge", "flash")
    expect(track.locator(".runner.won", has_text="Chloé")).to_have_count(1)
    assert sounds(ann, "finish") == 1
    assert moments(ann, "finished", "Chloé") == 1
    apart(ann, len(RIVALS) + 1)  # a finisher's name too
    shoot(ann, f"track-{size}-{lang}")
    expect(page.locator(".board-area")).not_to_have_attribute("data-edge", "flash")

    # Muted near the board, remembered after a reload; the header's toggle agrees.
    mute = page.locator(".me-bar .mute")
    expect(mute).to_have_attribute("aria-pressed", "false")
    mute.click()
    expect(mute).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    page.reload()
    wait_playing(ann)
    expect(page.locator(".me-bar .mute")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Shift")  # a gesture: a sound might now be played
    crowd.up_to("Bartholomew", 52)
    expect(page.locator(".board-area")).to_have_attribute("data-edge", "flash")
    assert sounds(ann, "finish") == 0  # muted
    assert not ann.errors


def test_reduced_motion_marks_a_finish_still_and_starts_muted(players: Any, crowds: Any) -> None:
    ann = players("Ann", reduced_motion="reduce", **PHONE)
    crowd = race_with(ann, crowds, ["Chloé"])
    page = ann.page
    mute = page.locator(".me-bar .mute")
    # A player who asks for reduced motion starts with a quiet page, and may turn sound on.
    expect(mute).to_have_attribute("aria-pressed", "true")
    mute.tap()
    expect(mute).to_have_attribute("aria-pressed", "false")
    crowd.up_to("Chloé", 52)
    area = page.locator(".board-area")
    expect(area).to_have_attribute("data-edge", "still")
    # Marked, not flashing: no animation runs on the board's edge.
    assert page.evaluate("() => document.querySelector('.board').getAnimations().length") == 0
    assert sounds(ann, "finish") == 1
    expect(page.locator("#live")).to_contain_text("Chloé finished 1st")
    shoot(ann, "track-still-phone-en")
