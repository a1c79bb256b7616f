"""Places and moves: ``{"src": "col3", "dst": "cell1", "count": 1}``.

Places are named as players see them, 1-based: ``col1`` .. ``col8``,
``cell1`` .. ``cellN`` and ``foundation``. Inside the engine a place is an
index: columns 0..7, cells 8..11, the foundation 12, and a move is a
:data:`Step` of indexes. Names appear only at the edges: parsing a move
(:meth:`Move.parse`, :meth:`Move.from_dict`, :func:`place_index`), and
showing one (``str(move)``, :meth:`Move.to_dict`, :func:`move_of`).
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict

from .errors import InvalidNotationError

COLUMN_COUNT = 8
MAX_CELLS = 4
FIRST_CELL = 8
FOUNDATION = 12
# The longest group a move can carry: a same-suit run, ace to king.
LONGEST_RUN = 13

PLACE_NAMES: tuple[str, ...] = (
    *(f"col{i}" for i in range(1, COLUMN_COUNT + 1)),
    *(f"cell{i}" for i in range(1, MAX_CELLS + 1)),
    "foundation",
)
PLACE_INDEX: dict[str, int] = {name: index for index, name in enumerate(PLACE_NAMES)}


def place_index(name: str, cells: int = MAX_CELLS) -> int:
    """The index of a place name; cells beyond the game's cell count do not exist."""
    index = PLACE_INDEX.get(name) if isinstance(name, str) else None
    if index is None or FIRST_CELL + cells <= index < FOUNDATION:
        cell_names = f"cell1..cell{cells}" if cells > 1 else "cell1"
        raise InvalidNotationError(
            f"{name!r} is not a place: use col1..col8, {cell_names} or foundation"
        )
    return index


# A move as the engine works with it: (source index, destination index, count).
Step = tuple[int, int, int]


class MoveDict(TypedDict):
    """A move's dict form (:meth:`Move.to_dict`)."""

    src: str
    dst: str
    count: int


class Move(NamedTuple):
    """Move ``count`` cards from the place ``src`` to the place ``dst``, by name.

    The form players and records see; the engine checks and applies the
    :data:`Step` of the same move.
    """

    src: str
    dst: str
    count: int = 1  # type: ignore[assignment]  # shadows tuple.count on purpose

    def __str__(self) -> str:
        return f"{self.src}>{self.dst}" + (f"*{self.count}" if self.count != 1 else "")

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse the short form ``"col3>cell1"`` or ``"col2>col5*3"``."""
        if not isinstance(text, str):
            raise InvalidNotationError(f"move must be a string, not {text!r}")
        head, star, count = text.strip().partition("*")
        src, sep, dst = head.partition(">")
        if not sep:
            raise InvalidNotationError(f"{text!r} is not a move: expected src>dst or src>dst*count")
        count = count.strip()
        if star and not (count.isascii() and count.isdigit()):
            raise InvalidNotationError(f"{text!r} has a count that is not a number")
        return cls.from_dict({"src": src.strip(), "dst": dst.strip(), "count": int(count or 1)})

    @classmethod
    def from_dict(cls, data: object) -> Move:
        """Build a move from its dict form, checking field names and types."""
        if not isinstance(data, dict):
            raise InvalidNotationError(f"move must be an object, not {data!r}")
        unknown = set(data) - {"src", "dst", "count"}
        if unknown:
            raise InvalidNotationError(f"move has unknown fields {sorted(unknown)}")
        src, dst, count = data.get("src"), data.get("dst"), data.get("count", 1)
        for field, value in (("src", src), ("dst", dst)):
            if not isinstance(value, str) or value not in PLACE_INDEX:
                raise InvalidNotationError(
                    f"move {field} {value!r} is not a place: use col1..col8, cell1..cell4 or foundation"
                )
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 52:
            raise InvalidNotationError(f"move count {count!r} must be a whole number 1..52")
        # One shared value per distinct move (at most 13 * 13 * 52): a game's
        # history then costs a pointer per action, however long it runs.
        key: tuple[str, str, int] = (src, dst, count)  # type: ignore[assignment]  # checked above
        move = _INTERNED.get(key)
        if move is None:
            move = _INTERNED[key] = cls(*key)
        return move

    def to_dict(self) -> MoveDict:
        """The dict form, as game records and the wire carry it."""
        return {"src": self.src, "dst": self.dst, "count": self.count}


# Every move a board can make, built once and shared: MOVES[src][dst][count - 1]
# is the Move and STEPS[src][dst][count - 1] the Step of the same move. Tables
# indexed like this let move generation pick a ready value instead of building one.
MOVES: tuple[tuple[tuple[Move, ...], ...], ...] = tuple(
    tuple(
        tuple(Move(src, dst, count) for count in range(1, LONGEST_RUN + 1)) for dst in PLACE_NAMES
    )
    for src in PLACE_NAMES
)
STEPS: tuple[tuple[tuple[Step, ...], ...], ...] = tuple(
    tuple(
        tuple((src, dst, count) for count in range(1, LONGEST_RUN + 1))
        for dst in range(len(PLACE_NAMES))
    )
    for src in range(len(PLACE_NAMES))
)
# from_dict hands out the same values as the tables.
_INTERNED: dict[tuple[str, str, int], Move] = {
    move: move for row in MOVES for moves in row for move in moves
}


def move_of(src: int, dst: int, count: int = 1) -> Move:
    """The named move of place indexes: a step shown to players, or recorded."""
    if count <= LONGEST_RUN:
        return MOVES[src][dst][count - 1]
    return Move(PLACE_NAMES[src], PLACE_NAMES[dst], count)
