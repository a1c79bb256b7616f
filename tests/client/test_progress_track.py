"""A rival's moves that change nothing a page shows are not sent to it (docs/protocol.md,
"Who is sent a progress"): the page knows them from a lost event by ``prev_seq``, asks
for no resync, and its track shows each change as it comes.

The deal is named: BK1-C4-AAAAAAB (deal 1), whose solution begins with a move from
column to column, two to free cells, then a card to its foundation.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from .test_browser import DEAL, join, key_move, snapshot, solve, wait_playing


def test_a_rivals_moves_that_change_nothing_shown_ask_for_no_resync(players: Any) -> None:
    ann = players("Ann")
    bo = players("Bo")
    ann.page.goto(ann.base + "/")
    ann.page.fill("#home-name", "Ann")
    ann.page.fill("#home-code", DEAL)
    ann.page.click("button[name=create]")
    ann.page.wait_for_selector(".lobby")
    join(bo, ann.page.input_value("#share-link"))
    ann.page.click("button.start")
    for p in (ann, bo):
        wait_playing(p)
    bo_id = bo.page.evaluate("() => window.boulanger.me")
    cards = ann.page.locator(f".players li[data-player='{bo_id}'] .cards")

    solution = solve(DEAL)
    first_up = next(i for i, m in enumerate(solution) if m["dst"] == "foundation")
    assert first_up == 3
    for move in solution[:first_up]:  # Bo falls behind Ann (more actions), then nothing
        key_move(bo, move)
    expect(ann.page.locator(".players li").last).to_have_attribute("data-player", bo_id)
    key_move(bo, solution[first_up])  # a card to its foundation: Ann's track shows it
    expect(cards).to_have_text("1/52")
    expect(ann.page.locator(".players li").first).to_have_attribute("data-player", bo_id)

    # The race has had Bo's four moves; Ann's page was sent fewer, saw no gap, and
    # stands at the race's last event.
    race = snapshot(ann)
    ann.page.wait_for_function("(seq) => window.boulangerSocket.lastSeq === seq", arg=race["seq"])
    assert "resync" not in ann.sent_types()
