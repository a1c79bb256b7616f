"""A race that feels like one: a track of every racer, an event feed, my
place and the gap to the leader, the board following the leader once I am
done, and a rematch that takes everyone along (each may decline).

The deal is named: BK1-C4-AAAAAAC (Microsoft deal 2, 4 cells).
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .test_browser import join, key_move, play_line, solve, wait_playing
from .test_bugs import DEAL, PHONE


def test_a_race_with_a_track_a_feed_and_a_rematch_for_everyone(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo", **PHONE)
    cy = players("Cy")
    ann.page.goto(ann.base + "/")
    ann.page.fill("#home-name", "Ann")
    ann.page.fill("#home-code", DEAL)
    ann.page.check("input[name=open_boards]")  # so that the others' boards may be followed
    ann.page.click("button[name=create]")
    ann.page.wait_for_selector(".lobby")
    link = ann.page.input_value("#share-link")
    join(bo, link)
    join(cy, link)
    expect(ann.page.locator(".feed")).to_contain_text("Cy joined")
    ann.page.click("button.start")
    for p in (ann, bo, cy):
        wait_playing(p)
    dan = players("Dan")  # a spectator who picks no one: the board follows the leader
    dan.page.goto(link + "?watch=1")

    solution = solve(DEAL)
    first_up = next(i for i, m in enumerate(solution) if m["dst"] == "foundation")
    for move in solution[: first_up + 1]:
        key_move(ann, move)
    # Bo's place and the gap to the leader, pinned above the board.
    bar = bo.page.locator(".me-bar")
    expect(bar).to_contain_text("of 3")
    expect(bar).to_contain_text("behind Ann")
    expect(ann.page.locator(".me-bar")).to_contain_text("1st of 3")
    expect(dan.page.locator(".watch-caption")).to_contain_text("Watching Ann")
    expect(dan.page.locator(".board .card")).to_have_count(52)

    play_line(ann, solution[first_up + 1 :])
    # Everyone is told that Ann won, in the feed and to screen readers.
    for p in (bo, cy):
        expect(p.page.locator(".feed li").first).to_contain_text("Ann finished 1st in")
        expect(p.page.locator("#live")).to_contain_text("Ann finished 1st")
    expect(bar).to_contain_text("Ann won in")
    # Ann, done, follows the best player still playing.
    expect(ann.page.locator(".watch-caption")).to_contain_text("Watching")

    cy.page.click(".stats button.resign")
    cy.page.click(".stats button.resign")
    expect(bo.page.locator(".feed")).to_contain_text("Cy resigned")
    bo.page.click(".stats button.resign")
    bo.page.click(".stats button.resign")
    expect(ann.page.locator(".results")).to_be_visible()

    # One click of the host takes everyone along; Cy says no.
    old = ann.page.url
    ann.page.click(".rematch-button")
    expect(ann.page.locator("button.start")).to_be_visible()
    assert ann.page.url != old
    expect(cy.page.locator(".notice.rematch")).to_contain_text("you join it in")
    cy.page.click(".notice.rematch button.decline")
    expect(bo.page.locator(".lobby")).to_be_visible(timeout=15_000)  # taken along
    expect(ann.page.locator(".players .name", has_text="Bo")).to_be_visible()
    expect(cy.page.locator(".results")).to_be_visible()  # stayed
    assert cy.page.url == old
    expect(ann.page.locator(".players .name")).to_have_count(2)


def quick(p: Any, cells: int) -> str:
    p.page.goto(p.base + "/")
    p.page.fill("#home-name", p.name)
    p.page.check(f"input[name=cells][value='{cells}']")
    p.page.click("button[name=quick]")
    p.page.wait_for_selector(".lobby .quick-when")
    return p.page.evaluate("() => window.boulanger.raceId")


def test_quick_race_puts_strangers_together_and_starts_by_itself(players: Any) -> None:
    ann = players("Ann", **PHONE)
    bo = players("Bo")
    race = quick(ann, 2)
    expect(ann.page.locator(".quick-when")).to_contain_text("after a second player comes")
    assert quick(bo, 2) == race  # the same race: the public queue
    expect(ann.page.locator(".players .name")).to_have_count(2)
    expect(bo.page.locator(".quick-when")).to_contain_text(re.compile(r"2 waiting · start"))
    assert ann.page.locator("button.start").count() == 0  # nobody hosts it
    for p in (ann, bo):
        wait_playing(p)  # the server started it (2 s after Bo, here)
    expect(ann.page.locator(".race-head .code")).to_contain_text("BK1-C2-")
    bo.page.click(".stats button.resign")
    bo.page.click(".stats button.resign")
    ann.page.click(".stats button.resign")
    ann.page.click(".stats button.resign")
    expect(ann.page.locator(".results button", has_text="Another quick race")).to_be_visible()


def test_a_follower_asks_for_no_board_of_a_fair_race(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    ann.page.goto(ann.base + "/")
    ann.page.fill("#home-name", "Ann")
    link = join_race_with_code(ann)
    join(bo, link)
    ann.page.click("button.start")
    wait_playing(ann)
    cy = players("Cy")
    cy.page.goto(link + "?watch=1")
    # Boards are hidden while their players play: the spectator keeps the
    # track and asks for no board, whoever leads.
    expect(cy.page.locator(".watch-caption")).to_contain_text("Boards are hidden")
    expect(cy.page.locator(".players .player")).to_have_count(2)
    expect(cy.page.locator(".player .board-hidden")).to_have_count(2)
    cy.page.wait_for_timeout(600)  # several ticks of the follower
    assert "watch" not in cy.sent_types()
    assert cy.page.locator("#toast").is_hidden()


def test_a_refused_watch_does_not_trouble_a_follower(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    ann.page.goto(ann.base + "/")
    ann.page.fill("#home-name", "Ann")
    link = join_race_with_code(ann, open_boards=True)
    join(bo, link)
    ann.page.click("button.start")
    wait_playing(ann)
    cy = players("Cy")
    cy.page.goto(link + "?watch=1")
    expect(cy.page.locator(".watch-caption")).to_contain_text("Watching")
    # A board refused all the same (boards_hidden): the spectator keeps the
    # track, with no error and no retry.
    cy.page.evaluate(
        "() => window.boulanger.handle({type: 'error', code: 'boards_hidden', reason: 'hidden'})"
    )
    expect(cy.page.locator(".watch-caption")).to_contain_text("Choose a player")
    assert cy.page.locator("#toast").is_hidden()
    watches = len([m for m in cy.sent if m.get("type") == "watch"])
    cy.page.wait_for_timeout(600)  # several ticks of the follower: it does not ask again
    assert len([m for m in cy.sent if m.get("type") == "watch"]) == watches
    expect(cy.page.locator(".players .player")).to_have_count(2)


def join_race_with_code(p: Any, open_boards: bool = False) -> str:
    p.page.fill("#home-code", DEAL)
    if open_boards:
        p.page.check("input[name=open_boards]")
    p.page.click("button[name=create]")
    p.page.wait_for_selector(".lobby")
    return p.page.input_value("#share-link")
