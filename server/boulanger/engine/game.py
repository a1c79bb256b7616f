"""A game: one player's board, history, undo and score on one deal."""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass
from typing import TypedDict

from .board import Board
from .cards import Card, parse_card
from .codes import CELL_COUNTS, GameCode
from .errors import (
    EngineError,
    IllegalMoveError,
    InvalidNotationError,
    NoDestinationError,
    NothingToUndoError,
    RecordError,
)
from .moves import FIRST_CELL, FOUNDATION, MOVES, PLACE_NAMES, Move, move_of, place_index

UNDO_LIMIT = 100
# Positions searched at most to tell a dead end (see Status.DEAD_END).
DEAD_END_SEARCH = 24

# Place name -> index for each cell count (removed cells are not places): the
# edge where a move's names become indexes.
_PLACES: dict[int, dict[str, int]] = {
    cells: {
        name: i for i, name in enumerate(PLACE_NAMES) if not FIRST_CELL + cells <= i < FOUNDATION
    }
    for cells in CELL_COUNTS
}
FOUNDATION_POINTS = 10
CELL_TO_COLUMN_POINTS = 5


class Status(enum.StrEnum):
    """Where a game stands; the value is its wire form (``"dead_end"``)."""

    PLAYING = "playing"
    WON = "won"
    # No legal move at all.
    STUCK = "stuck"
    # Legal moves exist, but no sequence of them can put another card on a
    # foundation, so the game cannot be won: only pointless moves remain.
    DEAD_END = "dead_end"


def move_points(src: int, dst: int) -> int:
    """Points a move earns: +10 to the foundation, +5 from a cell to a column."""
    if dst == FOUNDATION:
        return FOUNDATION_POINTS
    if FIRST_CELL <= src < FOUNDATION and dst < FIRST_CELL:
        return CELL_TO_COLUMN_POINTS
    return 0


