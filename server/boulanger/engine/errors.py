"""Errors raised by the engine, split by kind (all are ``ValueError``)."""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every error the engine raises on bad input."""


class InvalidCodeError(EngineError):
    """A game code that cannot be parsed or names no valid deal."""


class InvalidNotationError(EngineError):
    """A card, place, move or board text that cannot be parsed."""


class IllegalMoveError(EngineError):
    """A well-formed move that the rules forbid in the current position."""


class NoDestinationError(IllegalMoveError):
    """A tap or double tap on a card that has nowhere to go."""


class NothingToUndoError(EngineError):
    """An undo with an empty (or exhausted) history."""


class RecordError(EngineError):
    """A game record that does not replay; ``index`` is the 1-based action (0: the record itself)."""

    def __init__(self, index: int, reason: str) -> None:
        where = f"action {index}" if index else "record"
        super().__init__(f"{where}: {reason}")
        self.index = index
        self.reason = reason
