"""The position: 8 columns, the free cells that exist, 4 foundations.

The board checks and applies moves; it knows nothing of history or score
(that is :class:`boulanger.engine.game.Game`).
"""

from __future__ import annotations

from typing import TypeVar

from .cards import ALL_CARDS, CARDS, Card, Suit, parse_card
from .codes import CELL_COUNTS, CELL_COUNTS_TEXT, GameCode
from .deal import deal_columns
from .errors import IllegalMoveError, InvalidNotationError
from .moves import (
    COLUMN_COUNT,
    FIRST_CELL,
    FOUNDATION,
    MAX_CELLS,
    MOVES,
    PLACE_INDEX,
    PLACE_NAMES,
    STEPS,
    Move,
    Step,
)

# Foundations are shown in the rules' order: spades, hearts, diamonds, clubs.
_SHOWN_SUITS = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)

# A move as move generation hands it out: a Move or a Step.
_M = TypeVar("_M")


def group_capacity(free_cells: int, empty_columns: int) -> int:
    """How many cards one group move may carry: (cells + 1) * 2 ** columns.

    ``empty_columns`` must not count the target column when it is empty.
    """
    return (free_cells + 1) << empty_columns


# group_capacity(free, empty) for every board, looked up by the hot loops of
# move generation (a call there costs more than the formula).
CAPACITY: tuple[tuple[int, ...], ...] = tuple(
    tuple(group_capacity(free, empty) for empty in range(COLUMN_COUNT + 1))
    for free in range(MAX_CELLS + 1)
)


