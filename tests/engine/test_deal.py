"""Deals: Microsoft FreeCell deal N, cross-checked against pysol_cards."""

from __future__ import annotations

import pytest
from pysol_cards.cards import CardRenderer
from pysol_cards.deal_game import Game as PysolGame
from pysol_cards.random_base import RandomBase

from boulanger.engine import ALL_CARDS, Board, Game, GameCode
from boulanger.engine.deal import deal_columns, shuffled_deck

_RENDERER = CardRenderer(True)  # print tens as T


def pysol_columns(deal: int) -> list[list[str]]:
    """Microsoft deal N for Baker's Game as dealt by the independent pysol_cards package."""
    game = PysolGame("bakers_game", deal, RandomBase.DEALS_MS)
    text = game.calc_layout_string(_RENDERER)
    return [line.split() for line in text.splitlines() if line.strip()]


def row(text: str) -> list[str]:
    return text.split()


def ours(deal: int) -> list[list[str]]:
    return [[str(c) for c in col] for col in deal_columns(deal)]


def test_deal_1_first_row_and_column_1_from_the_rules() -> None:
    columns = ours(1)
    assert [col[0] for col in columns] == row("JD 2D 9H JC 5D 7H 7C 5H")
    assert columns[0] == row("JD KD 2S 4C 3S 6D 6S")


def test_deal_1_whole_layout() -> None:
    # Microsoft FreeCell deal 1, column by column, bottom to top.
    assert ours(1) == [
        row("JD KD 2S 4C 3S 6D 6S"),
        row("2D KC KS 5C TD 8S 9C"),
        row("9H 9S 9D TS 4S 8D 2H"),
        row("JC 5S QD QH TH QS 6H"),
        row("5D AD JS 4H 8H 6C"),
        row("7H QC AS AC 2C 3D"),
        row("7C KH AH 4D JH 8C"),
        row("5H 3H 3C 7S 7D TC"),
    ]


def test_deal_1_through_its_game_code() -> None:
    game = Game("BK1-C4-AAAAAAB")
    assert [str(c) for c in game.board.columns[0]] == row("JD KD 2S 4C 3S 6D 6S")


def test_rules_example_code_is_deal_860() -> None:
    board = Board.deal(GameCode.parse("BK1-C4-AAAAA24"))
    assert [[str(c) for c in col] for col in board.columns] == ours(860) == pysol_columns(860)
    assert board.text() == (
        "foundations: -- -- -- --\n"
        "cells: -- -- -- --\n"
        "col1: TS 2H AS 5S QC 7S 2D\n"
        "col2: 4C AH 4S TD TC 7D 4H\n"
        "col3: 9D 7C 8D 5H KS QS 3H\n"
        "col4: JD 9S 6S 8C JH 8S 6C\n"
        "col5: 4D 2S JS 7H KD KH\n"
        "col6: 2C 9H KC 3D AC 5C\n"
        "col7: QD AD 8H 3C 5D 6D\n"
        "col8: 6H TH JC 9C QH 3S\n"
    )


def test_deals_1_to_1000_match_pysol_cards() -> None:
    for deal in range(1, 1001):
        assert ours(deal) == pysol_columns(deal), f"deal {deal}"


@pytest.mark.parametrize("deal", [32000, 32001, 65535, 1_000_000, 123_456_789, 2**31 - 1])
def test_large_deals_match_pysol_cards(deal: int) -> None:
    assert ours(deal) == pysol_columns(deal)


@pytest.mark.parametrize("deal", [1, 2, 617, 860, 2**31 - 1])
def test_layout_shape(deal: int) -> None:
    columns = deal_columns(deal)
    assert [len(col) for col in columns] == [7, 7, 7, 7, 6, 6, 6, 6]
    assert sorted(c for col in columns for c in col) == list(ALL_CARDS)
    deck = shuffled_deck(deal)
    # Round-robin: card i of the deck goes to column i % 8.
    assert all(columns[i % 8][i // 8] is card for i, card in enumerate(deck))


def test_deals_differ() -> None:
    assert len({tuple(map(tuple, ours(deal))) for deal in range(1, 201)}) == 200


@pytest.mark.parametrize("cells", [4, 2, 1])
def test_cell_count_gives_that_many_cells_and_the_same_layout(cells: int) -> None:
    board = Board.deal(GameCode(860, cells))
    assert board.cells == [None] * cells
    assert board.foundations == [0, 0, 0, 0]
    assert board.columns == deal_columns(860)
    assert board.text().splitlines()[1] == "cells:" + " --" * cells
