"""The rules of Baker's Game: pure, synchronous, standard library only."""

from .board import Board, group_capacity
from .cards import ALL_CARDS, CARD_NAMES, Card, Suit, parse_card
from .codes import GameCode
from .errors import (
    EngineError,
    IllegalMoveError,
    InvalidCodeError,
    InvalidNotationError,
    NoDestinationError,
    NothingToUndoError,
    RecordError,
)
from .game import UNDO_LIMIT, Game, GameRecord, RecordDict, Status, move_points
from .moves import PLACE_NAMES, Move, place_index

__all__ = [
    "ALL_CARDS",
    "CARD_NAMES",
    "PLACE_NAMES",
    "UNDO_LIMIT",
    "Board",
    "Card",
    "EngineError",
    "Game",
    "GameCode",
    "GameRecord",
    "IllegalMoveError",
    "InvalidCodeError",
    "InvalidNotationError",
    "Move",
    "NoDestinationError",
    "NothingToUndoError",
    "RecordDict",
    "RecordError",
    "Status",
    "Suit",
    "group_capacity",
    "move_points",
    "parse_card",
    "place_index",
]
