"""The line of a won game: how closely its moves follow a solver's winning line.

A result's pace (:mod:`boulanger.race.review`) tells a bot at machine speed
from a human; it cannot tell a bot that paces itself from a fast human. How
the game was played can: a human's line has detours, undos, and pauses that
grow before hard choices, and it rarely matches a solver's line move for
move. This module measures that, for :func:`boulanger.race.review.review_line`
to judge.

A *decision* is a move of the record that is not to a foundation (moves to a
foundation are safe and obvious: the solver makes them at once, see
:mod:`.search`) and not an undo. A decision is *on the line* when it is the
next move of a winning line the solver found through the position where it
was made. The lines come from the same search as ``solve`` (shortened the
same way), so a player who replays ``boulanger solve``'s answer, or re-solves
after a detour, is on the line at every decision. Positions are compared in
the search's settled form, so the order in which cards went to the
foundations, and which column or cell holds what, do not matter. Every
position of a line found is remembered with its next move: a player who
follows a line costs one search, and only a position off every line found so
far is searched afresh.

A decision is *hard* when the solver's own first guess there is not the move
its line makes (its ordering heuristic ranks another child first: the search
had to back-track, or its shortening found a better jump), *easy* otherwise;
the medians of the pauses before each kind (the time since the previous
action) say whether the player slowed down where the solver found the way
hard, as a person who thinks does and a replayed line does not.

Bounded: ``max_positions`` caps the positions all the searches of one game
may visit together, and ``budget`` the processor seconds of the measure
(looked at before each search: a safety net, which a loaded machine does
not bring closer, as it would wall-clock seconds); a decision whose
position could not be searched within them is *unmeasured*, and counts as
off the line (a cost limit never makes a result look more like a solver's).
Deterministic when the position cap, not the clock, is what binds. Pure and
synchronous: the server runs it in a solver process of its own.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import TypedDict

from ..engine import Board, Game, GameRecord, RecordDict
from ..engine.moves import FIRST_CELL, FOUNDATION, PLACE_INDEX
from .search import SearchMove, Verdict, _score, children, key_of, search, settle
from .solve import shorten, to_steps

# Positions all the searches of one game may visit together (what binds: the
# figures then depend on the record alone), and processor seconds (a safety
# net: the costliest human-like game measured took 4.6, bench/copier.py).
MAX_POSITIONS = 300_000
BUDGET_S = 10.0

_State = tuple[bytes, tuple[bytes, ...], tuple[int, ...]]


class LineMeasureDict(TypedDict):
    """A measure as :meth:`LineMeasure.to_dict` writes it (the race logs these fields)."""

    actions: int
    undos: int
    par: int | None
    decisions: int
    on_line: int
    longest_run: int
    unmeasured: int
    hard: int
    easy: int
    hard_pause_ms: int | None
    easy_pause_ms: int | None
    positions: int
    seconds: float


@dataclass(frozen=True, slots=True)
class LineMeasure:
    """What :func:`measure_line` found; ``to_dict`` is what the race's log keeps."""

    actions: int
    undos: int
    par: int | None
    # Moves that are neither to a foundation nor undos.
    decisions: int
    # Decisions on a solver's winning line from where they were made.
    on_line: int
    # The longest run of consecutive decisions on the line.
    longest_run: int
    # Decisions whose position was not searched (the budget ran out).
    unmeasured: int
    # Decisions where the solver's first guess is not its line's move, and the rest.
    hard: int
    easy: int
    # Median ms before hard and before easy decisions (None: none, or no times).
    hard_pause_ms: int | None
    easy_pause_ms: int | None
    # Positions the searches visited, and the processor seconds it all took.
    positions: int
    seconds: float

    def to_dict(self) -> LineMeasureDict:
        return {
            "actions": self.actions,
            "undos": self.undos,
            "par": self.par,
            "decisions": self.decisions,
            "on_line": self.on_line,
            "longest_run": self.longest_run,
            "unmeasured": self.unmeasured,
            "hard": self.hard,
            "easy": self.easy,
            "hard_pause_ms": self.hard_pause_ms,
            "easy_pause_ms": self.easy_pause_ms,
            "positions": self.positions,
            "seconds": round(self.seconds, 3),
        }


def _settled(board: Board) -> _State:
    cells = [int(c) for c in board.cells if c is not None]
    cols = [bytes(col) for col in board.columns]
    found = list(board.foundations)
    settle(cells, cols, found)
    return bytes(sorted(cells)), tuple(sorted(cols)), tuple(found)


def search_move(board: Board, src: int, dst: int, count: int) -> SearchMove | None:
    """The move as the search names it, or None for a move to a foundation."""
    if dst == FOUNDATION:
        return None
    if src < FIRST_CELL:
        card = board.columns[src][-count]
    else:
        held = board.cells[src - FIRST_CELL]
        assert held is not None
        card = held
    if dst >= FIRST_CELL:
        return ("c", int(card), 1)
    return ("p" if board.columns[dst] else "e", int(card), count)


