"""The review of a finished game: the move that lost it, or how far a win was from par.

A lost game (resigned, stuck, a dead end, out of time) is replayed position
by position; the review finds the *last* position from which a win was still
possible, the move that left it (the losing move), and a winning line from
the position before that move. After a win it gives the number of actions
beside par and the longest detour: the longest stretch of actions that
ended where it began (a move taken back by an undo, a card put in a cell and
brought back).

Why the losing move is right: positions are searched from the last one
backwards. Each search that ends without a win and within budget proves its
position lost (see :mod:`boulanger.solver.search`), and every position it
visited too, so one visited set serves all of them: a later search never
expands a position already proved lost. The first position found winnable,
going backwards, is the last winnable one; every position after it was
proved lost, the one right after it included. That action is always a move,
never an undo: an undo goes back to a position from which the current one
was reached by legal moves, so it cannot make a won game lost.

Bounded: one time budget and one cap on the positions held cover the whole
review; when either runs out the verdict is ``unknown``. Pure and
synchronous: the server runs it in its solver process.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import TypedDict, cast

from ..engine import Board, Game, RecordDict
from ..engine.game import RecordAction
from ..engine.moves import MoveDict, move_of
from .search import Verdict, key_of, search, settle
from .solve import shorten, to_steps

# The positions one review may hold proved lost (about 150 bytes each).
MAX_POSITIONS = 400_000


class Finding(enum.StrEnum):
    """What a review found; the value is its wire form."""

    # The game was won: see par and the detour.
    WON = "won"
    # The losing move is named, with a winning line from the position before it.
    LOSING_MOVE = "losing_move"
    # The game ended in a position that could still be won: the line is from there.
    WINNABLE_AT_END = "winnable_at_end"
    # The deal itself has no win: no move lost it.
    NEVER_WINNABLE = "never_winnable"
    # The budget ran out before an answer.
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Detour:
    """Actions ``first``..``last`` (1-based, inclusive) left the board as it was before them."""

    first: int
    last: int
    ms: int | None

    @property
    def actions(self) -> int:
        return self.last - self.first + 1

    def to_dict(self) -> DetourWire:
        return {"from": self.first, "to": self.last, "actions": self.actions, "ms": self.ms}


# The longest detour of a game: actions "from" .. "to", and how long it took ("from"
# is a keyword: the functional form).
DetourWire = TypedDict("DetourWire", {"from": int, "to": int, "actions": int, "ms": int | None})


class LosingMoveWire(TypedDict):
    """The losing move: its number in the record, the action, its ``t``."""

    action: int
    move: RecordAction | None
    t: int | None


class ReviewWire(TypedDict):
    """A review's wire form (``GET .../review`` adds the readable lines)."""

    finding: str
    won: bool
    actions: int
    par: int | None
    detour: DetourWire | None
    last_winnable: int | None
    losing_move: LosingMoveWire | None
    proved_lost: int
    continuation: list[MoveDict]
    seconds: float


def _without_t(action: RecordAction) -> RecordAction:
    """A record's action as a move (or an undo), its time left out."""
    return cast(RecordAction, {k: v for k, v in action.items() if k != "t"})


@dataclass(slots=True)
class GameReview:
    """A finished game's review (see the module docstring); ``to_dict`` is its wire form."""

    finding: Finding
    won: bool
    actions: int
    par: int | None = None
    detour: Detour | None = None
    # Actions played before the last winnable position (0: the deal itself).
    last_winnable: int | None = None
    # The losing move: its 1-based number in the record, the move and its t.
    losing_action: int | None = None
    losing_move: RecordAction | None = None
    losing_t: int | None = None
    # The positions proved lost on the way (the proof that the move lost).
    proved_lost: int = 0
    # A win from the last winnable position (the moves, as in a record).
    continuation: list[MoveDict] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> ReviewWire:
        return {
            "finding": self.finding,
            "won": self.won,
            "actions": self.actions,
            "par": self.par,
            "detour": None if self.detour is None else self.detour.to_dict(),
            "last_winnable": self.last_winnable,
            "losing_move": None
            if self.losing_action is None
            else {"action": self.losing_action, "move": self.losing_move, "t": self.losing_t},
            "proved_lost": self.proved_lost,
            "continuation": self.continuation,
            "seconds": round(self.seconds, 3),
        }