class Game:
    """One player's game of a deal: play, undo, tap and double tap, score."""

    def __init__(self, code: GameCode | str) -> None:
        self.code = code if isinstance(code, GameCode) else GameCode.parse(code)
        self.board = Board.deal(self.code)
        self.score = 0
        # Every action taken, in order: a Move, or None for an undo.
        self.history: list[Move | None] = []
        # (src, dst, count, points, card) of the moves that can still be undone.
        self._undo: deque[tuple[int, int, int, int, Card]] = deque(maxlen=UNDO_LIMIT)

    def __repr__(self) -> str:
        return f"<Game {self.code} actions={self.actions} score={self.score}>"

    @property
    def actions(self) -> int:
        """How many actions were taken, undos included."""
        return len(self.history)

    @property
    def foundation_cards(self) -> int:
        """How many cards are on the foundations."""
        return self.board.foundation_cards

    @property
    def undo_depth(self) -> int:
        """How many actions can still be undone (0: none)."""
        return len(self._undo)

    @property
    def can_undo(self) -> bool:
        """Whether an action can be undone (:attr:`undo_depth` says how many)."""
        return bool(self._undo)

    # -- actions -------------------------------------------------------

    def play(self, move: Move | dict[str, object] | str) -> int:
        """Check and apply a move; return the points it earned."""
        if isinstance(move, dict):
            move = Move.from_dict(move)
        elif isinstance(move, str):
            move = Move.parse(move)
        src, dst, count, card = self.check(move)
        self.board.apply(src, dst, count)
        points = move_points(src, dst)
        self.score += points
        self._undo.append((src, dst, count, points, card))
        self.history.append(move)
        return points

    def check(self, move: Move) -> tuple[int, int, int, Card]:
        """Raise unless ``move`` is legal now; return its place indices, count and covered card.

        The game is not changed.
        """
        board = self.board
        places = _PLACES[len(board.cells)]
        try:
            src = places[move.src]
            dst = places[move.dst]
        except (KeyError, TypeError):
            # Not a place in this game: let place_index say what is wrong.
            src = place_index(move.src, len(board.cells))
            dst = place_index(move.dst, len(board.cells))
        try:
            card = board.check(src, dst, move.count)
        except IllegalMoveError as error:
            raise IllegalMoveError(f"{move}: {error}") from None
        return src, dst, move.count, card

    def undo(self) -> Move:
        """Take back the last move still in the undo history; return it."""
        if not self._undo:
            raise NothingToUndoError(
                "nothing to undo"
                if not self.history
                else f"only the last {UNDO_LIMIT} actions can be undone"
            )
        src, dst, count, points, card = self._undo.pop()
        if dst == FOUNDATION:
            self.board.take_from_foundation(card & 3, src)
        else:
            self.board.apply(dst, src, count)
        self.score = max(0, self.score - points)
        self.history.append(None)
        return MOVES[src][dst][count - 1]  # move_of, without a call: undo is hot

    def tap(self, card: Card | str) -> Move:
        """A single tap: send the card to its foundation when legal."""
        move = self.tap_move(card)
        if move is None:
            raise NoDestinationError(f"{_card(card)} cannot go to the foundation now")
        self.play(move)
        return move

    def double_tap(self, card: Card | str) -> Move:
        """A double tap: move the card (and the run it heads) where the rules choose."""
        move = self.double_tap_move(card)
        if move is None:
            raise NoDestinationError(f"{_card(card)} has no destination")
        self.play(move)
        return move

    # -- destinations --------------------------------------------------

    def locate(self, card: Card | str) -> tuple[int, int]:
        """The place index holding a card and how many cards lie on it and above it."""
        card = _card(card)
        for i, held in enumerate(self.board.cells):
            if held == card:
                return FIRST_CELL + i, 1
        for i, col in enumerate(self.board.columns):
            if card in col:
                return i, len(col) - col.index(card)
        raise IllegalMoveError(f"{card} is on its foundation")

    def tap_move(self, card: Card | str) -> Move | None:
        """The move a single tap makes (to the foundation), or None when it is not legal."""
        src, depth = self.locate(card)
        if depth != 1 or not self._legal(src, FOUNDATION, 1):
            return None
        return move_of(src, FOUNDATION)

    def double_tap_move(self, card: Card | str) -> Move | None:
        """Foundation, then the longest accepting column, an empty column, a free cell; ties leftmost."""
        src, count = self.locate(card)
        board = self.board
        if count == 1 and self._legal(src, FOUNDATION, 1):
            return move_of(src, FOUNDATION)
        best = None
        for i, col in enumerate(board.columns):
            longer = best is None or len(col) > len(board.columns[best])
            if col and i != src and longer and self._legal(src, i, count):
                best = i
        if best is None:
            best = next(
                (
                    i
                    for i, col in enumerate(board.columns)
                    if not col and self._legal(src, i, count)
                ),
                None,
            )
        if best is None and count == 1 and src < FIRST_CELL:
            best = next((FIRST_CELL + i for i, c in enumerate(board.cells) if c is None), None)
        return None if best is None else move_of(src, best, count)

    def _legal(self, src: int, dst: int, count: int) -> bool:
        try:
            self.board.check(src, dst, count)
        except IllegalMoveError:
            return False
        return True

    # -- state ---------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every legal move now (see :meth:`Board.legal_moves`)."""
        return self.board.legal_moves()

    @property
    def status(self) -> Status:
        """The convenience form of :meth:`compute_status`: every read computes it again.

        It may search (tens of microseconds): read it once per action.
        """
        return self.compute_status()

    def compute_status(self) -> Status:
        """Judge the position: won, stuck, a dead end (a bounded search) or playing.

        Not cached: the caller keeps the answer until the next action.
        """
        board = self.board
        if board.won:
            return Status.WON
        # Only a tight position (every cell full, no empty column) is searched:
        # that is where dead ends happen, and its reachable positions are few.
        # A free cell or an empty column makes the search large; it is skipped.
        # Nor is a loose position ever stuck, so it needs no move list: a card
        # that is not on its foundation lies in a cell or on a column, and
        # with a free cell, a column's top card can go to it and a cell's card
        # to it as well (cell to cell is legal, and in legal_moves); with an
        # empty column, any of those cards can go there.
        if None in board.cells or not all(board.columns):
            return Status.PLAYING
        if not board.legal_moves():
            return Status.STUCK
        if board.foundation_reachable(DEAD_END_SEARCH) is False:
            return Status.DEAD_END
        return Status.PLAYING

    # -- records -------------------------------------------------------

    def record(self) -> GameRecord:
        """The game record: the code and every action, replayable (:meth:`GameRecord.game`)."""
        return GameRecord(self.code, tuple(self.history))

    @classmethod
    def from_record(cls, data: GameRecord | object) -> Game:
        """Replay a record, or its JSON form: :class:`RecordError` names the first bad action."""
        if isinstance(data, GameRecord):
            return data.game()
        return _replay(data)[1]

    def apply_action(self, action: object) -> None:
        """Apply one record action: a move dict or ``{"undo": true}``."""
        if isinstance(action, dict) and "undo" in action:
            if len(action) != 1 or action["undo"] is not True:
                raise InvalidNotationError(
                    f"undo action must be exactly {{'undo': true}}, not {action!r}"
                )
            self.undo()
        else:
            self.play(Move.from_dict(action))


