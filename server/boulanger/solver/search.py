"""The search: a complete depth-first search over a compact position.

A position inside the search is three things:

* ``cells``: the cards in the free cells, as sorted ``bytes`` (empty cells are
  not stored; the search knows how many cells the game has);
* ``cols``: the 8 columns as ``bytes`` (bottom to top), kept sorted;
* ``found``: the top rank on each suit's foundation.

Cards are the engine's ints (``rank * 4 + suit``, 4..55), so a card goes on
``card + 4`` and fits in a byte. The key of a position in the visited set is
``cells + b"\\x01" + b"\\x00".join(cols)``: the foundations are not in it
because they are exactly the cards that are missing.

Why "unsolvable" is never wrong: the search generates every single-card move
(plus group moves, which are only shortcuts to positions single moves reach)
from every position it visits, and only stops early when it finds a win or
runs out of budget. The single-card moves are: a column's top card into a
cell or an empty column, a cell card onto its parent or into an empty
column, and a top card onto its parent, which is only possible when the top
card is not already on its own parent, so it is exactly the run move with a
run of one card (always within capacity). The reductions below are each
provably safe:

1. Foundation moves are made at once ("settling"). In Baker's Game the only
   card that could ever be built on a card C in the tableau is the card of
   the same suit one rank lower, and when C can go to its foundation that card
   is already there. So C never helps any later move: take any winning line
   from the position, delete the moves of C and move C to the foundation
   first; every other move stays legal (removing C only empties places and
   uncovers cards, a foundation that takes a card after C still takes it),
   and the line still wins. Hence a position is winnable if and only if its
   settled form is, and a win from it is found by searching settled forms.
2. Positions equal up to a permutation of the columns and of the cells share
   one visited entry (columns and cell contents are sorted in the key): the
   rules, the group-move capacity included, only count empty places and never
   look at which column or cell is which.
3. Moves that only rename places are not generated: cell to cell, a whole
   column into an empty column, and any move into a second empty column or
   cell when one is already tried. Each leads to the same key as a move that
   is generated (or to the position itself), so rule 2 covers them.
4. A position already in the visited set is not searched again: whether it is
   winnable does not depend on how it was reached.

Together: when the search stops without a win and without hitting its budget,
every settled position reachable from the start has been expanded with every
single-card move, so no win exists.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.board import CAPACITY

# A move as the search records it, independent of where places are:
# (kind, card, count) where kind is "p" (onto the column whose top is card + 4),
# "e" (into an empty column) or "c" (into a free cell). ``card`` is the lowest-
# covered card moved (the run's highest card). Foundation moves are implied.
SearchMove = tuple[str, int, int]

# A settled position (cells, sorted columns, foundations) and a child waiting
# in the search: (score, key, cells, columns, foundations, move).
_State = tuple[bytes, tuple[bytes, ...], tuple[int, ...]]
_Kid = tuple[int, bytes, list[int], list[bytes], tuple[int, ...], "SearchMove"]

_SEP = b"\x00"
_CELLS_END = b"\x01"
# How many expansions between two looks at the clock.
_CLOCK_EVERY = 128


class Verdict(enum.StrEnum):
    """What a search says of a position; the value is its wire form."""

    # A win was found (and is given).
    WON = "won"
    # No win exists: every reachable position was searched.
    UNSOLVABLE = "unsolvable"
    # The budget ran out first.
    UNKNOWN = "unknown"


@dataclass(slots=True)
class Outcome:
    """What one search found: ``path`` is the list of moves to a win, if any."""

    result: Verdict
    path: list[SearchMove] | None
    positions: int
    seconds: float


def settle(cells: list[int], cols: list[bytes], found: list[int]) -> None:
    """Make every legal foundation move (safe, see the module docstring), in place."""
    moved = True
    while moved:
        moved = False
        for i, col in enumerate(cols):
            while col:
                card = col[-1]
                if found[card & 3] != (card >> 2) - 1:
                    break
                found[card & 3] += 1
                col = col[:-1]
                moved = True
            cols[i] = col
        for card in list(cells):
            if found[card & 3] == (card >> 2) - 1:
                found[card & 3] += 1
                cells.remove(card)
                moved = True


def key_of(cells: Sequence[int], cols: Sequence[bytes]) -> bytes:
    """The visited-set key of a position (see the module docstring)."""
    return bytes(sorted(cells)) + _CELLS_END + _SEP.join(sorted(cols))


def _column_score(col: bytes) -> int:
    """The disorder of one column, for :func:`_score` (0 for an ordered column)."""
    # Cards sitting on a lower card of their own suit block it: penalise
    # every card that lies above a smaller card of the same suit, and every
    # card above the ordered base (a same-suit run from the bottom).
    n = len(col)
    i = 1
    while i < n and col[i] == col[i - 1] - 4:
        i += 1
    score = -6 * (n - i)
    lowest = [99, 99, 99, 99]
    for card in col:
        suit = card & 3
        if card > lowest[suit]:
            score -= 3
        else:
            lowest[suit] = card
    return score


def _score(
    cells: list[int], cols: list[bytes], found: Sequence[int], ncells: int, memo: dict[bytes, int]
) -> int:
    """A guess of how close a position is to a win, to order the children (bigger is better).

    ``memo`` caches the score of each column: most columns recur in many positions.
    """
    score = 40 * (found[0] + found[1] + found[2] + found[3]) + 18 * (ncells - len(cells))
    for col in cols:
        if not col:
            score += 30
            continue
        part = memo.get(col)
        if part is None:
            part = memo[col] = _column_score(col)
        score += part
    return score


def _run_length(col: bytes) -> int:
    """How many cards on top of a (non-empty) column form a same-suit descending run."""
    n = len(col)
    run = 1
    while run < n and col[-run - 1] == col[-run] + 4:
        run += 1
    return run


Child = tuple[bytes, list[int], list[bytes], tuple[int, ...], SearchMove]


def children(
    cells: bytes,
    cols: tuple[bytes, ...],
    found: tuple[int, ...],
    ncells: int,
    runs: dict[bytes, int] | None = None,
) -> list[Child]:
    """Every child of a settled position: ``(key, cells, cols, found, move)``, settled.

    ``runs`` caches :func:`_run_length` per column across calls.
    """
    out: list[Child] = []
    append = out.append
    free = ncells - len(cells)
    empty_at = -1
    empties = 0
    tops: dict[int, int] = {}
    for i, col in enumerate(cols):
        if col:
            tops[col[-1]] = i
        else:
            empties += 1
            empty_at = i
    capacity = CAPACITY[free]
    cap_occupied = capacity[empties]
    cap_empty = capacity[empties - 1] if empties else 0
    join = _SEP.join
    tail = _CELLS_END

    def settled(
        new_cells: list[int], new_cols: list[bytes], src: int
    ) -> tuple[list[int], list[bytes], tuple[int, ...]]:
        # Only the card just uncovered in the source column can have become
        # playable; if it has, settle the whole position.
        col = new_cols[src]
        if col and found[col[-1] & 3] == (col[-1] >> 2) - 1:
            new_found = list(found)
            settle(new_cells, new_cols, new_found)
            return new_cells, new_cols, tuple(new_found)
        return new_cells, new_cols, found

    # Cell cards: onto their parent, into an empty column. Nothing is
    # uncovered, so nothing new can go to the foundation.
    for card in cells:
        j = tops.get(card + 4)
        if j is not None or empties:
            rest = cells.replace(bytes((card,)), b"")
            if j is not None:
                new_cols = list(cols)
                new_cols[j] += bytes((card,))
                new_cols.sort()
                append((rest + tail + join(new_cols), list(rest), new_cols, found, ("p", card, 1)))
            if empties:
                new_cols = list(cols)
                new_cols[empty_at] = bytes((card,))
                new_cols.sort()
                append((rest + tail + join(new_cols), list(rest), new_cols, found, ("e", card, 1)))
    # Column tops and runs.
    for i, col in enumerate(cols):
        if not col:
            continue
        n = len(col)
        if runs is None:
            run = _run_length(col)
        else:
            run = runs.get(col, 0)
            if not run:
                run = runs[col] = _run_length(col)
        moves: list[tuple[list[int], list[bytes], SearchMove]] = []
        # Onto a parent: only the whole run can go (each card inside the run
        # has its parent right below it, in this column).
        base = col[-run]
        j = tops.get(base + 4)
        if j is not None and run <= cap_occupied:
            new_cols = list(cols)
            new_cols[j] += col[-run:]
            new_cols[i] = col[:-run]
            moves.append((list(cells), new_cols, ("p", base, run)))
        if empties and n > 1:
            # Into an empty column: the top card alone (needed for
            # completeness) and the longest run allowed (a shortcut).
            longest = min(run, cap_empty, n - 1)
            for k in (1, longest) if longest > 1 else (1,):
                new_cols = list(cols)
                new_cols[empty_at] = col[-k:]
                new_cols[i] = col[:-k]
                moves.append((list(cells), new_cols, ("e", col[-k], k)))
        if free:
            new_cols = list(cols)
            new_cols[i] = col[:-1]
            new_cells = list(cells)
            new_cells.append(col[-1])
            moves.append((new_cells, new_cols, ("c", col[-1], 1)))
        for new_cells, new_cols, move in moves:
            new_cells, new_cols, new_found = settled(new_cells, new_cols, i)
            new_cells.sort()
            new_cols.sort()
            append((bytes(new_cells) + tail + join(new_cols), new_cells, new_cols, new_found, move))
    return out


def search(
    cells: list[int],
    cols: list[bytes],
    found: list[int],
    ncells: int,
    *,
    budget: float | None = 2.0,
    max_positions: int | None = None,
    visited: set[bytes] | None = None,
) -> Outcome:
    """Depth-first search from a position (settled here first) for a win.

    Children are tried best first by :func:`_score`. ``budget`` is in seconds
    (``None``: no limit); ``max_positions`` bounds the visited set.

    ``visited``, when given, is used as the visited set and grows in place:
    keys already in it are not searched, so it may only hold positions known
    to have no win (rule 4 again). After an ``UNSOLVABLE`` answer every key
    in it still has none, so one set can be handed from search to search
    (the game review proves many neighbouring positions lost this way).
    """
    start = time.perf_counter()
    deadline = None if budget is None else start + budget
    cells = list(cells)
    cols = list(cols)
    found = list(found)
    settle(cells, cols, found)
    cells.sort()
    cols.sort()
    root_key = key_of(cells, cols)
    if sum(found) == 52:
        return Outcome(Verdict.WON, [], 1, time.perf_counter() - start)
    seen: set[bytes] = set() if visited is None else visited
    if root_key in seen:
        return Outcome(Verdict.UNSOLVABLE, None, len(seen), time.perf_counter() - start)
    seen.add(root_key)
    memo: dict[bytes, int] = {}
    runs: dict[bytes, int] = {}

    def expand(state: _State) -> list[_Kid]:
        """The unvisited children of a settled position, best last."""
        kids: list[_Kid] = []
        for key, k_cells, k_cols, k_found, move in children(*state, ncells, runs):
            if key not in seen:
                score = _score(k_cells, k_cols, k_found, ncells, memo)
                kids.append((score, key, k_cells, k_cols, k_found, move))
        kids.sort(key=lambda kid: kid[0])
        return kids

    # One frame per position on the current line (children still to try);
    # ``path`` holds the moves that led from the root to the last frame.
    frames = [expand((bytes(cells), tuple(cols), tuple(found)))]
    path: list[SearchMove] = []
    expansions = 0
    while frames:
        kids = frames[-1]
        if not kids:
            frames.pop()
            if path:
                path.pop()
            continue
        _, key, k_cells, k_cols, k_found, move = kids.pop()
        if key in seen:
            continue
        seen.add(key)
        path.append(move)
        if sum(k_found) == 52:
            return Outcome(Verdict.WON, list(path), len(seen), time.perf_counter() - start)
        if max_positions is not None and len(seen) >= max_positions:
            return Outcome(Verdict.UNKNOWN, None, len(seen), time.perf_counter() - start)
        expansions += 1
        if (
            deadline is not None
            and expansions % _CLOCK_EVERY == 0
            and time.perf_counter() > deadline
        ):
            return Outcome(Verdict.UNKNOWN, None, len(seen), time.perf_counter() - start)
        frames.append(expand((bytes(k_cells), tuple(k_cols), k_found)))
    return Outcome(Verdict.UNSOLVABLE, None, len(seen), time.perf_counter() - start)
