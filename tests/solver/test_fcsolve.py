"""Cross-check against Freecell Solver: zero disagreements on verdicts both decided."""

from __future__ import annotations

import random

import pytest

from boulanger.engine import Board, Game, GameCode
from boulanger.solver import UNKNOWN, Verdict, fcsolve, solve, solve_board

pytestmark = pytest.mark.skipif(
    not fcsolve.available(),
    reason="fc-solve (Debian package freecell-solver-bin) is not installed",
)

# 15 deals at 4 cells and 15 at 2 cells, from a seeded draw plus known deals.
_RNG = random.Random(2024)
DEALS = [GameCode(d, 4) for d in [1, 10, 223, *_RNG.sample(range(1, 1_000_000), 12)]] + [
    GameCode(d, 2) for d in [29, 31, 58, *_RNG.sample(range(1, 1_000_000), 12)]
]


@pytest.mark.parametrize("code", DEALS, ids=str)
def test_deal_verdicts_agree_with_fc_solve(code: GameCode) -> None:
    ours = solve(code, budget=60).result
    theirs = fcsolve.verdict_for(code)
    assert UNKNOWN in (ours, theirs) or ours == theirs


def test_positions_in_play_agree_with_fc_solve() -> None:
    # Positions with cards in cells and on foundations, reached by random play.
    rng = random.Random(11)
    checked = 0
    for deal in range(1, 9):
        game = Game(GameCode(deal, 4 if deal % 2 else 2))
        for _ in range(rng.randrange(3, 12)):
            moves = game.legal_moves()
            if not moves:
                break
            game.play(rng.choice(moves))
        ours = solve_board(game.board, budget=60).result
        theirs = fcsolve.verdict(game.board)
        assert UNKNOWN in (ours, theirs) or ours == theirs, game.board.text()
        checked += 1
    assert checked == 8


def test_a_lost_position_is_lost_for_fc_solve_too() -> None:
    game = Game("BK1-C4-AAAAAAB")
    for move in ["col4>cell4", "col7>cell2", "col3>cell3", "col8>cell1"]:
        game.play(move)
    assert fcsolve.verdict(game.board) is Verdict.UNSOLVABLE


def test_the_board_text_for_fc_solve() -> None:
    text = fcsolve.board_text(Board.deal(GameCode(1, 2)))
    lines = text.splitlines()
    assert lines[0] == "Foundations: C-0 D-0 H-0 S-0"
    assert lines[1] == "Freecells: - -"
    assert lines[2] == "JD KD 2S 4C 3S 6D 6S"
    assert len(lines) == 10
