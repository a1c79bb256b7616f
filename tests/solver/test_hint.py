from __future__ import annotations

from boulanger.engine import Game, Move
from boulanger.solver import UNKNOWN, UNSOLVABLE, WON, Verdict, hint, solve_board
from boulanger.solver.hint import forget

# Deal 1 with 4 cells is winnable; these four moves fill the cells and lose it
# (fc-solve agrees: see test_fcsolve.py).
LOSING_MOVES = ["col4>cell4", "col7>cell2", "col3>cell3", "col8>cell1"]


def test_hint_moves_keep_the_game_winnable() -> None:
    game = Game("BK1-C4-AAAAAAB")
    for _ in range(15):
        forget()  # search afresh each time
        answer = hint(game, budget=60)
        assert answer.result == WON
        assert isinstance(answer.move, Move)
        game.play(answer.move)
        assert solve_board(game.board, budget=60).result == WON


def test_hint_after_a_mistake_says_undo() -> None:
    game = Game("BK1-C4-AAAAAAB")
    for move in LOSING_MOVES:
        game.play(move)
    before = game.board.copy()
    answer = hint(game, budget=60)
    assert answer.result == UNSOLVABLE
    assert answer.move is None
    assert game.board == before
    game.undo()
    assert hint(game, budget=60).result == WON


def test_hint_on_an_unwinnable_deal() -> None:
    assert hint(Game("BK1-C1-AAAAAAB"), budget=60).result == UNSOLVABLE


def test_hint_out_of_budget() -> None:
    answer = hint(Game("BK1-C4-AAAAAG7"), budget=0.0)
    assert answer.result == UNKNOWN
    assert answer.move is None


def test_following_the_hints_wins() -> None:
    # Fresh searches from neighbouring positions may disagree; the hints
    # follow one winning line, so they never go round in circles.
    game = Game("BK1-C4-AAAAAAB")
    while not game.board.won:
        answer = hint(game, budget=60)
        assert answer.result == WON
        assert answer.move is not None
        game.play(answer.move)
        assert game.actions <= 200
    answer = hint(game, budget=60)
    assert answer.result == WON
    assert answer.move is None
    assert answer.to_dict()["move"] is None


def test_hints_after_leaving_the_line() -> None:
    game = Game("BK1-C2-AAAAAA5")
    first = hint(game, budget=60)
    assert first.move is not None
    game.play(first.move)
    game.undo()
    assert hint(game, budget=60).move == first.move
    other = next(m for m in game.legal_moves() if m != first.move)
    game.play(other)
    answer = hint(game, budget=60)
    assert answer.result in (WON, UNSOLVABLE)
    if answer.move is not None:
        game.play(answer.move)


def test_a_hint_is_the_first_move_of_the_solution_and_a_verdict() -> None:
    forget()
    game = Game("BK1-C2-AAAAABH")
    answer = hint(game, budget=60)
    assert type(answer.result) is Verdict and answer.result == "won"
    assert answer.move is Move.from_dict(solve_board(game.board, budget=60).actions[0])
    assert answer.to_dict()["result"] == "won"
