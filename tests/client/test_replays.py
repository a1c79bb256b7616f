"""The replay viewer and ghosts in Chromium, at phone and desktop sizes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from typing import Any

import pytest

from boulanger.solver import solve
from support.games import random_record
from support.racer import Racer, create_race
from support.servers import ServerProcess

from .conftest import Player
from .test_accessibility import serious

expect = pytest.importorskip("playwright.sync_api").expect

CODE = "BK1-C4-AAAAAAB"  # deal 1
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


async def _play(racer: Racer, actions: list[dict[str, Any]]) -> None:
    for action in actions:
        if "undo" in action:
            answer = await racer.act("undo")
        else:
            answer = await racer.move(action["src"], action["dst"], action["count"])
        assert answer["type"] == "ack", answer


async def _finished_race(server: ServerProcess) -> dict[str, str]:
    """A race of three, over: Ann wins, Bo loses the win on his first move, Cy resigns early."""
    created = await create_race(server.base, code=CODE)
    race = created["race_id"]
    racers = {}
    for i, name in enumerate(("Ann", "Bo", "Cy")):
        racer = await Racer(server.ws_base, race).connect()
        await racer.join(name, **({"host_key": created["host_key"]} if i == 0 else {}))
        racers[name] = racer
    await racers["Ann"].start()
    for racer in racers.values():
        await racer.until_started()
    line = solve(CODE, budget=30).actions
    lost = random_record(CODE, 1)["actions"]
    await _play(racers["Ann"], line)
    await _play(racers["Bo"], [{k: v for k, v in a.items() if k != "t"} for a in lost])
    await _play(racers["Cy"], line[:6])
    for name in ("Bo", "Cy"):
        assert (await racers[name].act("resign"))["type"] == "ack"
    await racers["Ann"].wait_event("race_over")
    ids = {name: racer.player_id for name, racer in racers.items()}
    for racer in racers.values():
        await racer.close()
    return {"race": race, **{k: str(v) for k, v in ids.items()}}


@pytest.fixture(scope="module")
def finished(server: ServerProcess) -> dict[str, str]:
    # In a thread of its own: Playwright's sync API holds this thread's loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _finished_race(server)).result()


def _moves(p: Player, index: int) -> int:
    text = p.page.locator(".replay-game .replay-stats").nth(index).inner_text()
    match = re.search(r"Moves\s+(\d+)", text)
    assert match, text
    return int(match.group(1))


@pytest.mark.parametrize(("size", "options"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_two_replays_side_by_side_play_step_and_scrub(
    players: Any, finished: dict[str, str], size: str, options: dict[str, Any]
) -> None:
    viewer = players(f"viewer-{size}", **options)
    race = finished["race"]
    viewer.page.goto(f"{viewer.base}/race/{race}/replay/{finished['Bo']}?with={finished['Ann']}")
    games = viewer.page.locator(".replay-game")
    expect(games).to_have_count(2)
    expect(games.nth(0).locator("h2")).to_have_text("Bo")
    expect(games.nth(1).locator("h2")).to_have_text("Ann")
    expect(games.nth(0).locator(".board .card")).to_have_count(52)
    expect(viewer.page.locator(".replay-line").first).to_have_text("The deal")
    # The review of Bo's game names the move that lost it and a way to win.
    review = viewer.page.locator(".review")
    expect(review.locator(".finding")).to_contain_text("lost the game")
    expect(review.locator(".losing-line")).to_have_text(
        re.compile(r"^move .+ from column \d to .+")
    )
    expect(review.locator(".continuation")).to_contain_text("→")
    # Cy can be added beside them.
    expect(viewer.page.locator(".replay-add a", has_text="Cy")).to_be_visible()
    if size == "desktop":
        boxes = [games.nth(i).bounding_box() for i in range(2)]
        assert boxes[0] and boxes[1] and boxes[0]["y"] == boxes[1]["y"]  # side by side
    viewer.screenshot(f"{size}-replay-start")

    # Step forward: the next action of either game; back again: the deal.
    viewer.page.click("button.step.forward")
    assert _moves(viewer, 0) + _moves(viewer, 1) == 1
    viewer.page.click("button.step.back")
    assert _moves(viewer, 0) + _moves(viewer, 1) == 0
    # The keys do the same once no control has them.
    viewer.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    viewer.page.keyboard.press("ArrowRight")
    assert _moves(viewer, 0) + _moves(viewer, 1) == 1
    viewer.page.keyboard.press("ArrowLeft")
    assert _moves(viewer, 0) + _moves(viewer, 1) == 0
    # The review jumps to the position before the losing move.
    review.locator("button", has_text="Show it on the board").click()
    expect(viewer.page.locator(".replay-line").first).to_have_text("The deal")
    # Played at 4x, to the end: Ann's game shows her win, Bo's his last move.
    viewer.page.click("button.speed >> text=4x")
    expect(viewer.page.locator("button.speed[aria-pressed=true]")).to_have_text("4x")
    viewer.page.click("button.play")
    expect(viewer.page.locator("button.play")).to_have_text("Play", timeout=30_000)
    expect(games.nth(1).locator(".replay-stats")).to_contain_text("won in")
    expect(games.nth(1).locator(".replay-stats")).to_contain_text("52/52")
    # The scrubber goes back to any time: at 0, the deal.
    viewer.page.locator(".scrubber").fill("0")
    expect(viewer.page.locator(".replay-line").nth(1)).to_have_text("The deal")
    # Nothing runs out of the page's width.
    width = viewer.page.evaluate("document.documentElement.scrollWidth")
    assert width <= options["viewport"]["width"]
    viewer.screenshot(f"{size}-replay-review")
    # Downloads: the record and its text lines.
    text = viewer.page.request.get(
        f"{viewer.base}/api/races/{race}/records/{finished['Bo']}/text"
    ).text()
    assert text.count("\n") >= 1 and "→" in text


def test_a_step_is_one_action_even_when_two_share_a_millisecond(players: Any) -> None:
    """Two actions may be accepted in the same millisecond: a step still makes one."""
    viewer = players("replay-steps", **DESKTOP)
    viewer.page.goto(f"{viewer.base}/")
    seen = viewer.page.evaluate(
        """async () => {
            const { ReplayPage } = await import('/static/replay.js');
            const page = new ReplayPage(document.createElement('main'), null, [], () => {});
            page.show = () => {};
            const frames = (times) => [{ t: 0 }, ...times.map((t) => ({ t }))];
            page.games = [{ frames: frames([5, 5, 9]) }, { frames: frames([5, 7]) }];
            page.end = 9;
            const at = () => [...page.shownCounts(page.cursor), page.now];
            const seen = [];
            for (let i = 0; i < 6; i += 1) { page.step(1); seen.push(at()); }
            page.step(-1); seen.push(at());
            page.seek(5); page.step(1); seen.push(at());
            page.seek(5); page.step(-1); seen.push(at());
            page.jumpTo(2); seen.push(at());
            page.jumpTo(0); seen.push(at());
            return seen;
        }"""
    )
    assert seen == [
        [1, 0, 5],
        [2, 0, 5],
        [2, 1, 5],
        [2, 2, 7],
        [3, 2, 9],
        [3, 2, 9],  # the end: no further
        [2, 2, 7],
        [2, 2, 7],  # at 5 ms all three actions of that time are shown; the next is at 7
        [2, 0, 5],
        [2, 0, 5],  # the first game's second frame, the second game not yet moved
        [0, 0, 0],
    ]


def test_four_replays_fit_a_desktop(players: Any, finished: dict[str, str]) -> None:
    viewer = players("viewer-four", **DESKTOP)
    race = finished["race"]
    viewer.page.goto(
        f"{viewer.base}/race/{race}/replay/{finished['Ann']}?with={finished['Bo']},{finished['Cy']}"
    )
    expect(viewer.page.locator(".replay-game")).to_have_count(3)
    expect(viewer.page.locator(".review .finding")).to_contain_text("Ann won in")
    expect(viewer.page.locator(".replay-add")).to_have_count(0)
    width = viewer.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280
    viewer.screenshot("desktop-replay-three")


# -- ghosts ------------------------------------------------------------------------------


def test_a_ghost_from_a_replay_races_beside_me(players: Any, finished: dict[str, str]) -> None:
    me = players("ghost-phone", **PHONE)
    race = finished["race"]
    me.page.goto(f"{me.base}/race/{race}/replay/{finished['Ann']}")
    expect(me.page.locator(".replay-game")).to_have_count(1)
    me.page.locator(".replay-game a.race-ghost").click()
    # A practice game on the ghost's deal, with Ann's ghost under my place.
    expect(me.page).to_have_url(re.compile(r"/race/[A-Za-z0-9_-]+$"))
    expect(me.page.locator(".race-head .code")).to_have_text(CODE)
    bar = me.page.locator(".ghost-bar")
    expect(bar).to_be_visible()
    expect(bar.locator(".ghost-name")).to_have_text("Ghost: Ann")
    expect(me.page.locator(".board .card")).to_have_count(52)
    me.screenshot("phone-ghost-start")
    # Ann's game follows its times: scripted, it was won within seconds.
    expect(bar).to_contain_text("Ann won in", timeout=30_000)
    expect(bar.locator(".ghost-cards")).to_have_text("52/52")
    assert me.page.evaluate("document.documentElement.scrollWidth") <= 390
    me.screenshot("phone-ghost-won")


def test_my_best_game_is_a_ghost_to_race_again(players: Any) -> None:
    me = players("best", **DESKTOP)
    me.page.goto(f"{me.base}/practice?code={CODE}")
    expect(me.page.locator(".board .card")).to_have_count(52)
    me.page.locator("button.resign").click()
    me.page.locator("button.resign").click()  # armed, then confirmed
    expect(me.page.locator("a.race-ghost")).to_have_text("Race your best")
    expect(me.page.locator("a.watch-replays")).to_be_visible()
    me.page.locator("a.race-ghost").click()
    expect(me.page.locator(".ghost-bar .ghost-name")).to_have_text("Ghost: Your best")
    expect(me.page.locator(".race-head .code")).to_have_text(CODE)
    expect(me.page.locator(".ghost-bar")).to_contain_text(
        "Your best stopped at 0/52", timeout=20_000
    )
    me.screenshot("desktop-ghost-best")


@pytest.fixture(scope="module")
def yesterday_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server whose SQLite file holds yesterday's daily winner (written before it starts)."""
    from datetime import timedelta

    from boulanger.broker import open_store
    from boulanger.race import daily as d
    from support.servers import ServerProcess

    from .conftest import SERVER_ENV

    path = tmp_path_factory.mktemp("yesterday") / "boulanger.db"
    yesterday = d.today(int(__import__("time").time() * 1000)) - timedelta(days=1)
    code = str(d.game_code(yesterday))
    line = solve(code, budget=60).actions
    record = {"code": code, "actions": [{**m, "t": 700 * (i + 1)} for i, m in enumerate(line)]}

    async def write() -> None:
        store = open_store(f"sqlite:///{path}")
        await store.broker.start()
        entry = d.DailyEntry("Zoé", "won", 700 * len(line), len(line), 0, 52)
        await store.daily.record(yesterday, "k" * 64, entry, record)
        await store.broker.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, write()).result()
    proc = ServerProcess(f"sqlite:///{path}", env=SERVER_ENV)
    proc.start()
    try:
        yield {"server": proc, "day": yesterday.isoformat(), "code": code}
    finally:
        proc.stop()