def positions(record: RecordDict) -> tuple[Game, list[Board]]:
    """Replay a record: the game at its end and the board before the first action and after each."""
    game = Game(record["code"])
    boards = [game.board.copy()]
    for action in record["actions"]:
        game.apply_action(_without_t(action))
        boards.append(game.board.copy())
    return game, boards


def longest_detour(boards: list[Board], times: list[int | None]) -> Detour | None:
    """The longest stretch of actions that ended on the position it began from.

    ``times[i]`` is the ``t`` of action i + 1 (None when the record has none).
    """
    first_seen: dict[tuple[object, ...], int] = {}
    best: tuple[int, int] | None = None
    for index, board in enumerate(boards):
        key = (tuple(map(tuple, board.columns)), tuple(board.cells), tuple(board.foundations))
        start = first_seen.setdefault(key, index)
        if start < index and (best is None or index - start > best[1] - best[0]):
            best = (start, index)
    if best is None:
        return None
    start, end = best
    ms = None
    if times[end - 1] is not None:
        began = times[start - 1] if start else 0
        ms = None if began is None else times[end - 1] - began  # type: ignore[operator]
    return Detour(start + 1, end, ms)


def _state(board: Board) -> tuple[list[int], list[bytes], list[int]]:
    return (
        [int(c) for c in board.cells if c is not None],
        [bytes(col) for col in board.columns],
        list(board.foundations),
    )


def _key(board: Board) -> bytes:
    cells, cols, found = _state(board)
    settle(cells, cols, found)
    return key_of(cells, cols)


def review_record(
    record: RecordDict,
    *,
    par: int | None = None,
    budget: float = 5.0,
    max_positions: int = MAX_POSITIONS,
) -> GameReview:
    """Review a game record (with or without ``t``); ``budget`` is in seconds for all of it.

    ``par`` is the deal's par when known (a won game's actions are shown
    beside it); a record that does not replay raises :class:`RecordError`.
    """
    start = time.perf_counter()
    Game.from_record(record)  # checks the record, its times included
    game, boards = positions(record)
    times: list[int | None] = [a.get("t") for a in record["actions"]]
    detour = longest_detour(boards, times)
    actions = len(record["actions"])
    if game.board.won:
        return GameReview(
            Finding.WON,
            True,
            actions,
            par=par,
            detour=detour,
            last_winnable=actions,
            seconds=time.perf_counter() - start,
        )
    ncells = len(game.board.cells)
    lost: set[bytes] = set()
    deadline = start + budget
    for index in range(len(boards) - 1, -1, -1):
        board = boards[index]
        if _key(board) in lost:
            continue
        remaining = deadline - time.perf_counter()
        proved = len(lost)
        outcome = None
        if remaining > 0:
            cells, cols, found = _state(board)
            outcome = search(
                cells,
                cols,
                found,
                ncells,
                budget=remaining,
                max_positions=max_positions,
                visited=lost,
            )
        if outcome is None or outcome.result == Verdict.UNKNOWN:
            return GameReview(
                Finding.UNKNOWN,
                False,
                actions,
                par=par,
                detour=detour,
                proved_lost=0,
                seconds=time.perf_counter() - start,
            )
        if outcome.result == Verdict.UNSOLVABLE:
            continue
        # Won from here: every later position was proved lost above.
        assert outcome.path is not None
        cells, cols, found = _state(board)
        path = shorten(cells, cols, found, ncells, outcome.path)
        line = [move_of(*step).to_dict() for step in to_steps(board, path)]
        finding, losing_action, losing_move, losing_t = Finding.WINNABLE_AT_END, None, None, None
        if index < len(boards) - 1:
            action = record["actions"][index]
            finding, losing_action = Finding.LOSING_MOVE, index + 1
            losing_move, losing_t = _without_t(action), action.get("t")
        return GameReview(
            finding,
            False,
            actions,
            par=par,
            detour=detour,
            last_winnable=index,
            losing_action=losing_action,
            losing_move=losing_move,
            losing_t=losing_t,
            proved_lost=proved,
            continuation=line,
            seconds=time.perf_counter() - start,
        )
    return GameReview(
        Finding.NEVER_WINNABLE,
        False,
        actions,
        par=par,
        detour=detour,
        proved_lost=len(lost),
        seconds=time.perf_counter() - start,
    )
