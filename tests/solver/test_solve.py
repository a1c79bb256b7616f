from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from boulanger.engine import Board, Game, GameCode
from boulanger.engine.moves import move_of
from boulanger.solver import UNKNOWN, UNSOLVABLE, WON, Solution, Verdict, solve, solve_board
from boulanger.solver.solve import solve_steps

# Verdicts checked with Freecell Solver (fc-solve -g bakers_game -to 01ABCDE).
# Searches here get a budget far above what they need, so that a busy
# machine cannot turn a verdict into "unknown".
BUDGET = 60.0
WINNABLE = [
    "BK1-C4-AAAAAAB",
    "BK1-C4-AAAAAAC",
    "BK1-C4-AAAAAAJ",
    "BK1-C2-AAAAAA5",
    "BK1-C2-AAAAABH",
]
UNWINNABLE = ["BK1-C4-AAAAAAK", "BK1-C2-AAAAAAB", "BK1-C1-AAAAAAB"]


@pytest.mark.parametrize("code", WINNABLE)
def test_solutions_replay_to_a_win(code: str, replays_to_win: Callable[..., bool]) -> None:
    solution = solve(code, budget=BUDGET)
    assert solution.result == WON
    assert solution.par == len(solution.actions)
    assert replays_to_win(code, solution.actions)
    # Every card reaches the foundation by its own action.
    assert sum(1 for a in solution.actions if a["dst"] == "foundation") == 52


@pytest.mark.parametrize("code", UNWINNABLE)
def test_unwinnable_deals_are_unsolvable(code: str) -> None:
    solution = solve(GameCode.parse(code), budget=BUDGET)
    assert solution.result == UNSOLVABLE
    assert solution.actions == []
    assert solution.par is None
    assert solution.positions > 0


def test_the_same_deal_gives_the_same_solution() -> None:
    first = solve("BK1-C4-AAAAAAB", budget=BUDGET)
    second = solve("BK1-C4-AAAAAAB", budget=BUDGET)
    assert (first.actions, first.positions) == (second.actions, second.positions)


def test_a_position_budget_gives_unknown() -> None:
    solution = solve("BK1-C4-AAAAAAB", max_positions=50)
    assert solution.result == UNKNOWN
    assert solution.positions == 50
    assert solution.actions == []
    assert solution.par is None


def test_a_time_budget_gives_unknown() -> None:
    # Deal 223 takes tens of thousands of positions to prove unwinnable.
    solution = solve("BK1-C4-AAAAAG7", budget=0.0)
    assert solution.result == UNKNOWN


def test_solve_board_starts_from_any_position() -> None:
    game = Game("BK1-C4-AAAAAAB")
    first = solve_board(game.board, budget=BUDGET)
    for action in first.actions[:30]:
        game.apply_action(action)
    before = game.board.copy()
    rest = solve_board(game.board, budget=BUDGET)
    assert game.board == before  # the board is not changed
    assert rest.result == WON
    for action in rest.actions:
        game.apply_action(action)
    assert game.board.won


def test_a_position_with_moves_to_the_foundation_pending() -> None:
    # Each suit in its own column, king at the bottom, ace on top.
    runs = [" ".join(f"{r}{s}" for r in "KQJT98765432A") for s in "SHDC"]
    text = "foundations: -- -- -- --\ncells: -- -- -- --\n"
    text += "".join(f"col{i}: {run}\n" for i, run in enumerate(runs, start=1))
    text += "col5:\ncol6:\ncol7:\ncol8:\n"
    solution = solve_board(Board.from_text(text), budget=BUDGET)
    assert solution.result == WON
    assert solution.actions[0] == {"src": "col1", "dst": "foundation", "count": 1}
    assert solution.par == 52


def test_a_won_board_needs_no_action() -> None:
    game = Game("BK1-C4-AAAAAAB")
    for action in solve(game.code, budget=BUDGET).actions:
        game.apply_action(action)
    solution = solve_board(game.board)
    assert solution == Solution(WON, [], solution.seconds, solution.positions)
    assert solution.par == 0


def test_to_dict() -> None:
    data = solve("BK1-C1-AAAAAAB", budget=BUDGET).to_dict()
    assert data["result"] == UNSOLVABLE
    assert data["par"] is None
    assert set(data) == {"result", "actions", "seconds", "positions", "par"}
    assert json.loads(json.dumps(data))["result"] == "unsolvable"


def test_verdicts_keep_their_wire_values() -> None:
    assert (WON, UNSOLVABLE, UNKNOWN) == (Verdict.WON, Verdict.UNSOLVABLE, Verdict.UNKNOWN)
    assert [verdict.value for verdict in Verdict] == ["won", "unsolvable", "unknown"]
    for verdict in Verdict:
        assert verdict == verdict.value and str(verdict) == f"{verdict}" == verdict.value
        assert json.dumps(verdict) == f'"{verdict.value}"'
    assert type(solve("BK1-C1-AAAAAAB", max_positions=1).result) is Verdict


def test_solve_steps_are_the_actions_by_index() -> None:
    board = Board.deal(GameCode.parse("BK1-C4-AAAAAAB"))
    solution, steps = solve_steps(board, BUDGET)
    assert solution.result is Verdict.WON
    assert [move_of(*step).to_dict() for step in steps] == solution.actions
    for step in steps:
        board.check(*step)
        board.apply(*step)
    assert board.won
    lost, none = solve_steps(Board.deal(GameCode.parse("BK1-C1-AAAAAAB")), BUDGET)
    assert (lost.result, none) == (Verdict.UNSOLVABLE, [])


def test_position_limits_on_a_small_search() -> None:
    # Deal 1 with 1 cell is lost after a few dozen positions.
    assert solve("BK1-C1-AAAAAAB", max_positions=1).result == UNKNOWN
    assert solve("BK1-C1-AAAAAAB", max_positions=10_000, budget=BUDGET).result == UNSOLVABLE
