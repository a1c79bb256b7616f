"""Card notation: parse and format, ranks, suits, the same-suit building order."""

from __future__ import annotations

import pytest

from boulanger.engine import ALL_CARDS, Card, InvalidNotationError, Suit, parse_card
from boulanger.engine.cards import CARDS


def test_there_are_52_distinct_cards() -> None:
    assert len(ALL_CARDS) == 52
    assert len({str(c) for c in ALL_CARDS}) == 52
    assert {(c.rank, c.suit) for c in ALL_CARDS} == {
        (rank, suit) for rank in range(1, 14) for suit in Suit
    }


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("AS", 1, Suit.SPADES),
        ("2H", 2, Suit.HEARTS),
        ("9D", 9, Suit.DIAMONDS),
        ("TC", 10, Suit.CLUBS),
        ("JS", 11, Suit.SPADES),
        ("QH", 12, Suit.HEARTS),
        ("KD", 13, Suit.DIAMONDS),
    ],
)
def test_parse_rank_and_suit(text: str, rank: int, suit: Suit) -> None:
    card = Card(text)
    assert (card.rank, card.suit) == (rank, suit)
    assert str(card) == text
    assert card is Card.of(rank, suit)


@pytest.mark.parametrize("text", ["10H", "10h", "th", "Th", "tH", " TH ", "\t10H\n"])
def test_ten_has_canonical_t(text: str) -> None:
    assert str(parse_card(text)) == "TH"
    assert parse_card(text) is Card("TH")


@pytest.mark.parametrize("text", ["as", "aS", "kd", "qc", "7h"])
def test_lower_case_is_accepted_and_formatted_upper(text: str) -> None:
    assert str(Card(text)) == text.upper()


def test_cards_are_interned() -> None:
    assert Card("7h") is Card("7H") is Card.of(7, Suit.HEARTS)


def test_every_card_round_trips_through_its_notation() -> None:
    for card in ALL_CARDS:
        assert parse_card(str(card)) is card
        assert repr(card) == f"Card({str(card)!r})"


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "A",
        "S",
        "1H",
        "11H",
        "0H",
        "10",
        "T10",
        "100H",
        "TX",
        "ZS",
        "AHH",
        "H10",
        "SA",
        "A S",
        "A♠",
        "Aſ",  # the long s upper-cases to S
        "１H",  # fullwidth digit one
        "--",
    ],
)
def test_bad_notation_is_refused_quoting_the_input(text: str) -> None:
    with pytest.raises(InvalidNotationError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("value", [None, 7, b"AS", ["AS"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidNotationError, match="must be a string"):
        parse_card(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("rank", "suit"), [(0, 0), (14, 0), (1, 4), (1, -1)])
def test_card_of_refuses_bad_rank_or_suit(rank: int, suit: int) -> None:
    with pytest.raises(InvalidNotationError):
        Card.of(rank, suit)


def test_invalid_notation_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Card("XX")


def test_same_suit_one_higher_is_plus_four() -> None:
    # The building rule: a card goes on the same suit, one rank higher.
    for card in ALL_CARDS:
        if card.rank < 13:
            higher = CARDS[card + 4]
            assert (higher.rank, higher.suit) == (card.rank + 1, card.suit)


def test_suit_letters_and_symbols() -> None:
    assert [s.letter for s in Suit] == ["C", "D", "H", "S"]
    assert [s.symbol for s in Suit] == ["♣", "♦", "♥", "♠"]
