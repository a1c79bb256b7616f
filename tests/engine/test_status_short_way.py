"""``Game.compute_status`` decides loose positions without a move list: the same answers.

The reference is the judgement as it was, which built every legal move on
every position to tell a stuck game. Both are run on every position met by
seeded random play on many deals and all three cell counts, and on random
positions (long runs, empty columns).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from boulanger.engine import Game, GameCode, Status
from boulanger.engine.game import DEAD_END_SEARCH

from .test_properties import PROPERTY, plays, starts, walk


def full_judgement(game: Game) -> Status:
    """The judgement the long way: the whole move list first, whatever the position."""
    board = game.board
    if board.won:
        return Status.WON
    if not board.legal_moves():
        return Status.STUCK
    tight = None not in board.cells and all(board.columns)
    if tight and board.foundation_reachable(DEAD_END_SEARCH) is False:
        return Status.DEAD_END
    return Status.PLAYING


def tight(game: Game) -> bool:
    return None not in game.board.cells and all(game.board.columns)


@PROPERTY
@given(game=starts, picks=plays)
def test_status_equals_the_full_judgement_along_random_play(game: Game, picks: list[int]) -> None:
    assert game.compute_status() == full_judgement(game)
    for _ in walk(game, picks):
        assert game.compute_status() == full_judgement(game)


def cell_hungry_play(game: Game, rng: random.Random, length: int) -> list[tuple[Status, bool]]:
    """Random play that fills cells readily (so tight positions, stuck games and
    dead ends are met), undoing when no move is left; the judgement of each position."""
    seen = []
    for _ in range(length):
        moves = game.legal_moves()
        if not moves or rng.random() < 0.05:
            if not game.can_undo:
                break
            game.undo()
        else:
            foundation = [m for m in moves if m.dst == "foundation"]
            game.play(
                rng.choice(foundation) if foundation and rng.random() < 0.7 else rng.choice(moves)
            )
        status = game.compute_status()
        assert status == full_judgement(game), (str(game.code), game.board.text())
        seen.append((status, tight(game)))
    return seen


def test_status_equals_the_full_judgement_on_many_deals_and_cell_counts() -> None:
    rng = random.Random(20)
    met: Counter[tuple[Status, bool]] = Counter()
    for cells in (4, 2, 1):
        for _ in range(60):
            game = Game(GameCode(rng.randrange(1, 2**31), cells))
            met.update(cell_hungry_play(game, rng, 120))
    # Every kind of answer was met, in loose and in tight positions.
    assert met[(Status.PLAYING, False)] > 1000
    assert met[(Status.PLAYING, True)] > 100
    assert met[(Status.STUCK, True)] > 10
    assert met[(Status.DEAD_END, True)] > 10
    # A loose position is never stuck nor a dead end.
    assert not met[(Status.STUCK, False)] and not met[(Status.DEAD_END, False)]


@PROPERTY
@given(deal=st.integers(1, 2**31 - 1), cells=st.sampled_from([4, 2, 1]), seed=st.integers(0, 2**32))
def test_status_equals_the_full_judgement_when_cells_fill(deal: int, cells: int, seed: int) -> None:
    cell_hungry_play(Game(GameCode(deal, cells)), random.Random(seed), 80)
