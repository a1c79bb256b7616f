"""Solve a deal or a position: a replayable list of actions, or a verdict.

``solve`` and ``solve_board`` are synchronous and pure (no I/O, no asyncio):
the server runs them in a thread or process pool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TypedDict

from ..engine import Board, GameCode
from ..engine.moves import FIRST_CELL, FOUNDATION, MoveDict, Step, move_of
from .search import Child, SearchMove, Verdict, children, key_of, search, settle

# The verdicts by their former names, kept for callers that import them.
WON = Verdict.WON
UNSOLVABLE = Verdict.UNSOLVABLE
UNKNOWN = Verdict.UNKNOWN


class SolutionDict(TypedDict):
    """A solution's wire form (``boulanger solve --json``)."""

    result: str
    actions: list[MoveDict]
    seconds: float
    positions: int
    par: int | None


@dataclass(slots=True)
class Solution:
    """The answer of a search.

    ``result`` is ``WON`` (``actions`` win from the position),
    ``UNSOLVABLE`` (no win exists: every reachable position was searched)
    or ``UNKNOWN`` (the budget ran out first).
    """

    result: Verdict
    actions: list[MoveDict] = field(default_factory=list)
    seconds: float = 0.0
    positions: int = 0

    @property
    def par(self) -> int | None:
        """The number of actions of the solution, when there is one."""
        return len(self.actions) if self.result == WON else None

    def to_dict(self) -> SolutionDict:
        """The wire form (``par`` included)."""
        return {
            "result": self.result,
            "actions": self.actions,
            "seconds": round(self.seconds, 4),
            "positions": self.positions,
            "par": self.par,
        }


def solve(
    code: GameCode | str, *, budget: float = 2.0, max_positions: int | None = None
) -> Solution:
    """Search the deal of a game code; ``budget`` is in seconds."""
    if not isinstance(code, GameCode):
        code = GameCode.parse(code)
    return solve_board(Board.deal(code), budget=budget, max_positions=max_positions)


def solve_board(board: Board, budget: float = 2.0, *, max_positions: int | None = None) -> Solution:
    """Search any position for a win; the board is not changed."""
    return solve_steps(board, budget, max_positions=max_positions)[0]


def solve_steps(
    board: Board, budget: float = 2.0, *, max_positions: int | None = None
) -> tuple[Solution, list[Step]]:
    """:func:`solve_board`, with the solution's moves also as steps (empty without a win).

    For callers that replay the solution on a board: steps need no parsing.
    """
    start = time.perf_counter()
    ncells = len(board.cells)
    cells = [int(c) for c in board.cells if c is not None]
    cols = [bytes(col) for col in board.columns]
    outcome = search(
        cells, cols, list(board.foundations), ncells, budget=budget, max_positions=max_positions
    )
    if outcome.path is None:
        return Solution(outcome.result, [], time.perf_counter() - start, outcome.positions), []
    path = shorten(cells, cols, list(board.foundations), ncells, outcome.path)
    steps = to_steps(board, path)
    actions = [move_of(*step).to_dict() for step in steps]
    return Solution(WON, actions, time.perf_counter() - start, outcome.positions), steps


def shorten(
    cells: list[int], cols: list[bytes], found: list[int], ncells: int, path: list[SearchMove]
) -> list[SearchMove]:
    """Cut detours out of a winning path (deterministic: the same path gives the same result).

    Greedy shortcuts one move deep, and two moves deep repeated while they
    help; the shortest wins.
    """
    # The passes look at the same positions again and again: their children are
    # generated once (the keys and moves of the grandchildren, all depth 2 reads).
    memo: _Memo = ({}, {})
    best = _shortcut(cells, cols, found, ncells, path, 1, memo)
    current = path
    while True:
        shorter = _shortcut(cells, cols, found, ncells, current, 2, memo)
        if len(shorter) >= len(current):
            break
        current = shorter
    return current if len(current) < len(best) else best


_State = tuple[bytes, tuple[bytes, ...], tuple[int, ...]]
# Children by position, and (key, move) of the children by position.
_Memo = tuple[dict[_State, list[Child]], dict[_State, list[tuple[bytes, SearchMove]]]]


