"""Hints: the next move toward a win from a game's current position.

Two searches from two neighbouring positions may find different wins, so
hints computed afresh each time can send a player round in circles (a card
to a cell, then back). So a hint remembers the whole winning line it found:
each position on it maps to its next move, and while the player follows the
hints every later hint continues the same line, which ends in a win. The
memory is bounded (least recently used lines are forgotten) and guarded by a
lock, since the server may ask for hints from several threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TypedDict

from ..engine import Board, Game, Move
from ..engine.moves import MoveDict, Step, move_of
from .search import Verdict
from .solve import solve_steps

# Positions remembered across all games (a winning line is about 100 of them).
PLAN_LIMIT = 50_000

_Key = tuple[tuple[tuple[int, ...], ...], tuple[int | None, ...], tuple[int, ...]]
_plans: OrderedDict[_Key, Move] = OrderedDict()
_lock = threading.Lock()


class HintDict(TypedDict):
    """A hint's wire form."""

    result: str
    move: MoveDict | None
    seconds: float
    positions: int


@dataclass(frozen=True, slots=True)
class Hint:
    """The answer to "what next?".

    ``result`` is ``WON`` (``move`` leads to a win; ``None`` once the game is
    won), ``UNSOLVABLE`` (no win from here: undo) or ``UNKNOWN`` (out of budget).
    """

    result: Verdict
    move: Move | None
    seconds: float
    positions: int

    def to_dict(self) -> HintDict:
        """The wire form."""
        return {
            "result": self.result,
            "move": None if self.move is None else self.move.to_dict(),
            "seconds": round(self.seconds, 4),
            "positions": self.positions,
        }


def _key(board: Board) -> _Key:
    """The exact position: a plan is followed only from the very position it was made for."""
    return (tuple(map(tuple, board.columns)), tuple(board.cells), tuple(board.foundations))


def hint(game: Game, budget: float = 1.0) -> Hint:
    """The next move toward a win from the game's position; the game is not changed."""
    board = game.board
    if board.won:
        return Hint(Verdict.WON, None, 0.0, 0)
    key = _key(board)
    with _lock:
        planned = _plans.get(key)
        if planned is not None:
            _plans.move_to_end(key)
            return Hint(Verdict.WON, planned, 0.0, 0)
    solution, steps = solve_steps(board, budget=budget)
    if solution.result != Verdict.WON:
        return Hint(solution.result, None, solution.seconds, solution.positions)
    line = _remember(board, steps)
    return Hint(Verdict.WON, line[0][1], solution.seconds, solution.positions)


def _remember(board: Board, steps: list[Step]) -> list[tuple[_Key, Move]]:
    """Map each position of a winning line to its next move; return the line."""
    board = board.copy()
    line: list[tuple[_Key, Move]] = []
    for step in steps:
        line.append((_key(board), move_of(*step)))
        board.apply(*step)
    with _lock:
        for key, move in line:
            _plans[key] = move
            _plans.move_to_end(key)
        while len(_plans) > PLAN_LIMIT:
            _plans.popitem(last=False)
    return line


def forget() -> None:
    """Drop every remembered line (for tests)."""
    with _lock:
        _plans.clear()
