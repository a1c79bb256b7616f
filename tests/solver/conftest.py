"""Shared helpers for the solver tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from boulanger.engine import Game, GameCode

Replay = Callable[[GameCode | str, list[dict[str, Any]]], bool]


def _replays_to_win(code: GameCode | str, actions: list[dict[str, Any]]) -> bool:
    """Whether the actions, replayed by the engine from the deal, win."""
    game = Game.from_record({"code": str(code), "actions": actions})
    return game.board.won


@pytest.fixture
def replays_to_win() -> Replay:
    return _replays_to_win