def _children(state: _State, ncells: int, memo: _Memo) -> list[Child]:
    found = memo[0].get(state)
    if found is None:
        found = memo[0][state] = children(*state, ncells)
    return found


def _grandchildren(state: _State, ncells: int, memo: _Memo) -> list[tuple[bytes, SearchMove]]:
    found = memo[1].get(state)
    if found is None:
        found = memo[1][state] = [(kid[0], kid[4]) for kid in children(*state, ncells)]
    return found


def _shortcut(
    cells: list[int],
    cols: list[bytes],
    found: list[int],
    ncells: int,
    path: list[SearchMove],
    depth: int,
    memo: _Memo,
) -> list[SearchMove]:
    """One greedy pass: from each position, jump to the furthest later position of the path.

    The positions along the path are numbered; from each position on the new
    path, take the move (or, with ``depth`` 2, the two moves) reaching the
    furthest position of the old path. Every move taken is a real move from a
    real position, so the result still wins.
    """
    cells, cols, found = list(cells), list(cols), list(found)
    settle(cells, cols, found)
    state = (bytes(sorted(cells)), tuple(sorted(cols)), tuple(found))
    states = [state]
    for move in path:
        for _key, k_cells, k_cols, k_found, k_move in _children(state, ncells, memo):
            if k_move == move:
                state = (bytes(k_cells), tuple(k_cols), tuple(k_found))
                break
        else:  # pragma: no cover - the search only records moves it generated
            raise AssertionError(f"move {move} not found while replaying the path")
        states.append(state)
    index = {key_of(s[0], s[1]): i for i, s in enumerate(states)}
    short: list[SearchMove] = []
    i = 0
    while i < len(path):
        best, best_moves = i + 1, [path[i]]
        kids = _children(states[i], ncells, memo)
        for key, _c, _l, _f, move in kids:
            j = index.get(key, -1)
            if j > best:
                best, best_moves = j, [move]
        if depth > 1:
            for _key, k_cells, k_cols, k_found, move in kids:
                kid = (bytes(k_cells), tuple(k_cols), tuple(k_found))
                for key2, move2 in _grandchildren(kid, ncells, memo):
                    j = index.get(key2, -1)
                    if j > best + 1:
                        best, best_moves = j, [move, move2]
        short.extend(best_moves)
        i = best
    return short


def to_steps(board: Board, path: list[SearchMove]) -> list[Step]:
    """Turn search moves into engine steps on a copy of the board, foundation moves included.

    Each step is checked by the engine, so a bug here raises instead of
    producing a record that does not replay.
    """
    board = board.copy()
    steps: list[Step] = []

    def play(src: int, dst: int, count: int) -> None:
        board.check(src, dst, count)
        board.apply(src, dst, count)
        steps.append((src, dst, count))

    def to_foundation() -> None:
        # The same foundation moves the search made at once, in a fixed order.
        while True:
            tops = [(i, col[-1]) for i, col in enumerate(board.columns) if col]
            held = [(FIRST_CELL + i, c) for i, c in enumerate(board.cells) if c is not None]
            for src, card in tops + held:
                if board.foundations[card & 3] == (card >> 2) - 1:
                    play(src, FOUNDATION, 1)
                    break
            else:
                return

    to_foundation()
    for kind, card, count in path:
        src = next(
            (FIRST_CELL + i for i, held in enumerate(board.cells) if held == card),
            None,
        )
        if src is None:
            src = next(
                i
                for i, col in enumerate(board.columns)
                if len(col) >= count and col[-count] == card
            )
        if kind == "p":
            dst = next(i for i, col in enumerate(board.columns) if col and col[-1] == card + 4)
        elif kind == "e":
            dst = next(i for i, col in enumerate(board.columns) if not col)
        else:
            dst = FIRST_CELL + board.cells.index(None)
        play(src, dst, count)
        to_foundation()
    if not board.won:  # pragma: no cover - the search said this path wins
        raise AssertionError("the solution does not win")
    return steps
