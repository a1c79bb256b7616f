"""Deal N laid out exactly like Microsoft FreeCell deal N."""

from __future__ import annotations

from .cards import CARDS, Card

COLUMNS = 8


def shuffled_deck(deal: int) -> list[Card]:
    """The 52 cards in dealing order for a deal number (Microsoft's shuffle)."""
    # Microsoft's deck index i is rank (i // 4) and suit (i % 4), C D H S,
    # which is our card value i + 4.
    deck = list(range(51, -1, -1))
    state = deal
    for i in range(52):
        state = (state * 214013 + 2531011) & 0x7FFFFFFF
        j = 51 - (state >> 16) % (52 - i)
        deck[i], deck[j] = deck[j], deck[i]
    return [CARDS[index + 4] for index in deck]


def deal_columns(deal: int) -> list[list[Card]]:
    """Deal round-robin into 8 columns, each listed bottom (first dealt) to top."""
    columns: list[list[Card]] = [[] for _ in range(COLUMNS)]
    for position, card in enumerate(shuffled_deck(deal)):
        columns[position % COLUMNS].append(card)
    return columns