@pytest.mark.parametrize(("size", "options"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_the_daily_page_offers_yesterdays_winner_as_a_ghost(
    players: Any, yesterday_server: dict[str, Any], size: str, options: dict[str, Any]
) -> None:
    base = yesterday_server["server"].base
    me = players(f"daily-ghost-{size}", base=base, **options)
    me.page.goto(f"{base}/daily")
    offer = me.page.locator(".ghost-offer a.race-ghost")
    expect(offer).to_contain_text("Race yesterday's winner, Zoé")
    if size == "desktop":
        # Yesterday's page: every entry can be watched.
        me.page.goto(f"{base}/daily/{yesterday_server['day']}")
        expect(me.page.locator(".daily-board a", has_text="Watch")).to_have_count(1)
        # A past day is told apart from today: practice only, and a way to today.
        expect(me.page.locator(".daily-play button")).to_have_text("Play it again (practice)")
        expect(me.page.locator("a", has_text="today →")).to_be_visible()
        me.page.locator(".daily-board a", has_text="Watch").click()
        expect(me.page.locator(".replay-game h2")).to_have_text("Zoé")
        expect(me.page.locator(".review .finding")).to_contain_text("Zoé won in")
        me.page.goto(f"{base}/daily")
    me.screenshot(f"{size}-daily-ghost-offer")
    offer.click()
    expect(me.page.locator(".ghost-bar .ghost-name")).to_have_text("Ghost: Zoé")
    expect(me.page.locator(".race-head .code")).to_have_text(yesterday_server["code"])
    # At 0.7 s an action, Zoé's first card reaches a foundation within seconds.
    expect(me.page.locator(".ghost-bar .ghost-cards")).not_to_have_text("0/52", timeout=30_000)
    me.screenshot(f"{size}-ghost-daily")


# -- replays for people: one swipe apart, the key move on the board -----------------------

WIDE = {"viewport": {"width": 1440, "height": 900}}
# Bo's first move lost the game (support.games.random_record of deal 1, seed 1): 9♣
# from column 2 to the first free cell (a); from the position before it the
# solver's win starts with 8♣ from column 7 onto the 9♣ in column 2.
PLAYED = {"src": "col2", "dst": "cell1", "card": "9C"}
BETTER = {"src": "col7", "dst": "col2", "card": "8C", "on": "9C"}
KEY_WORDS = {
    "en-US": ("move 9♣ from column 2 to the free cell a", "move 8♣ from column 7 to column 2"),
    "pl-PL": ("ruch 9♣ z kolumny 2 na wolne pole a", "ruch 8♣ z kolumny 7 na kolumnę 2"),
}


def _inside(point: tuple[float, float], box: dict[str, float] | None) -> bool:
    assert box is not None
    x, y = point
    return box["x"] <= x <= box["x"] + box["width"] and box["y"] <= y <= box["y"] + box["height"]


def _centre(box: dict[str, float] | None) -> tuple[float, float]:
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _in_viewport(p: Player, box: dict[str, float] | None) -> bool:
    """Whether a box lies wholly inside the window (to_be_visible() does not check)."""
    assert box is not None
    size = p.page.viewport_size
    assert size is not None
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= size["width"]
        and box["y"] + box["height"] <= size["height"]
    )


def _swipe(p: Player, x0: float, x1: float, y: float) -> None:
    """A finger's swipe from x0 to x1 along y (touch events, as a phone sends them)."""
    cdp = p.context.new_cdp_session(p.page)
    touch = "Input.dispatchTouchEvent"
    cdp.send(touch, {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]})
    for step in range(1, 9):
        x = x0 + (x1 - x0) * step / 8
        cdp.send(touch, {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    cdp.send(touch, {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_a_phone_compares_two_games_one_swipe_apart(players: Any, finished: dict[str, str]) -> None:
    viewer = players("swipe-phone", **PHONE)
    viewer.page.goto(
        f"{viewer.base}/race/{finished['race']}/replay/{finished['Bo']}?with={finished['Ann']}"
    )
    boards = viewer.page.locator(".replay-game .board")
    expect(boards.nth(1).locator(".card")).to_have_count(52)
    tabs = viewer.page.locator(".replay-tab")
    expect(tabs).to_have_count(2)
    expect(tabs.nth(0)).to_have_text("Bo 0/52")
    expect(tabs.nth(0)).to_have_attribute("aria-pressed", "true")
    # Bo's board is whole on the screen, the first in sight; Ann's edge shows beside it.
    first = boards.nth(0).bounding_box()
    second = boards.nth(1).bounding_box()
    assert first and second
    assert first["x"] >= 0 and first["x"] + first["width"] <= 390, first
    assert first["y"] + first["height"] <= 844, first
    assert second["x"] < 390 < second["x"] + second["width"], second
    assert viewer.page.evaluate("document.documentElement.scrollWidth") <= 390
    viewer.screenshot("replay-phone-compare")
    # One swipe to the left on Bo's board: Ann's board is whole in sight, her tab pressed.
    y = first["y"] + first["height"] * 0.7
    _swipe(viewer, 330, 40, y)
    viewer.page.wait_for_function(
        """() => {
            const box = document.querySelectorAll('.replay-game .board')[1].getBoundingClientRect();
            return box.left >= 0 && box.right <= innerWidth;
        }"""
    )
    expect(tabs.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(tabs.nth(0)).to_have_attribute("aria-pressed", "false")
    # A step forward moves a card on either board; the tabs count the cards.
    viewer.page.locator("button.play").click()
    expect(tabs.nth(1)).to_have_text("Ann 52/52", timeout=30_000)
    viewer.screenshot("replay-phone-swiped")
    # A tap on Bo's tab brings his game back.
    tabs.nth(0).tap()
    viewer.page.wait_for_function(
        """() => {
            const box = document.querySelectorAll('.replay-game .board')[0].getBoundingClientRect();
            return box.left >= 0 && box.right <= innerWidth;
        }"""
    )
    expect(tabs.nth(0)).to_have_attribute("aria-pressed", "true")
    # No sideways scroll of the page at the narrowest phones nor at a tablet's width.
    for width in (320, 768):
        viewer.page.set_viewport_size({"width": width, "height": 844})
        viewer.page.wait_for_function(
            "(width) => document.documentElement.scrollWidth <= width", arg=width
        )


@pytest.mark.parametrize(
    ("size", "options", "locale"),
    [
        ("phone", PHONE, "en-US"),
        ("desktop", WIDE, "en-US"),
        ("phone", PHONE, "pl-PL"),
        ("desktop", WIDE, "pl-PL"),
    ],
)
def test_the_key_move_is_shown_on_the_board_in_its_labels(
    players: Any, finished: dict[str, str], size: str, options: dict[str, Any], locale: str
) -> None:
    viewer = players(f"key-{size}-{locale}", locale=locale, **options)
    viewer.page.goto(
        f"{viewer.base}/race/{finished['race']}/replay/{finished['Bo']}?with={finished['Ann']}"
    )
    review = viewer.page.locator(".review")
    played, better = KEY_WORDS[locale]
    # In words, with the board's labels: columns 1-8, free cells a-d.
    expect(review.locator(".losing-line")).to_have_text(played)
    expect(review.locator(".key-better strong")).to_have_text(better)
    cell = "cell a" if locale == "en-US" else "wolne pole a"
    expect(review.locator(".continuation")).to_contain_text(cell)
    expect(review.locator(".continuation")).not_to_contain_text(re.compile(r"cell \d|pole \d"))
    # At the end first, so that the jump is seen.
    game = viewer.page.locator(".replay-game").nth(0)
    line = game.locator(".replay-line")
    deal = line.inner_text()
    scrubber = viewer.page.locator(".scrubber")
    scrubber.fill(scrubber.get_attribute("max") or "0")
    expect(line).not_to_have_text(deal)
    review.locator("button.show-key").click()
    # The replay is at the position before the losing move: Bo's deal, no move made.
    expect(line).to_have_text(deal)
    arrows = game.locator(".move-arrow")
    expect(arrows).to_have_count(2)
    for kind, move in (("played", PLAYED), ("better", BETTER)):
        arrow = game.locator(f".move-arrow.{kind}")
        expect(arrow).to_have_attribute("data-src", move["src"])
        expect(arrow).to_have_attribute("data-dst", move["dst"])
        source = game.locator(f'.board [data-place="{move["src"]}"] [data-card="{move["card"]}"]')
        target = (
            game.locator(f'.board [data-card="{move["on"]}"]')
            if "on" in move
            else game.locator(f'.board [data-place="{move["dst"]}"]')
        )
        # The arrow starts on the card moved and ends on where it goes (after
        # any card still sliding back has settled).
        start = arrow.locator(".arrow-start")
        end = arrow.locator(".arrow-end")
        viewer.page.wait_for_function(
            """([kind, src, dst]) => {
                const arrow = document.querySelector(`.replay-game .move-arrow.${kind}`);
                const inside = (p, el) => {
                    const b = p.getBoundingClientRect(); const r = el.getBoundingClientRect();
                    const x = b.left + b.width / 2; const y = b.top + b.height / 2;
                    return x >= r.left && x <= r.right && y >= r.top && y <= r.bottom;
                };
                return arrow && inside(arrow.querySelector('.arrow-start'), document.querySelector(src))
                    && inside(arrow.querySelector('.arrow-end'), document.querySelector(dst));
            }""",
            arg=[
                kind,
                f'.replay-game [data-place="{move["src"]}"] [data-card="{move["card"]}"]',
                f'.replay-game [data-card="{move["on"]}"]'
                if "on" in move
                else f'.replay-game [data-place="{move["dst"]}"]',
            ],
        )
        assert _inside(_centre(start.bounding_box()), source.bounding_box())
        assert _inside(_centre(end.bounding_box()), target.bounding_box())
        # In sight: the page brought the board to the eye.
        assert _in_viewport(viewer, start.bounding_box())
        assert _in_viewport(viewer, end.bounding_box())
    if size == "desktop":
        # Both games in one screen's width, side by side.
        boards = [b.bounding_box() for b in viewer.page.locator(".replay-game .board").all()]
        assert len(boards) == 2 and boards[0] and boards[1]
        assert boards[0]["y"] == boards[1]["y"], boards
        assert boards[1]["x"] + boards[1]["width"] <= 1440, boards
    lang = locale[:2]
    viewer.screenshot(f"replay-key-{size}-{lang}")
    # Nothing serious for axe with the arrows drawn (they are pictures of the words).
    assert serious(viewer, f"replay {size} {lang}") == []
    # A step away takes the arrows off; back at the position, they are drawn again.
    viewer.page.locator("button.step.forward").click()
    expect(game.locator(".move-arrow")).to_have_count(0)
    viewer.page.locator("button.step.back").click()
    expect(game.locator(".move-arrow")).to_have_count(2)


def _practice_at(p: Player) -> None:
    p.page.goto(f"{p.base}/practice?code={CODE}")
    p.page.wait_for_selector(".race-page[data-phase=running] .board .card")
    expect(p.page.locator(".board .card")).to_have_count(52)


@pytest.mark.parametrize(
    ("size", "options"),
    [("desktop", {"viewport": {"width": 1440, "height": 800}}), ("phone", PHONE)],
)
def test_an_illegal_drops_reason_is_inside_the_window(
    players: Any, size: str, options: dict[str, Any]
) -> None:
    """6♥ (on top of column 4, deal 1) dropped on 6♠ (column 1): the reason is in sight."""
    p = players(f"drop-{size}", **options)
    _practice_at(p)
    card = p.page.locator('[data-place="col4"] [data-card="6H"]')
    box = card.bounding_box()
    size_now = p.page.viewport_size
    assert box and size_now
    if size == "desktop":
        # The board is fitted to the window's height: the card is at its bottom edge.
        assert box["y"] + box["height"] > size_now["height"] - 40, box
    # Let go over the 6♠, the last card of column 1, low on the board as the 6♥ is.
    target = p.page.locator('[data-place="col1"] [data-card="6S"]').bounding_box()
    assert target
    x, y = box["x"] + box["width"] / 2, box["y"] + 20
    tx, ty = target["x"] + target["width"] / 2, target["y"] + target["height"] / 2
    if size == "phone":
        # A finger: the card rides above it, so the finger goes that much lower.
        lift = box["height"] * 0.55
        cdp = p.context.new_cdp_session(p.page)
        touch = "Input.dispatchTouchEvent"
        cdp.send(touch, {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for step in range(1, 9):
            point = {"x": x + (tx - x) * step / 8, "y": y + (ty + lift - y) * step / 8}
            cdp.send(touch, {"type": "touchMove", "touchPoints": [point]})
        cdp.send(touch, {"type": "touchEnd", "touchPoints": []})
        cdp.detach()
    else:
        p.page.mouse.move(x, y)
        p.page.mouse.down()
        p.page.mouse.move((x + tx) / 2, (y + ty) / 2, steps=4)
        p.page.mouse.move(tx, ty, steps=4)
        p.page.mouse.up()
    note = p.page.locator(".board-note")
    expect(note).to_have_text("6♥ does not go on 6♠: only on 7♥ (same suit, one higher)")
    expect(note).to_be_visible()
    note_box = note.bounding_box()
    assert _in_viewport(p, note_box), (note_box, size_now)
    # Next to the card once it is back home: right above or under it, across its middle.
    assert note_box
    p.page.wait_for_function(
        """([x, y]) => {
            const box = document.querySelector('[data-card="6H"]').getBoundingClientRect();
            return Math.abs(box.x - x) < 1 && Math.abs(box.y - y) < 1;
        }""",
        arg=[box["x"], box["y"]],
    )
    card_box = card.bounding_box()
    assert card_box
    gap = min(
        abs(note_box["y"] + note_box["height"] - card_box["y"]),
        abs(note_box["y"] - (card_box["y"] + card_box["height"])),
    )
    assert gap < 40, (note_box, card_box)
    assert (
        note_box["x"] <= card_box["x"] + card_box["width"] / 2 <= note_box["x"] + note_box["width"]
    )
    p.screenshot(f"replay-drop-reason-{size}")


def test_the_foundations_key_reads_as_a_key_cap(players: Any) -> None:
    """On a desktop the foundations' key (f) is a key cap after their caption."""
    p = players("key-cap", viewport={"width": 1440, "height": 900})
    _practice_at(p)
    # No lone letter over the foundation slots.
    expect(p.page.locator(".foundations .key")).to_have_count(0)
    caption = p.page.locator(".foundations-caption")
    expect(caption).to_have_text("Foundations")
    shown = p.page.evaluate(
        """() => {
            const after = getComputedStyle(document.querySelector('.foundations-caption'), '::after');
            return {content: after.content, border: after.borderTopStyle};
        }"""
    )
    assert shown == {"content": '"f"', "border": "solid"}, shown