class _Lines:
    """The winning lines found so far: each position on one, with its next moves."""

    def __init__(self, ncells: int, max_positions: int, deadline: float | None) -> None:
        self.ncells = ncells
        self.next: dict[bytes, set[SearchMove]] = {}
        self.lost: set[bytes] = set()  # searched: no win from there
        self.unknown: set[bytes] = set()  # not searched to the end: out of budget
        self.positions = 0
        self.max_positions = max_positions
        self.deadline = deadline
        self.first_path: list[SearchMove] | None = None

    def moves(self, state: _State) -> set[SearchMove] | None:
        """The line moves from ``state``, searching it if need be; None if none is known."""
        key = key_of(state[0], state[1])
        found = self.next.get(key)
        if found is not None or key in self.lost or key in self.unknown:
            return found
        left = self.max_positions - self.positions
        if left <= 0 or (self.deadline is not None and time.process_time() >= self.deadline):
            self.unknown.add(key)
            return None
        cells, cols, found_ranks = list(state[0]), list(state[1]), list(state[2])
        # The positions proved lost so far are not searched again (see
        # search's ``visited``); a search that finds a win leaves them as they were.
        visited = set(self.lost)
        outcome = search(
            cells,
            cols,
            found_ranks,
            self.ncells,
            budget=None,
            max_positions=len(visited) + left,
            visited=visited,
        )
        self.positions += len(visited) - len(self.lost)
        if outcome.result == Verdict.UNSOLVABLE:
            self.lost = visited  # every position it visited has no win
            return None
        if outcome.path is None:
            self.unknown.add(key)
            return None
        path = shorten(cells, cols, found_ranks, self.ncells, outcome.path)
        if self.first_path is None:
            self.first_path = path
        self._remember(state, path)
        return self.next[key]

    def _remember(self, state: _State, path: list[SearchMove]) -> None:
        # A position won once settled has no line move: any move there is off it.
        self.next.setdefault(key_of(state[0], state[1]), set())
        for move in path:
            self.next.setdefault(key_of(state[0], state[1]), set()).add(move)
            for _key, k_cells, k_cols, k_found, k_move in children(*state, self.ncells):
                if k_move == move:
                    state = (bytes(k_cells), tuple(k_cols), k_found)
                    break
            else:  # pragma: no cover - a path holds only moves the search generated
                raise AssertionError(f"move {move} not found on the line")


def _first_guess(state: _State, ncells: int) -> SearchMove | None:
    """The child the search's ordering tries first from ``state``."""
    best: tuple[int, SearchMove] | None = None
    memo: dict[bytes, int] = {}
    for _key, k_cells, k_cols, k_found, move in children(*state, ncells):
        score = _score(k_cells, k_cols, k_found, ncells, memo)
        if best is None or score > best[0]:
            best = (score, move)
    return None if best is None else best[1]


def _median(values: list[int]) -> int | None:
    return round(statistics.median(values)) if values else None


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of a record: its action's index (0-based), and what the measure found.

    ``on_line`` and ``hard`` are None when the position was lost (no line
    from it) or beyond the budget (``unmeasured``).
    """

    index: int
    on_line: bool | None
    hard: bool | None
    unmeasured: bool = False


def decisions(
    record: RecordDict,
    *,
    max_positions: int = MAX_POSITIONS,
    budget: float | None = BUDGET_S,
    lines: _Lines | None = None,
) -> list[Decision]:
    """Each decision of a game record, judged (see the module docstring); raises
    RecordError for a record that does not replay. ``budget`` None: no limit in
    processor seconds (the result depends on the record alone)."""
    parsed = GameRecord.parse(record)  # checks the record, its times included
    game = Game(parsed.code)
    ncells = len(game.board.cells)
    if lines is None:
        deadline = None if budget is None else time.process_time() + budget
        lines = _Lines(ncells, max_positions, deadline)
    found: list[Decision] = []
    for index, move in enumerate(parsed.actions):
        if move is None:
            game.undo()
            continue
        board = game.board
        mine = search_move(board, PLACE_INDEX[move.src], PLACE_INDEX[move.dst], move.count)
        if mine is not None:
            state = _settled(board)
            planned = lines.moves(state)
            if planned is None:
                unknown = key_of(state[0], state[1]) in lines.unknown
                found.append(Decision(index, None, None, unknown))
            else:
                hard = _first_guess(state, ncells) not in planned
                found.append(Decision(index, mine in planned, hard))
        game.play(move)
    return found


def measure_line(
    record: RecordDict,
    *,
    par: int | None = None,
    max_positions: int = MAX_POSITIONS,
    budget: float | None = BUDGET_S,
) -> LineMeasure:
    """Measure a game record's line (see the module docstring and :func:`decisions`).

    ``par``, when None, is the length of the first line found (from the deal).
    """
    start = time.process_time()
    parsed = GameRecord.parse(record)
    deadline = None if budget is None else start + budget
    lines = _Lines(len(Board.deal(parsed.code).cells), max_positions, deadline)
    judged = decisions(record, lines=lines)
    run = longest = 0
    # The pauses before hard (True) and easy decisions.
    pauses: dict[bool, list[int]] = {True: [], False: []}
    for decision in judged:
        run = run + 1 if decision.on_line else 0
        longest = max(longest, run)
        pause = _pause(parsed.times, decision.index)
        if decision.hard is not None and pause is not None:
            pauses[decision.hard].append(pause)
    if par is None and lines.first_path is not None:
        par = len(to_steps(Board.deal(parsed.code), lines.first_path))
    return LineMeasure(
        actions=len(parsed.actions),
        undos=sum(1 for move in parsed.actions if move is None),
        par=par,
        decisions=len(judged),
        on_line=sum(1 for d in judged if d.on_line),
        longest_run=longest,
        unmeasured=sum(1 for d in judged if d.unmeasured),
        hard=sum(1 for d in judged if d.hard),
        easy=sum(1 for d in judged if d.hard is False),
        hard_pause_ms=_median(pauses[True]),
        easy_pause_ms=_median(pauses[False]),
        positions=lines.positions,
        seconds=time.process_time() - start,
    )


def _pause(times: tuple[int, ...] | None, index: int) -> int | None:
    """The ms between action ``index`` and the one before (the start for the first)."""
    if times is None:
        return None
    return times[index] - (times[index - 1] if index else 0)
