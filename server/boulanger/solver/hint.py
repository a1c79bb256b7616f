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
from typing import Any

from ..engine import Board, Game, Move
from ..engine.moves import place_index
from .solve import UNKNOWN, UNSOLVABLE, WON, solve_board

# Positions remembered across all games (a winning line is about 100 of them).
PLAN_LIMIT = 50_000

_Key = tuple[tuple[tuple[int, ...], ...], tuple[int | None, ...], tuple[int, ...]]
_plans: OrderedDict[_Key, Move] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Hint:
    """``result`` is ``"won"`` (``move`` leads to a win; ``None`` once the game is won),
    ``"unsolvable"`` (no win from here: undo) or ``"unknown"`` (out of budget)."""

    result: str
    move: Move | None
    seconds: float
    positions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "move": None if self.move is None else self.move.to_dict(),
            "seconds": round(self.seconds, 4),
            "positions": self.positions,
        }


def _key(board: Board) -> _Key:
    return (tuple(map(tuple, board.columns)), tuple(board.cells), tuple(board.foundations))


def hint(game: Game, budget: float = 1.0) -> Hint:
    """The next move toward a win from the game's position; the game is not changed."""
    board = game.board
    if board.won:
        return Hint(WON, None, 0.0, 0)
    key = _key(board)
    with _lock:
        planned = _plans.get(key)
        if planned is not None:
            _plans.move_to_end(key)
            return Hint(WON, planned, 0.0, 0)
    solution = solve_board(board, budget=budget)
    if solution.result != WON:
        assert solution.result in (UNSOLVABLE, UNKNOWN)
        return Hint(solution.result, None, solution.seconds, solution.positions)
    moves = [Move.from_dict(action) for action in solution.actions]
    _remember(board, moves)
    return Hint(WON, moves[0], solution.seconds, solution.positions)


def _remember(board: Board, moves: list[Move]) -> None:
    """Map each position of a winning line to its next move."""
    board = board.copy()
    cells = len(board.cells)
    line: list[tuple[_Key, Move]] = []
    for move in moves:
        line.append((_key(board), move))
        board.apply(place_index(move.src, cells), place_index(move.dst, cells), move.count)
    with _lock:
        for key, move in line:
            _plans[key] = move
            _plans.move_to_end(key)
        while len(_plans) > PLAN_LIMIT:
            _plans.popitem(last=False)


def forget() -> None:
    """Drop every remembered line (for tests)."""
    with _lock:
        _plans.clear()
