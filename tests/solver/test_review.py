"""The game review: the losing move it names is checked by the engine and a search of its own."""

from __future__ import annotations

from typing import Any

import pytest

from boulanger.engine import Board, Game, GameCode
from boulanger.solver import solve
from boulanger.solver.review import Finding, longest_detour, positions, review_record
from support.games import random_record


def _canonical(board: Board) -> tuple[object, ...]:
    # Which column or cell holds what does not change what can be won.
    return (
        tuple(sorted(c for c in board.cells if c is not None)),
        tuple(sorted(tuple(col) for col in board.columns)),
        tuple(board.foundations),
    )


def winnable(board: Board, limit: int = 300_000) -> bool:
    """An independent exhaustive search: every legal engine move, no foundation shortcut.

    Raises when the position has more than ``limit`` positions to look at.
    """
    seen = {_canonical(board)}
    stack = [board.copy()]
    while stack:
        here = stack.pop()
        if here.won:
            return True
        for step in here.legal_steps():
            child = here.copy()
            child.apply(*step)
            key = _canonical(child)
            if key not in seen:
                seen.add(key)
                stack.append(child)
        if len(seen) > limit:
            raise AssertionError("the independent search is too large for a test case")
    return False


# (code, seed) pairs whose positions after the losing move are small enough
# for the independent search; the cases hold undos and all three cell counts.
LOST_CASES = [
    ("BK1-C4-AAAAAAC", 2),
    ("BK1-C4-AAAAAAD", 3),
    ("BK1-C4-AAAAAAF", 5),
    ("BK1-C4-AAAAAAI", 8),
    ("BK1-C2-AAAAAAD", 3),
    ("BK1-C2-AAAAAAF", 5),
    ("BK1-C1-AAAAAAD", 3),
]


@pytest.mark.parametrize(("code", "seed"), LOST_CASES)
def test_the_losing_move_turns_a_winnable_position_into_a_lost_one(code: str, seed: int) -> None:
    record = random_record(code, seed)
    found = review_record(record, budget=30)
    if found.finding == Finding.NEVER_WINNABLE:
        # The deal itself has no win: the independent search agrees.
        assert not winnable(Board.deal(GameCode.parse(code)))
        return
    assert found.finding == Finding.LOSING_MOVE, found
    _, boards = positions(record)
    index = found.last_winnable
    assert index is not None and found.losing_action == index + 1
    action = record["actions"][index]
    assert found.losing_move == {k: v for k, v in action.items() if k != "t"}
    assert found.losing_t == action["t"]
    assert "undo" not in action  # an undo never loses a game
    # Before the move: the continuation wins, replayed by the engine.
    game = Game.from_record({"code": code, "actions": record["actions"][:index]})
    assert game.board == boards[index]
    for move in found.continuation:
        game.play(move)
    assert game.board.won
    # After it, and at every later position: no win, says a search of our own.
    for later in boards[index + 1 :]:
        assert not winnable(later)


def test_a_game_resigned_while_still_winnable_gets_a_line_from_its_end() -> None:
    code = "BK1-C4-AAAAAAB"
    line = solve(code, budget=30).actions
    record = {
        "code": code,
        "actions": [{**m, "t": 1000 * (i + 1)} for i, m in enumerate(line[:20])],
    }
    found = review_record(record, budget=30)
    assert found.finding == Finding.WINNABLE_AT_END
    assert found.last_winnable == 20 and found.losing_move is None
    game = Game.from_record(record)
    for move in found.continuation:
        game.play(move)
    assert game.board.won


def test_a_won_game_shows_par_and_its_longest_detour() -> None:
    code = "BK1-C4-AAAAAAB"
    line = solve(code, budget=30).actions
    # A move and its undo after the 31st action of the solver's line.
    game = Game(code)
    actions: list[dict[str, Any]] = []
    for i, move in enumerate(line):
        game.play(move)
        actions.append(move)
        if i == 30:
            game.play(line[31])
            game.undo()
            actions += [line[31], {"undo": True}]
    record = {"code": code, "actions": [{**a, "t": 500 * (i + 1)} for i, a in enumerate(actions)]}
    found = review_record(record, par=len(line))
    assert found.finding == Finding.WON and found.won
    assert found.actions == len(line) + 2 and found.par == len(line)
    assert found.detour is not None
    assert (found.detour.first, found.detour.last, found.detour.actions) == (32, 33, 2)
    # From the action before it (t 15500) to the undo (t 16500).
    assert found.detour.ms == 1000
    assert found.to_dict()["detour"] == {"from": 32, "to": 33, "actions": 2, "ms": 1000}


def test_the_longest_detour_spans_every_action_that_came_back() -> None:
    game = Game("BK1-C4-AAAAAAB")
    boards = [game.board.copy()]
    # col1 to a cell, col2 to a cell, both undone: four actions, back where it began.
    for action in ("col1>cell1", "col2>cell2", "undo", "undo", "col3>cell1"):
        if action == "undo":
            game.undo()
        else:
            game.play(action)
        boards.append(game.board.copy())
    detour = longest_detour(boards, [100, 200, 300, 400, 500])
    assert detour is not None and (detour.first, detour.last, detour.ms) == (1, 4, 400)
    assert longest_detour(boards[:2], [100]) is None


def test_out_of_budget_the_review_says_unknown() -> None:
    record = random_record("BK1-C4-AAAAAAB", 1)
    found = review_record(record, budget=0.0)
    assert found.finding == Finding.UNKNOWN
    assert found.losing_move is None and found.continuation == []
    found = review_record(record, budget=30, max_positions=10)
    assert found.finding == Finding.UNKNOWN


def test_a_deal_with_no_win_has_no_losing_move() -> None:
    # Deal 10 with one cell: the search proves it lost, and so does ours.
    code = "BK1-C1-AAAAAAK"
    record = random_record(code, 1, limit=5)
    found = review_record(record, budget=30)
    assert found.finding == Finding.NEVER_WINNABLE
    assert found.last_winnable is None and found.proved_lost > 0
    assert not winnable(Board.deal(GameCode.parse(code)))
