"""A game record played back: one readable line per action, and the frames a viewer shows.

Pure: the engine replays the record; nothing here waits or does I/O. A line
reads ``12.4s 3♣ col2 → foundation`` (the time is the action's ``t``, left
out when the record has none); an undo reads ``15.0s undo 3♣ foundation →
col2`` (the move it takes back, the way it goes back). A frame is the board,
score and foundation cards after an action, as the wire shows a game.
"""

from __future__ import annotations

from typing import Any

from ..engine import Board, Game
from ..engine.moves import FOUNDATION, Move, place_index
from .race import game_view

_SUITS = "♣♦♥♠"
_RANKS = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def card_text(card: int) -> str:
    """A card as people read it: ``10♥``, ``A♠``."""
    return _RANKS[card >> 2] + _SUITS[card & 3]


def _cards_at(board: Board, place: str, count: int) -> str:
    """The card (or the run, highest first) lying on top of ``place``."""
    index = place_index(place, len(board.cells))
    if index == FOUNDATION:
        raise ValueError("a foundation's cards are not read here")
    columns = len(board.columns)
    if index >= columns:
        held = board.cells[index - columns]
        return "?" if held is None else card_text(held)
    col = board.columns[index]
    if count == 1:
        return card_text(col[-1])
    return f"{card_text(col[-count])}–{card_text(col[-1])}"


def _time(t: Any) -> str:
    return f"{t / 1000:.1f}s " if isinstance(t, int) else ""


def play_back(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame of a record: the start (action 0), then one after each action.

    A frame: ``{"action", "t", "line", "board", "score", "foundation_cards"}``;
    the start has ``t`` 0 and no line. The record is checked first
    (:class:`RecordError` names the first bad action).
    """
    Game.from_record(record)
    game = Game(record["code"])
    frames = [_frame(game, 0, 0, None)]
    for index, action in enumerate(record["actions"], start=1):
        plain = {k: v for k, v in action.items() if k != "t"}
        t = action.get("t")
        if "undo" in plain:
            # The engine gives back the move taken back; its cards are at src again.
            undone = game.undo()
            what = _cards_at(game.board, undone.src, undone.count)
            line = f"{_time(t)}undo {what} {undone.dst} → {undone.src}"
        else:
            move = Move.from_dict(plain)
            what = _cards_at(game.board, move.src, move.count)
            game.play(move)
            line = f"{_time(t)}{what} {move.src} → {move.dst}"
        frames.append(_frame(game, index, t if isinstance(t, int) else None, line))
    return frames


def _frame(game: Game, action: int, t: int | None, line: str | None) -> dict[str, Any]:
    view = game_view(game, "playing")
    return {
        "action": action,
        "t": t,
        "line": line,
        "board": view["board"],
        "score": view["score"],
        "foundation_cards": view["foundation_cards"],
    }


def text_lines(record: dict[str, Any]) -> list[str]:
    """One readable line per action (see the module docstring)."""
    return [frame["line"] for frame in play_back(record)[1:]]


def move_line(board: Board, move: dict[str, Any]) -> str:
    """A move of a solver's line read on ``board`` (which is then changed by it)."""
    m = Move.from_dict(move)
    what = _cards_at(board, m.src, m.count)
    cells = len(board.cells)
    board.apply(place_index(m.src, cells), place_index(m.dst, cells), m.count)
    return f"{what} {m.src} → {m.dst}"


def review_lines(record: dict[str, Any], review: dict[str, Any]) -> dict[str, Any]:
    """A review (``GameReview.to_dict``) with readable lines added.

    ``losing_move.line`` is the losing move as :func:`text_lines` reads it;
    ``continuation_lines`` reads the winning line from the last winnable
    position (``last_winnable`` actions into the record).
    """
    out = dict(review)
    lines = text_lines(record)
    losing = review.get("losing_move")
    if losing is not None:
        out["losing_move"] = {**losing, "line": lines[losing["action"] - 1]}
    out["continuation_lines"] = []
    if review.get("last_winnable") is not None and review.get("continuation"):
        game = Game.from_record(
            {"code": record["code"], "actions": record["actions"][: review["last_winnable"]]}
        )
        board = game.board
        out["continuation_lines"] = [move_line(board, move) for move in review["continuation"]]
    return out