class RecordAction(TypedDict, total=False):
    """One action of a record's JSON form: a move (``src``, ``dst``, ``count``) or
    ``{"undo": true}``, and ``t`` when the server timed it."""

    src: str
    dst: str
    count: int
    undo: bool
    t: int


class RecordDict(TypedDict):
    """A game record's JSON form, as the wire, the stores and record files carry it."""

    code: str
    actions: list[RecordAction]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game as its deal and actions: :meth:`parse` reads the JSON form, :meth:`to_dict`
    writes it, and they round-trip.

    ``actions`` are moves, ``None`` for an undo; ``times``, when the server
    timed the game, the ms from the race's start at which it accepted each.
    """

    code: GameCode
    actions: tuple[Move | None, ...]
    times: tuple[int, ...] | None = None

    @classmethod
    def parse(cls, data: object) -> GameRecord:
        """A record's JSON form, replayed to check it; :class:`RecordError` names the first
        bad action (``0``: the record itself)."""
        return _replay(data)[0]

    def to_dict(self) -> RecordDict:
        """The JSON form (``t`` on each action when the record has times)."""
        actions = [_action(m) for m in self.actions]
        if self.times is not None:
            actions = [{**action, "t": t} for action, t in zip(actions, self.times, strict=True)]
        return {"code": str(self.code), "actions": actions}

    def game(self) -> Game:
        """The game this record plays (a record made by :meth:`parse` replays)."""
        game = Game(self.code)
        for move in self.actions:
            if move is None:
                game.undo()
            else:
                game.play(move)
        return game


def _action(move: Move | None) -> RecordAction:
    if move is None:
        return {"undo": True}
    return {"src": move.src, "dst": move.dst, "count": move.count}


def _replay(data: object) -> tuple[GameRecord, Game]:
    """Read and replay a record's JSON form, action by action.

    An action may carry ``"t"`` (ms from the race's start when the server
    accepted it): times must be whole, from 0 and never go back; the replay
    otherwise ignores them.
    """
    if not isinstance(data, dict) or not isinstance(data.get("actions"), list):
        raise RecordError(0, 'a record is {"code": "BK1-...", "actions": [...]}')
    try:
        game = Game(data.get("code"))  # type: ignore[arg-type]  # checked by GameCode.parse
    except EngineError as error:
        raise RecordError(0, str(error)) from None
    last_t = 0
    times: list[int] = []
    for index, action in enumerate(data["actions"], start=1):
        try:
            if isinstance(action, dict) and "t" in action:
                # When the server accepted the action (ms since the race's
                # start): checked for order, otherwise not part of the rules.
                last_t = _action_time(action["t"], last_t)
                times.append(last_t)
                action = {k: v for k, v in action.items() if k != "t"}
            game.apply_action(action)
        except EngineError as error:
            raise RecordError(index, str(error)) from None
    timed = tuple(times) if times and len(times) == len(game.history) else None
    return GameRecord(game.code, tuple(game.history), timed), game


def _action_time(t: object, last: int) -> int:
    """A record action's ``t``: a whole number of ms, never before the previous one."""
    if not isinstance(t, int) or isinstance(t, bool) or t < 0:
        raise InvalidNotationError(f"t must be a whole number of ms from 0, not {t!r}")
    if t < last:
        raise InvalidNotationError(f"t {t} goes back in time (the action before it has t {last})")
    return t


def _card(card: Card | str) -> Card:
    return card if isinstance(card, Card) else parse_card(card)
