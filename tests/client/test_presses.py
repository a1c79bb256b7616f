"""No press is lost while rivals move: the page updates its controls in place.

Six scripted rivals (the real WebSocket protocol) each put a card on its
foundation and take it back every 50 ms, so that every one of their actions
changes what the others see and is sent to them; meanwhile a player presses
Undo and a spectator presses Watch, each 20 times, with a 120 ms mouse press
and with a touch tap. Every press must take effect.

The deal is named: BK1-C4-AAAAAAB (deal 1), whose solution puts its fourth
move on a foundation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from support.racer import Racer
from support.racer_loop import RacerLoop

from .test_browser import DEAL, create_race, key_move, settled, solve, wait_playing

RIVALS = 6
PRESSES = 20
PRESS_MS = 120  # a normal mouse press: the button is held down this long
RIVAL_EVERY_S = 0.05


class Rivals(RacerLoop):
    """Racers in a thread of their own, moving a card up and back down until stopped."""

    def __init__(self, ws_base: str, race_id: str, solution: list[dict[str, Any]]) -> None:
        super().__init__(ws_base)
        self.race_id = race_id
        self.solution = solution
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Future[Any]] = []
        self.actions = 0

    def __enter__(self) -> Rivals:
        return self

    def join_all(self) -> None:
        for n in range(RIVALS):
            self.join(self.race_id, f"Rival{n + 1}")

    def play(self) -> None:
        """Each rival plays up to the move before the first card up, then up, back, up..."""
        first_up = next(i for i, m in enumerate(self.solution) if m["dst"] == "foundation")

        async def rival(racer: Racer) -> None:
            await racer.wait_event("race_starting")
            async with asyncio.timeout(30):  # the countdown: refused until the start
                while True:
                    move = self.solution[0]
                    answer = await racer.move(move["src"], move["dst"], move["count"])
                    if answer.get("code") != "not_started":
                        break
                    await asyncio.sleep(0.05)
            assert answer["type"] == "ack", answer
            for move in self.solution[1:first_up]:
                answer = await racer.move(move["src"], move["dst"], move["count"])
                assert answer["type"] == "ack", answer
            up = self.solution[first_up]
            while not self.stop.is_set():
                answer = await racer.move(up["src"], up["dst"], up["count"])
                assert answer["type"] == "ack", answer
                await asyncio.sleep(RIVAL_EVERY_S)
                answer = await racer.act("undo")
                assert answer["type"] == "ack", answer
                self.actions += 2
                await asyncio.sleep(RIVAL_EVERY_S)

        async def started() -> None:
            self.tasks = [asyncio.ensure_future(rival(r)) for r in self.racers]

        self.run(started())

    def __exit__(self, *exc: object) -> None:
        async def stopped() -> None:
            self.stop.set()
            results = await asyncio.gather(*self.tasks, return_exceptions=True)
            for racer in self.racers:
                if racer.ws is not None:
                    await racer.ws.close()
            failures = [r for r in results if isinstance(r, BaseException)]
            assert not failures, failures

        try:
            self.run(stopped())
        finally:
            self.stop_loop()


@pytest.fixture
def rivals(server: Any) -> Iterator[Any]:
    made: list[Rivals] = []

    def make(race_id: str) -> Rivals:
        ws_base = server.base.replace("http://", "ws://")
        made.append(Rivals(ws_base, race_id, solve(DEAL)).__enter__())
        return made[-1]

    yield make
    for r in made:
        r.__exit__(None, None, None)


def wait_sent(player: Any, kind: str, count: int, timeout_s: float = 5) -> bool:
    """Whether the page has sent ``count`` messages of ``kind`` within the bound."""
    for _ in range(int(timeout_s / 0.05)):
        if player.sent_types().count(kind) >= count:
            return True
        player.page.wait_for_timeout(50)  # lets Playwright deliver the frames it saw
    return player.sent_types().count(kind) >= count


def point_at(page: Any, selector: str) -> None:
    """Move the mouse to the middle of the element, scrolled into view.

    Where the element is now, not after Playwright's wait for it to stand
    still: the watched board beside it changes height with every rival move.
    """
    box = page.evaluate(
        """(selector) => {
            const el = document.querySelector(selector);
            el.scrollIntoView({ block: 'center' });
            const r = el.getBoundingClientRect();
            return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
        }""",
        selector,
    )
    page.mouse.move(box["x"], box["y"])


def press(page: Any, selector: str) -> None:
    """A mouse press of PRESS_MS on the element (down, held, up where it was)."""
    point_at(page, selector)
    page.mouse.down()
    page.wait_for_timeout(PRESS_MS)  # the press itself, not a wait for anything
    page.mouse.up()


def test_undo_and_watch_take_every_press_while_six_rivals_move(players: Any, rivals: Any) -> None:
    ann = players("Ann", has_touch=True)
    # At desktop size the standings stand beside the watched board, whose height
    # changes with the rival's moves: a press is then judged, not the layout.
    sue = players("Sue", has_touch=True)
    link = create_race(ann, DEAL, open_boards=True)
    race_id = link.rstrip("/").rsplit("/", 1)[-1]
    crowd = rivals(race_id)
    crowd.join_all()
    sue.page.goto(f"{link}?watch=1")
    expect(sue.page.locator(".players li")).to_have_count(RIVALS + 1)
    crowd.play()
    ann.page.click("button.start")
    wait_playing(ann)
    # The rivals are under way: their cards go up and down on Ann's track.
    ann.page.wait_for_function(
        "() => [...window.boulanger.players.values()].some((s) => s.foundation_cards === 1)"
    )

    first = solve(DEAL)[0]
    for n in range(PRESSES):
        key_move(ann, first)
        before = ann.sent_types().count("undo")
        if n % 2:
            ann.page.locator(".stats button.undo").tap()
        else:
            press(ann.page, ".stats button.undo")
        # The page sends its undo as it takes the click: a lost press sends none.
        assert wait_sent(ann, "undo", before + 1), f"press {n + 1} of Undo was lost"
        settled(ann)

    # Sue presses Watch on the rows in turn. The rivals' places change all the
    # time: a press counts if it watches the row's player, who may have moved
    # by a place before the press (a tap) or not at all (a mouse resting on the
    # list holds its order still).
    for n in range(PRESSES):
        row = n % RIVALS + 1
        button = f".players li:nth-child({row}) button.watch"
        before = sue.sent_types().count("watch")
        if n % 2:
            sue.page.locator(button).tap()
        else:
            point_at(sue.page, ".standings h2")
            target = sue.page.get_attribute(f".players li:nth-child({row})", "data-player")
            press(sue.page, button)
            sue.page.wait_for_function("(id) => window.boulanger.watching === id", arg=target)
        assert wait_sent(sue, "watch", before + 1), f"press {n + 1} of Watch was lost"
    assert crowd.actions > 100  # the rivals went on all along
