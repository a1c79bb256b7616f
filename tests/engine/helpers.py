"""Helpers shared by the engine tests: build boards from a few placed cards."""

from __future__ import annotations

from collections.abc import Collection

from boulanger.engine import ALL_CARDS, Board, Card, Game, GameCode, Suit

COLUMNS = 8


def cards(text: str) -> list[Card]:
    """``"KS QS JS"`` -> the cards."""
    return [Card(name) for name in text.split()]


def board_text(
    columns: dict[int, str],
    cells: list[str | None] | None = None,
    foundations: dict[Suit, int] | None = None,
    *,
    empty: Collection[int] = (),
    spare: int | None = None,
) -> str:
    """The text of a legal board holding every card once.

    ``columns`` maps 1-based column numbers to cards bottom to top;
    ``cells`` lists the cells (None = free, default four free cells);
    ``foundations`` gives the top rank per suit; ``empty`` names columns
    that must stay empty. Every card not placed anywhere is spread over
    the remaining columns (or all piled into column ``spare``), or, when
    every column is placed, buried under the placed cards.
    """
    cells = [None] * 4 if cells is None else cells
    foundations = foundations or {}
    placed: dict[int, list[Card]] = {i: cards(t) for i, t in columns.items()}
    used: set[Card] = {c for col in placed.values() for c in col}
    used |= {Card(c) for c in cells if c is not None}
    found_ranks = [0, 0, 0, 0]
    for suit, rank in foundations.items():
        found_ranks[suit] = rank
        used |= {Card.of(r, suit) for r in range(1, rank + 1)}
    rest = [c for c in ALL_CARDS if c not in used]
    fillers = [i for i in range(1, COLUMNS + 1) if i not in placed and i not in empty]
    if spare is not None:
        fillers = [spare]
    if not fillers:
        # Every column is placed: bury the rest under the placed cards.
        fillers = [i for i in placed if placed[i] and i not in empty]
    if rest and not fillers:
        raise AssertionError(f"no column to hold {len(rest)} remaining cards")
    filled: dict[int, list[Card]] = {i: [] for i in fillers}
    # Deal the rest so that no filler column ends in an accidental run:
    # put cards in an order that never stacks a card on its same-suit successor.
    for n, card in enumerate(sorted(rest, key=lambda c: (c.rank, c.suit))):
        filled[fillers[n % len(fillers)]].append(card)
    lines = [
        "foundations: "
        + " ".join(
            str(Card.of(found_ranks[s], s)) if found_ranks[s] else "--"
            for s in (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
        ),
        "cells: " + " ".join(c or "--" for c in cells),
    ]
    for i in range(1, COLUMNS + 1):
        col = filled.get(i, []) + placed.get(i, [])
        lines.append(f"col{i}:" + "".join(f" {c}" for c in col))
    return "\n".join(lines) + "\n"


def make_board(*args: object, **kwargs: object) -> Board:
    return Board.from_text(board_text(*args, **kwargs))  # type: ignore[arg-type]


def game_on(board: Board | str, cells: int | None = None) -> Game:
    """A fresh game (history and score empty) set on a given board."""
    if isinstance(board, str):
        board = Board.from_text(board)
    game = Game(GameCode(1, cells if cells is not None else len(board.cells)))
    game.board = board
    return game


def card_count(board: Board) -> dict[Card, int]:
    """How many times each card appears on the board (foundations included)."""
    counts = dict.fromkeys(ALL_CARDS, 0)
    for col in board.columns:
        for c in col:
            counts[c] += 1
    for c in board.cells:
        if c is not None:
            counts[c] += 1
    for suit in Suit:
        for rank in range(1, board.foundations[suit] + 1):
            counts[Card.of(rank, suit)] += 1
    return counts