class Board:
    """A Baker's Game position. ``columns`` list cards bottom to top."""

    __slots__ = ("cells", "columns", "foundations")

    def __init__(
        self,
        columns: list[list[Card]],
        cells: list[Card | None],
        foundations: list[int],
    ) -> None:
        self.columns = columns
        self.cells = cells
        # Top rank on each suit's foundation (0 = empty), indexed by Suit.
        self.foundations = foundations

    @classmethod
    def deal(cls, code: GameCode) -> Board:
        """The starting position of a game code: its deal, its cells empty."""
        return cls(deal_columns(code.deal), [None] * code.cells, [0, 0, 0, 0])

    def copy(self) -> Board:
        """An independent copy (lists copied, cards shared: they are immutable)."""
        return Board([list(c) for c in self.columns], list(self.cells), list(self.foundations))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return (
            self.columns == other.columns
            and self.cells == other.cells
            and self.foundations == other.foundations
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Board.from_text({self.text()!r})"

    # -- reading -------------------------------------------------------

    @property
    def foundation_cards(self) -> int:
        """How many cards are on the foundations."""
        return sum(self.foundations)

    @property
    def won(self) -> bool:
        """Every card is on its foundation."""
        return sum(self.foundations) == 52

    def foundation_top(self, suit: Suit) -> Card | None:
        """The top card of a suit's foundation, or None while it is empty."""
        rank = self.foundations[suit]
        return CARDS[rank * 4 + suit] if rank else None

    def movable_run(self, column: int) -> int:
        """Length of the same-suit descending run on top of a column (0-based index)."""
        col = self.columns[column]
        run = 1 if col else 0
        i = len(col) - 1
        while i > 0 and col[i - 1] == col[i] + 4:
            run += 1
            i -= 1
        return run

    def capacity(self, to_empty_column: bool = False) -> int:
        """The largest group move allowed now, to an occupied or an empty column."""
        free = self.cells.count(None)
        empty = sum(1 for col in self.columns if not col)
        if to_empty_column:
            empty -= 1
        return group_capacity(free, max(empty, 0))

    # -- moves ---------------------------------------------------------

    def check(self, src: int, dst: int, count: int) -> Card:
        """Raise :class:`IllegalMoveError` unless the move is legal; return its lowest-covered card.

        ``src`` and ``dst`` are place indices (see :mod:`boulanger.engine.moves`).
        """
        columns = self.columns
        cells = self.cells
        if count < 1:
            raise IllegalMoveError(f"cannot move {count} cards")
        if src < FIRST_CELL:
            col = columns[src]
            size = len(col)
            if count > size:
                raise IllegalMoveError(f"{PLACE_NAMES[src]} has {size} cards, cannot move {count}")
            card = col[-count]
            for i in range(size - count, size - 1):
                if col[i + 1] != col[i] - 4:
                    raise IllegalMoveError(
                        f"the top {count} cards of {PLACE_NAMES[src]} are not a same-suit run"
                    )
        elif src < FOUNDATION:
            found = cells[src - FIRST_CELL]
            if found is None:
                raise IllegalMoveError(f"{PLACE_NAMES[src]} is empty")
            card = found
            if count != 1:
                raise IllegalMoveError(f"a cell holds one card, cannot move {count}")
        else:
            raise IllegalMoveError("cards on a foundation are final")
        if src == dst:
            raise IllegalMoveError(f"{PLACE_NAMES[src]} is both source and destination")
        if dst == FOUNDATION:
            if count != 1:
                raise IllegalMoveError("cards go to the foundation one at a time")
            rank = self.foundations[card & 3]
            if rank != (card >> 2) - 1:
                wanted = "nothing more" if rank == 13 else str(CARDS[(rank + 1) * 4 + (card & 3)])
                raise IllegalMoveError(
                    f"{card} cannot go to the foundation: it takes {wanted} next"
                )
        elif dst >= FIRST_CELL:
            if count != 1:
                raise IllegalMoveError(f"a cell holds one card, cannot move {count}")
            held = cells[dst - FIRST_CELL]
            if held is not None:
                raise IllegalMoveError(f"{PLACE_NAMES[dst]} already holds {held}")
        else:
            target = columns[dst]
            empty = 0
            for col in columns:
                if not col:
                    empty += 1
            if target:
                top = target[-1]
                if top != card + 4:
                    raise IllegalMoveError(
                        f"{card} does not go on {top}: same suit, one rank higher required"
                    )
            else:
                empty -= 1  # the target cannot be a waypoint to itself
            if count > 1:
                cap = group_capacity(cells.count(None), empty)
                if count > cap:
                    raise IllegalMoveError(f"group of {count} cards exceeds capacity {cap}")
        return card

    def apply(self, src: int, dst: int, count: int) -> None:
        """Move cards without checking: only for moves :meth:`check` accepted, or undo."""
        if src < FIRST_CELL:
            col = self.columns[src]
            moving = col[-count:]
            del col[-count:]
        elif src < FOUNDATION:
            moving = [self.cells[src - FIRST_CELL]]  # type: ignore[list-item]
            self.cells[src - FIRST_CELL] = None
        else:  # only undo takes a card off a foundation
            raise AssertionError("use take_from_foundation")
        self._put(moving, dst)

    def take_from_foundation(self, suit: int, dst: int) -> None:
        """Undo support: move the top card of a suit's foundation back to a place."""
        rank = self.foundations[suit]
        self.foundations[suit] = rank - 1
        self._put([CARDS[rank * 4 + suit]], dst)

    def _put(self, moving: list[Card], dst: int) -> None:
        if dst < FIRST_CELL:
            self.columns[dst].extend(moving)
        elif dst < FOUNDATION:
            self.cells[dst - FIRST_CELL] = moving[0]
        else:
            self.foundations[moving[0] & 3] += 1

    def legal_moves(self) -> list[Move]:
        """Every legal move, group moves of every legal length included."""
        return self._generate(MOVES)

    def legal_steps(self) -> list[Step]:
        """:meth:`legal_moves` as steps (place indexes), in the same order."""
        return self._generate(STEPS)

    def _generate(self, table: tuple[tuple[tuple[_M, ...], ...], ...]) -> list[_M]:
        """Every legal move, taken from ``table`` (``MOVES`` or ``STEPS``)."""
        moves: list[_M] = []
        append = moves.append
        columns = self.columns
        foundations = self.foundations
        empty_cols = [i for i, col in enumerate(columns) if not col]
        free_cells = [FIRST_CELL + i for i, held in enumerate(self.cells) if held is None]
        # Each card goes on at most one column top: the same suit, one rank higher.
        tops: dict[int, int] = {col[-1]: i for i, col in enumerate(columns) if col}
        for i, card in enumerate(self.cells):
            if card is None:
                continue
            row = table[FIRST_CELL + i]
            if foundations[card & 3] == (card >> 2) - 1:
                append(row[FOUNDATION][0])
            target = tops.get(card + 4)
            if target is not None:
                append(row[target][0])
            for e in empty_cols:
                append(row[e][0])
            for f in free_cells:
                append(row[f][0])
        capacity = CAPACITY[len(free_cells)]
        cap_occupied = capacity[len(empty_cols)]
        cap_empty = capacity[max(len(empty_cols) - 1, 0)]
        for s, col in enumerate(columns):
            if not col:
                continue
            row = table[s]
            card = col[-1]
            if foundations[card & 3] == (card >> 2) - 1:
                append(row[FOUNDATION][0])
            for f in free_cells:
                append(row[f][0])
            size = len(col)
            run = 1
            while run < size and col[-run - 1] == col[-run] + 4:
                run += 1
            # Only the whole run can go onto another column: each shorter
            # group would need the card just under it, which is covered here.
            if run <= cap_occupied:
                target = tops.get(col[-run] + 4)
                if target is not None:
                    append(row[target][run - 1])
            for k in range(min(run, cap_empty)):
                for e in empty_cols:
                    append(row[e][k])
        return moves

    def foundation_reachable(self, limit: int = 64) -> bool | None:
        """Can any sequence of moves put another card on a foundation?

        Searches the positions reachable without a foundation move (up to
        ``limit`` of them, equal up to the order of columns and of cells).
        True or False when it knows; None when the limit cut the search short.
        """
        if self._foundation_near() or self._builds_reach_foundation():
            return True
        seen = {self._shape()}
        frontier = [self]
        while frontier:
            board = frontier.pop()
            for src, dst, count in board.legal_steps():
                if board._renames(src, dst, count):
                    continue
                nxt = board.copy()
                nxt.apply(src, dst, count)
                # Judged as soon as it is made: most searches end at the first few.
                if nxt._foundation_near():
                    return True
                shape = nxt._shape()
                if shape not in seen:
                    if len(seen) >= limit:
                        return None
                    seen.add(shape)
                    frontier.append(nxt)
        return False

    def _builds_reach_foundation(self) -> bool:
        """Building on columns alone (moves that never use a space) reaches :meth:`_foundation_near`.

        A quick witness before the exhaustive search: such moves only ever
        free cells and columns, and a position where commuting moves like
        these abound is the one that exhausts the search's limit. Each card
        has one successor to build on, so this ends.
        """
        board = self.copy()
        for _ in range(52):
            columns = board.columns
            step = next(
                (s for s in board.legal_steps() if s[1] < FIRST_CELL and columns[s[1]]),
                None,
            )
            if step is None:
                return False
            board.apply(*step)
            if board._foundation_near():
                return True
        return False

    def _foundation_near(self) -> bool:
        """A foundation move is legal, or a few single moves make one legal.

        True when a card that could go on its foundation is in a cell, or lies
        under no more cards than there are free cells and empty columns: each
        card above it can go, one at a time, to a space of its own. (Sound and
        cheap; without it, loose positions exhaust the search's limit.)
        """
        foundations = self.foundations
        spaces = 0
        for card in self.cells:
            if card is None:
                spaces += 1
            elif foundations[card & 3] == (card >> 2) - 1:
                return True
        spaces += sum(1 for col in self.columns if not col)
        for col in self.columns:
            for above, card in enumerate(reversed(col)):
                if above > spaces:
                    break
                if foundations[card & 3] == (card >> 2) - 1:
                    return True
        return False

    def _shape(self) -> tuple[object, ...]:
        """The position up to the order of columns and of cells."""
        cells = sorted(c for c in self.cells if c is not None)
        return (tuple(sorted(tuple(col) for col in self.columns)), tuple(cells))

    def is_pointless(self, move: Move) -> bool:
        """A move that leaves the same position up to renaming cells and columns.

        Cell to cell, and a whole column into an empty column.
        """
        return self._renames(PLACE_INDEX[move.src], PLACE_INDEX[move.dst], move.count)

    def _renames(self, src: int, dst: int, count: int) -> bool:
        """:meth:`is_pointless` of a step."""
        if src >= FOUNDATION or dst >= FOUNDATION:
            return False
        if src >= FIRST_CELL:
            return dst >= FIRST_CELL
        if dst >= FIRST_CELL:
            return False
        return len(self.columns[src]) == count and not self.columns[dst]

    # -- text form -----------------------------------------------------

    def text(self) -> str:
        """The canonical text form; :meth:`from_text` reads it back."""
        lines = [
            "foundations: " + " ".join(str(self.foundation_top(s) or "--") for s in _SHOWN_SUITS),
            "cells: " + " ".join(str(c) if c is not None else "--" for c in self.cells),
        ]
        for i, col in enumerate(self.columns):
            lines.append(f"col{i + 1}:" + "".join(f" {c}" for c in col))
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Board:
        """Parse the canonical text form, checking that every card is there exactly once."""
        if not isinstance(text, str):
            raise InvalidNotationError(f"board text must be a string, not {text!r}")
        lines = [line.strip() for line in text.strip().splitlines()]
        labels = ["foundations", "cells", *(f"col{i}" for i in range(1, COLUMN_COUNT + 1))]
        if len(lines) != len(labels):
            raise InvalidNotationError(f"board text needs {len(labels)} lines, got {len(lines)}")
        fields: list[list[str]] = []
        for line, label in zip(lines, labels, strict=True):
            head, sep, rest = line.partition(":")
            if not sep or head.strip() != label:
                raise InvalidNotationError(f"board line {line!r} should start with {label}:")
            fields.append(rest.split())
        seen: list[Card] = []
        foundations = [0, 0, 0, 0]
        if len(fields[0]) != 4:
            raise InvalidNotationError(
                "foundations line needs 4 entries (spades, hearts, diamonds, clubs)"
            )
        for suit, entry in zip(_SHOWN_SUITS, fields[0], strict=True):
            if entry == "--":
                continue
            top = parse_card(entry)
            if top.suit != suit:
                raise InvalidNotationError(f"foundation {suit.name.lower()} cannot hold {top}")
            foundations[suit] = top.rank
            seen.extend(Card.of(rank, suit) for rank in range(1, top.rank + 1))
        if len(fields[1]) not in CELL_COUNTS:
            raise InvalidNotationError(f"cells line needs {CELL_COUNTS_TEXT} entries")
        cells = [None if entry == "--" else parse_card(entry) for entry in fields[1]]
        seen.extend(c for c in cells if c is not None)
        columns = [[parse_card(entry) for entry in entries] for entries in fields[2:]]
        for col in columns:
            seen.extend(col)
        if sorted(seen) != list(ALL_CARDS):
            missing = sorted(set(ALL_CARDS) - set(seen))
            doubled = sorted({c for c in seen if seen.count(c) > 1})
            raise InvalidNotationError(
                "board must hold each card once: "
                f"missing {' '.join(map(str, missing)) or 'none'}, "
                f"repeated {' '.join(map(str, doubled)) or 'none'}"
            )
        return cls(columns, cells, foundations)
