"""Bugs a new player met, each pinned by a test that failed before its fix.

The deal is named: BK1-C4-AAAAAAC (Microsoft deal 2, 4 cells) has the ace of
spades on top of column 1 and is winnable; BK1-C4-AAAAAAK has no win.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from types import SimpleNamespace
from typing import Any

from playwright.sync_api import expect

from boulanger.race import daily as d
from support.days import clear_of_midnight

from .conftest import Player
from .test_browser import (
    create_race,
    join,
    key_move,
    play_line,
    race_code,
    race_id,
    settled,
    snapshot,
    solve,
    view,
    wait_playing,
)

DEAL = "BK1-C4-AAAAAAC"  # AS on top of column 1
NO_WIN = "BK1-C4-AAAAAAK"
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def practise_deal(p: Player, code: str = DEAL) -> None:
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.goto(f"{p.base}/practice?code={code}")
    wait_playing(p)


def no_sideways_scroll(p: Player) -> int:
    """How many pixels the page is wider than the window (0 when it fits)."""
    return p.page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def api_get(p: Player, path: str, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(p.base + path, headers=headers or {})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)


def test_a_replaced_tab_takes_no_input_and_resends_nothing(players: Any) -> None:
    ann = players("Ann")
    practise_deal(ann)
    solution = solve(DEAL)
    key_move(ann, solution[0])
    # The same browser opens the race in a second tab: the first is replaced (4409).
    other = SimpleNamespace(page=ann.context.new_page())
    other.page.goto(ann.page.url)
    wait_playing(other)
    expect(ann.page.locator(".notice")).to_contain_text("another tab")
    key_move(other, solution[1])
    # The old tab refuses input instead of queueing it.
    ann.page.keyboard.press("u")
    key_move(ann, solution[2], wait=False)
    assert ann.page.evaluate("() => window.boulanger.predictions.length") == 0
    assert ann.page.evaluate("() => window.boulangerSocket.pendingCount") == 0
    # "Play here" takes the game as the server has it: the other tab's move stays.
    ann.page.click(".notice button")
    ann.page.wait_for_function("() => window.boulangerSocket.joined")
    settled(ann)
    assert snapshot(ann)["players"][0]["actions"] == 2
    assert view(ann)["actions"] == 2
    assert view(ann)["board"] == other.page.evaluate("() => window.boulanger.view().board")


def play_daily(p: Player) -> None:
    p.page.goto(p.base + "/daily")
    p.page.fill("#daily-name", p.name)
    p.page.click(".daily-play button[type=submit]")
    wait_playing(p)
    # Today's code stays off the page: the schedule names it (no daily secret here).
    play_line(p, solve(str(d.game_code(d.today(int(time.time() * 1000))))))


def test_daily_result_is_a_result_and_follows_the_leaderboard(players: Any) -> None:
    clear_of_midnight(180)  # two players read the day's deal, then play it: on one day
    dee = players("Dee2")
    play_daily(dee)
    banner = dee.page.locator(".banner.status-won")
    expect(banner).to_contain_text("You won in")
    assert "place" not in (banner.text_content() or "")  # an attempt is a race of one
    dee.page.click(".results a:has-text('Daily leaderboard')")
    mine = dee.page.locator(".my-result")
    expect(mine).to_contain_text("won")
    total = int(re.search(r"of (\d+)", mine.text_content() or "").group(1))  # type: ignore[union-attr]

    eve = players("Eve2")
    play_daily(eve)
    key = eve.page.evaluate("() => localStorage.getItem('boulanger.player_key')")
    me = api_get(eve, "/api/daily", None)
    mine_eve = api_get(eve, f"/api/daily/{me['date']}/me", {"X-Player-Key": key})
    # Eve's results name her place of the day, as the server has it.
    expect(eve.page.locator(".results")).to_contain_text(f"#{mine_eve['rank']} of {total + 1}")
    # Dee's page follows the live table without a reload.
    expect(mine).to_contain_text(f"of {total + 1}")


def test_results_and_daily_fit_a_narrow_screen(players: Any) -> None:
    for width in (320, 390, 768):
        p = players(f"Narrow{width}", viewport={"width": width, "height": 800}, has_touch=True)
        practise_deal(p)
        p.page.click(".stats button.resign")
        p.page.click(".stats button.resign")
        expect(p.page.locator(".results")).to_be_visible()
        assert no_sideways_scroll(p) == 0, f"results at {width}px"
        p.page.goto(p.base + "/daily")
        expect(p.page.locator(".daily-board")).to_be_visible()
        p.page.wait_for_selector(".daily-board table, .daily-board p")
        assert no_sideways_scroll(p) == 0, f"daily at {width}px"
        p.context.close()


def test_double_click_on_a_card_that_went_up_leaves_no_frame(players: Any) -> None:
    p = players("Clicker")
    practise_deal(p)
    ace = p.page.locator('[data-card="AS"]')
    box = ace.bounding_box()
    p.page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + 10)
    settled(p)
    expect(p.page.locator('.foundations [data-card="AS"]')).to_have_count(1)
    focused = p.page.evaluate(
        """() => {
            const el = document.activeElement;
            return {column: Boolean(el && el.closest && el.closest('.column')),
                    outline: el ? getComputedStyle(el).outlineStyle : 'none'};
        }"""
    )
    assert not focused["column"], focused
    assert p.page.locator(".board .selected").count() == 0


def test_home_error_stays_home(players: Any) -> None:
    p = players("Toasty")
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.fill("#home-code", "not-a-code")
    p.page.click("button[name=create]")
    expect(p.page.locator("#toast")).to_be_visible()
    p.page.fill("#home-code", "")
    p.page.click("button[name=create]")
    p.page.wait_for_selector(".lobby")
    assert p.page.locator("#toast").is_hidden()


def test_phone_toasts_use_the_width(players: Any) -> None:
    p = players("Phone", **PHONE)
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", "")
    p.page.click("button[name=create]")
    toast = p.page.locator("#toast")
    expect(toast).to_be_visible()
    box = toast.bounding_box()
    assert box["width"] >= 0.9 * 390 - 24, box
    assert box["height"] < 80, box  # two lines at most


def test_empty_column_outline_stays_in_its_column(players: Any) -> None:
    p = players("Empty", **PHONE)
    practise_deal(p)
    p.page.evaluate(
        """() => {
            const r = window.boulanger;
            const board = JSON.parse(JSON.stringify(r.confirmed.board));
            board.columns[7] = [];
            r.confirmed = {...r.confirmed, board};
            r.renderNow();
        }"""
    )
    spill = p.page.evaluate(
        """() => {
            const col = document.querySelector('[data-place="col8"]');
            const cs = getComputedStyle(col, '::before');
            const border = cs.boxSizing === 'border-box' ? 0
                : parseFloat(cs.borderLeftWidth) + parseFloat(cs.borderRightWidth);
            return parseFloat(cs.width) + border - col.getBoundingClientRect().width;
        }"""
    )
    assert spill <= 0.5


def test_own_name_is_not_cut_by_a_long_status(players: Any) -> None:
    for options in ({}, PHONE):
        p = players("Cy", **options)
        practise_deal(p)
        p.page.evaluate(
            """() => {
                const r = window.boulanger;
                r.players.set(r.me, {...r.players.get(r.me), status: 'stuck'});
                r.renderNow();
            }"""
        )
        name = p.page.locator(".player.me .name").first
        expect(name).to_be_visible()
        assert name.evaluate("(el) => el.scrollWidth <= el.clientWidth"), options
        p.context.close()


def test_unknown_addresses_show_a_page(players: Any) -> None:
    p = players("Lost")
    p.page.goto(p.base + "/nowhere/at-all")
    expect(p.page.locator("main h1")).to_have_text("Nothing here")


def test_offline_standing_agrees_with_the_stats(players: Any) -> None:
    p = players("Offline")
    practise_deal(p)
    solution = solve(DEAL)
    first_up = next(i for i, m in enumerate(solution) if m["dst"] == "foundation")
    for move in solution[:first_up]:
        key_move(p, move)
    p.context.set_offline(True)
    p.page.evaluate("() => window.boulangerSocket.drop()")
    expect(p.page.locator("#conn")).to_have_attribute("data-state", "offline")
    key_move(p, solution[first_up], wait=False)
    cards = view(p)["foundation_cards"]
    assert cards >= 1
    expect(p.page.locator('[data-stat="foundations"] .value')).to_have_text(f"{cards}/52")
    expect(p.page.locator(".player.me .cards").first).to_have_text(f"{cards}/52")
    p.context.set_offline(False)
    settled(p)


def test_spectator_follows_the_rematch_as_spectator(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    link = create_race(ann)
    join(bo, link)
    ann.page.click("button.start")
    wait_playing(ann)
    cy = players("Cy")
    cy.page.goto(link + "?watch=1")
    expect(cy.page.locator(".race-head .badge")).to_have_text("spectator")
    for p in (ann, bo):
        wait_playing(p)
        p.page.click(".stats button.resign")
        p.page.click(".stats button.resign")
    expect(ann.page.locator(".results")).to_be_visible()
    ann.page.click(".rematch-button")
    cy.page.click(".notice.rematch a")
    expect(cy.page.locator(".race-head .badge")).to_have_text("spectator")
    assert cy.page.locator("form.join").count() == 0
    assert race_id(cy) != link.rsplit("/", 1)[1]


def test_an_unwinnable_code_warns_every_player(players: Any) -> None:
    ann = players("Ann")
    ann.page.goto(ann.base + "/")
    ann.page.fill("#home-name", ann.name)
    ann.page.fill("#home-code", NO_WIN)
    ann.page.click("button[name=create]")
    ann.page.wait_for_selector(".lobby")
    bo = players("Bo")
    join(bo, ann.page.input_value("#share-link"))
    for p in (ann, bo):
        expect(p.page.locator(".lobby")).to_contain_text("no win")


def test_a_hidden_deal_and_unknown_messages_are_taken_in_stride(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    link = create_race(ann)
    join(bo, link)
    # The lobby may not tell the deal (it comes with race_starting, with the game).
    bo.page.evaluate(
        """() => {
            const r = window.boulanger;
            r.race.code = null;
            r.handle({type: 'resync_done', seq: 999});  // a message type this client does not know
            window.boulangerSocket.receive({type: 'resync_done', ref: 'x'});
            r.renderNow();
        }"""
    )
    expect(bo.page.locator(".race-head")).to_contain_text("deal shown at the start")
    assert "null" not in (bo.page.locator(".race-head").text_content() or "")
    ann.page.click("button.start")
    wait_playing(bo)
    expect(bo.page.locator(".race-head .code")).to_have_text(race_code(ann))
    assert bo.page.evaluate("() => window.boulanger.race.code") is not None
