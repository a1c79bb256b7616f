"""Cards and suits.

A card is an ``int`` subclass: ``rank * 4 + suit`` with ranks 1 (ace) to 13
(king) and suits in Microsoft's order (clubs, diamonds, hearts, spades). That
makes the same-suit building rule a single comparison: ``card`` goes on
``card + 4``. All 52 cards are interned, so ``Card("7h") is Card("7H")``.
"""

from __future__ import annotations

import enum

from .errors import InvalidNotationError

RANK_CHARS = "A23456789TJQK"


class Suit(enum.IntEnum):
    """The four suits, numbered in Microsoft's order (the deal depends on it)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        """The suit's letter in card notation: ``"C"``, ``"D"``, ``"H"``, ``"S"``."""
        return "CDHS"[self]

    @property
    def symbol(self) -> str:
        """The suit's symbol, for people: ``"♣"`` .. ``"♠"``."""
        return "♣♦♥♠"[self]


class Card(int):
    """One playing card; ``str(card)`` is its notation (``"TH"``)."""

    __slots__ = ()

    def __new__(cls, text: str) -> Card:
        return parse_card(text)

    @property
    def rank(self) -> int:
        """1 (ace) to 13 (king)."""
        return int(self) >> 2

    @property
    def suit(self) -> Suit:
        """The card's suit."""
        return Suit(int(self) & 3)

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card({_NAMES[self]!r})"

    @classmethod
    def of(cls, rank: int, suit: Suit | int) -> Card:
        """The card of a rank (1..13) and a suit."""
        if not 1 <= rank <= 13 or not 0 <= suit <= 3:
            raise InvalidNotationError(f"no card has rank {rank} and suit {suit}")
        return CARDS[rank * 4 + suit]


def _make(value: int) -> Card:
    return int.__new__(Card, value)


_NAMES: dict[int, str] = {
    rank * 4 + suit: RANK_CHARS[rank - 1] + "CDHS"[suit]
    for rank in range(1, 14)
    for suit in range(4)
}
# Indexed by the card's int value; entries 0..3 are never used.
CARDS: list[Card] = [_make(v) if v >= 4 else _make(0) for v in range(56)]
ALL_CARDS: tuple[Card, ...] = tuple(CARDS[4:])
_BY_NAME: dict[str, Card] = {name: CARDS[value] for value, name in _NAMES.items()}
# Card names indexed by the card's int value: what str(card) gives, without a call.
CARD_NAMES: list[str] = [_NAMES.get(v, "") for v in range(56)]


def parse_card(text: str) -> Card:
    """Parse ``"AS"``, ``"th"``, ``"10H"`` into a card; raise on anything else."""
    if not isinstance(text, str):
        raise InvalidNotationError(f"card must be a string, not {text!r}")
    key = text.strip()
    # Only ASCII: str.upper() maps some other letters onto ours ("ſ" to "S").
    key = key.upper() if key.isascii() else ""
    if key.startswith("10"):
        key = "T" + key[2:]
    card = _BY_NAME.get(key)
    if card is None:
        raise InvalidNotationError(
            f"{text!r} is not a card: rank (A 2-9 T/10 J Q K) then suit (S H D C)"
        )
    return card
