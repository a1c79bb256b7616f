"""Game codes such as ``BK1-C4-AAAAA24``: a cell count and a deal number."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import InvalidCodeError


def _either(choices: Iterable[object]) -> str:
    """``"4, 2 or 1"``: the choices, for a message."""
    *head, last = map(str, choices)
    return f"{', '.join(head)} or {last}" if head else last


PREFIX = "BK1"
CELL_COUNTS = (4, 2, 1)
CELL_COUNTS_TEXT = _either(CELL_COUNTS)
# The cell part of a code ("C4") and the cell count it names.
_CELL_PARTS = {f"C{cells}": cells for cells in CELL_COUNTS}
MAX_DEAL = 2**31 - 1
# RFC 4648 base 32: A=0 .. Z=25, 2=26 .. 7=31.
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_DIGITS = 7


@dataclass(frozen=True, slots=True)
class GameCode:
    """A deal number (1 .. 2**31-1) and a cell count (4, 2 or 1)."""

    deal: int
    cells: int = 4

    def __post_init__(self) -> None:
        if self.cells not in CELL_COUNTS:
            raise InvalidCodeError(f"cell count must be {CELL_COUNTS_TEXT}, not {self.cells}")
        if not 1 <= self.deal <= MAX_DEAL:
            raise InvalidCodeError(f"deal number must be 1 .. {MAX_DEAL}, not {self.deal}")

    @classmethod
    def parse(cls, text: str) -> GameCode:
        """Parse a code (case-insensitive, surrounding blanks ignored)."""
        if not isinstance(text, str):
            raise InvalidCodeError(f"game code must be a string, not {text!r}")
        stripped = text.strip()
        if not stripped.isascii():
            # str.upper() would map some non-ASCII letters onto the alphabet
            # ("ı" to "I") or lengthen the text ("ß" to "SS").
            char = next(c for c in stripped if not c.isascii())
            raise InvalidCodeError(
                f"{text!r} has {char!r}: a game code is ASCII letters, digits and dashes"
            )
        parts = stripped.upper().split("-")
        if len(parts) != 3:
            raise InvalidCodeError(
                f"{text!r} is not a game code: expected BK1-C<cells>-<7 characters>"
            )
        prefix, cells, number = parts
        if prefix != PREFIX:
            raise InvalidCodeError(f"{text!r} has unknown prefix {prefix!r}: expected {PREFIX!r}")
        if cells not in _CELL_PARTS:
            raise InvalidCodeError(
                f"{text!r} has cell part {cells!r}: expected {_either(_CELL_PARTS)}"
            )
        if len(number) != _DIGITS:
            raise InvalidCodeError(
                f"{text!r} has {len(number)} deal characters: expected {_DIGITS}"
            )
        deal = 0
        for char in number:
            digit = ALPHABET.find(char)
            if digit < 0:
                raise InvalidCodeError(
                    f"{text!r} has {char!r} in its deal number: only A-Z and 2-7 are allowed"
                )
            deal = deal * 32 + digit
        if not 1 <= deal <= MAX_DEAL:
            raise InvalidCodeError(f"{text!r} names deal {deal}: valid deals are 1 .. {MAX_DEAL}")
        return cls(deal, _CELL_PARTS[cells])

    def __str__(self) -> str:
        chars = []
        value = self.deal
        for _ in range(_DIGITS):
            chars.append(ALPHABET[value % 32])
            value //= 32
        return f"{PREFIX}-C{self.cells}-{''.join(reversed(chars))}"

    def __repr__(self) -> str:
        return f"GameCode.parse({str(self)!r})"
