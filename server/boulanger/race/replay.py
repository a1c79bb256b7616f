"""A game record played back: one readable line per action, and the frames a viewer shows.

Pure: the engine replays the record; nothing here waits or does I/O. A line
reads ``12.4s 3♣ col2 → foundation`` (the time is the action's ``t``, left
out when the record has none); an undo reads ``15.0s undo 3♣ foundation →
col2`` (the move it takes back, the way it goes back). A frame is the board,
score and foundation cards after an action, as the wire shows a game.
"""

from __future__ import annotations

from typing import TypedDict

from ..engine import Board, Game, RecordDict
from ..engine.moves import FOUNDATION, Move, MoveDict, place_index
from ..solver.review import DetourWire, LosingMoveWire, ReviewWire
from .race import game_view
from .wire import BoardWire

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


class Frame(TypedDict):
    """The board, score and foundation cards after an action, and its line."""

    action: int
    t: int | None
    line: str | None
    board: BoardWire
    score: int
    foundation_cards: int


class LosingLine(LosingMoveWire):
    """The losing move, and its line as :func:`text_lines` reads it."""

    line: str


class ReviewLines(TypedDict):
    """A review with its readable lines (``GET .../review``)."""

    finding: str
    won: bool
    actions: int
    par: int | None
    detour: DetourWire | None
    last_winnable: int | None
    losing_move: LosingLine | None
    proved_lost: int
    continuation: list[MoveDict]
    seconds: float
    continuation_lines: list[str]


def _time(t: int | None) -> str:
    return f"{t / 1000:.1f}s " if isinstance(t, int) else ""


def play_back(record: RecordDict) -> list[Frame]:
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


def _frame(game: Game, action: int, t: int | None, line: str | None) -> Frame:
    view = game_view(game, "playing")
    return {
        "action": action,
        "t": t,
        "line": line,
        "board": view["board"],
        "score": view["score"],
        "foundation_cards": view["foundation_cards"],
    }


def text_lines(record: RecordDict) -> list[str]:
    """One readable line per action (see the module docstring)."""
    return [frame["line"] or "" for frame in play_back(record)[1:]]


def move_line(board: Board, move: MoveDict) -> str:
    """A move of a solver's line read on ``board`` (which is then changed by it)."""
    m = Move.from_dict(move)
    what = _cards_at(board, m.src, m.count)
    cells = len(board.cells)
    board.apply(place_index(m.src, cells), place_index(m.dst, cells), m.count)
    return f"{what} {m.src} → {m.dst}"


def review_lines(record: RecordDict, review: ReviewWire) -> ReviewLines:
    """A review (``GameReview.to_dict``) with readable lines added.

    ``losing_move.line`` is the losing move as :func:`text_lines` reads it;
    ``continuation_lines`` reads the winning line from the last winnable
    position (``last_winnable`` actions into the record).
    """
    lines = text_lines(record)
    losing = review["losing_move"]
    continuation_lines: list[str] = []
    last_winnable = review["last_winnable"]
    if last_winnable is not None and review["continuation"]:
        game = Game.from_record(
            {"code": record["code"], "actions": record["actions"][:last_winnable]}
        )
        board = game.board
        continuation_lines = [move_line(board, move) for move in review["continuation"]]
    return {
        **review,
        "losing_move": None if losing is None else {**losing, "line": lines[losing["action"] - 1]},
        "continuation_lines": continuation_lines,
    }
