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
    expect(review.locator(".losing-line")).to_have_text(re.compile(r"^\d+\.\ds .+ → .+"))
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
    review.locator("button", has_text="before it").click()
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
