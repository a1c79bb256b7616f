"""A race as plain Python: decisions in, events out.

Every change to a race is an event in one ordered log (see the broker). Each
server process keeps a replica of a race by applying the log's events in
order, so every process derives the same players, games, standings and
leaderboard. A process *decides* on a client's request against its replica
(``decide_*``: refuse it, or produce the event to append), appends the event
only if the log has not moved on meanwhile, then *applies* it (``apply``),
which returns the event message every client of the race receives.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from ..engine import (
    CARD_NAMES,
    Board,
    EngineError,
    Game,
    GameCode,
    GameRecord,
    IllegalMoveError,
    InvalidNotationError,
    Move,
    NoDestinationError,
    NothingToUndoError,
    Status,
)
from ..engine.moves import FIRST_CELL, PLACE_INDEX
from . import protocol as p
from .condition import Condition
from .daily import day_over
from .errors import Refused
from .events import (
    Acted,
    Ended,
    Event,
    Joined,
    Judged,
    Left,
    LineMeasured,
    RematchOpened,
    Resigned,
    Started,
)
from .ids import secret_hash, secret_matches
from .names import clean_name, look_alike
from .review import LINE_REASON, LineSignal, ReviewLimits, ReviewLimitsDict, review, review_line
from .standings import Standing, leaderboard_key, rank
from .states import EndReason, PlayerStatus, RaceState
from .wire import GameView, RematchWire, SnapshotWire

MAX_PLAYERS = 8
# Action ids remembered per player for idempotence. Clients resend only the
# actions still unanswered, so the recent ones are all that can come again.
REMEMBERED_ACTIONS = 64
DEFAULT_TIME_LIMIT_S = 30 * 60
DEFAULT_COUNTDOWN_MS = 3000

# The states by their former names, kept for callers that import them.
LOBBY, COUNTDOWN, RUNNING, FINISHED = (
    RaceState.LOBBY,
    RaceState.COUNTDOWN,
    RaceState.RUNNING,
    RaceState.FINISHED,
)
_PLACE = operator.attrgetter("place")
# A game's status as a player's (the same values, one lookup per action).
_PLAYER_STATUS = {status: PlayerStatus(status.value) for status in Status}


@dataclass(slots=True)
class RaceMeta:
    """What is fixed when a race is created."""

    race_id: str
    code: str
    created_at: int
    host_key_hash: str
    time_limit_s: int = DEFAULT_TIME_LIMIT_S
    countdown_ms: int = DEFAULT_COUNTDOWN_MS
    practice: bool = False
    par: int | None = None
    winnable: bool | None = None
    # A daily challenge attempt: the UTC date and whether it is the ranked one.
    daily: str | None = None
    ranked: bool = False
    player_key_hash: str | None = None
    # The deal was picked by the server (from the catalog, or today's daily):
    # its code and layout are nobody's before the start (docs/fair-play.md).
    hidden_deal: bool = False
    # Spectators may watch the boards of players still playing.
    open_boards: bool = False
    # The limits results are reviewed against (ReviewLimits); None: not reviewed.
    review: ReviewLimitsDict | None = None

    def to_dict(self) -> RaceMetaDict:
        """The race's settings as stored beside its log."""
        return cast(RaceMetaDict, dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: RaceMetaDict) -> RaceMeta:
        """Settings as :meth:`to_dict` stored them; unknown keys (from a newer server) ignored."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**cast(dict[str, Any], {k: v for k, v in data.items() if k in known}))


class RaceMetaDict(TypedDict, total=False):
    """A race's settings as the store keeps them (:meth:`RaceMeta.to_dict`)."""

    race_id: str
    code: str
    created_at: int
    host_key_hash: str
    time_limit_s: int
    countdown_ms: int
    practice: bool
    par: int | None
    winnable: bool | None
    daily: str | None
    ranked: bool
    player_key_hash: str | None
    hidden_deal: bool
    open_boards: bool
    review: ReviewLimitsDict | None


@dataclass(slots=True)
class Player:
    """One player of a race, as the replica has them: their game and what the log said of them."""

    player_id: str
    name: str
    host: bool
    token_hash: str
    order: int
    game: Game
    resigned: bool = False
    won_at: int | None = None
    last_at: int | None = None
    status: PlayerStatus = PlayerStatus.PLAYING
    # This player's events in the log (actions and resign): the condition
    # under which the next one may be appended.
    events: int = 0
    # action_id -> the answer to each of the last REMEMBERED_ACTIONS actions: a
    # repeated action id gets the same answer. (A client resends only what is
    # still unanswered, which the message budget keeps far below this.)
    applied: dict[str, Answer] = field(default_factory=dict)
    # When each action was accepted, in ms from start_at (the record's "t").
    times: list[int] = field(default_factory=list)
    # Why the result is held for review (race.review), once it is judged.
    review: str | None = None
    reviewed: bool = False
    # A win's line (race.review.LineSignal), once measured and logged; and, when
    # it holds the win, the moderators' detail of why (the player sees LINE_REASON).
    line: LineSignal | None = None
    line_measured: bool = False
    line_held: str | None = None
    # An account's player (see events.Joined), and their rating when they joined.
    signed_in: bool = False
    rating: int | None = None
    # Their sort key in the leaderboard (Race._leaderboard_key), kept by the race
    # as their game changes: sorting on every action then builds no keys.
    place: tuple[int, int, int, int, int] = (1, 0, 0, 0, 0)
    # What the others were last told of them (Standing.seen): a progress that
    # changes none of it, nor the order, goes to this player alone.
    shown: tuple[object, ...] = ()

    @property
    def done(self) -> bool:
        """Whether the player has won or resigned."""
        return self.resigned or self.won_at is not None

    def view(self) -> GameView:
        """This player's game as the wire shows it (its status computed once per action)."""
        return game_view(self.game, self.status)


@dataclass(slots=True, frozen=True)
class Answer:
    """What an action's ``ack`` says: its event's seq, the move and the game's numbers after it.

    The move is the one made (for an undo, the one taken back; None for a
    resign) and ``card`` the card it carried (a group's highest card). The
    client applies the move to its own copy of the game and checks it
    against the numbers (docs/protocol.md, "ack").
    """

    seq: int
    move: Move | None
    card: str | None
    score: int
    actions: int
    foundation_cards: int
    status: str
    can_undo: int

    def ack(self, action_id: str, ref: str | None) -> p.Ack:
        """The ``ack`` message of the action ``action_id``."""
        move = None if self.move is None else self.move.to_dict()
        return p.Ack(
            action_id,
            self.seq,
            move,
            self.card,
            self.score,
            self.actions,
            self.foundation_cards,
            self.status,
            self.can_undo,
            ref=ref,
        )


@dataclass(slots=True)
class Duplicate:
    """The action id was applied before: answer with its ack again."""

    answer: Answer

    @property
    def seq(self) -> int:
        """The seq of the action's event."""
        return self.answer.seq


def moved_card(board: Board, move: Move) -> str:
    """The card ``move`` carries (a group's highest), read where the move takes it from."""
    src = PLACE_INDEX[move.src]
    card = board.columns[src][-move.count] if src < FIRST_CELL else board.cells[src - FIRST_CELL]
    assert card is not None
    return CARD_NAMES[card]


def game_view(game: Game, status: str | None = None) -> GameView:
    """A player's game as the wire shows it (see "Game" in docs/protocol.md).

    ``status``, when known, saves computing it again.
    """
    board = game.board
    names = CARD_NAMES
    return {
        "board": {
            "columns": [[names[c] for c in col] for col in board.columns],
            "cells": [None if c is None else names[c] for c in board.cells],
            "foundations": {
                "S": board.foundations[3],
                "H": board.foundations[2],
                "D": board.foundations[1],
                "C": board.foundations[0],
            },
        },
        "score": game.score,
        "actions": game.actions,
        "foundation_cards": board.foundation_cards,
        "status": status or game.status.value,
        # On the wire "can_undo" is the count, as docs/protocol.md says.
        "can_undo": game.undo_depth,
    }


_ENGINE_CODES: tuple[tuple[type[EngineError], str], ...] = (
    (NoDestinationError, "no_destination"),
    (IllegalMoveError, "illegal_move"),
    (NothingToUndoError, "nothing_to_undo"),
    (InvalidNotationError, "bad_notation"),
)


def _refusal(error: EngineError) -> Refused:
    for kind, code in _ENGINE_CODES:
        if isinstance(error, kind):
            return Refused(code, str(error))
    return Refused("illegal_move", str(error))


class Race:
    """One race's replica: apply events in order, decide on requests."""

    def __init__(self, meta: RaceMeta) -> None:
        self.meta = meta
        self.code = GameCode.parse(meta.code)
        self.seq = 0
        self.players: dict[str, Player] = {}
        self.joins = 0  # players who ever joined (one who left keeps their number)
        self.start_at: int | None = None
        self.ends_at: int | None = None
        self.over_reason: EndReason | None = None
        self.rematch: RematchWire | None = None
        self.rematch_seq = 0  # the rematch event's seq
        self.rematch_prev = 0  # and its prev_seq
        # The last event sent to every connection of the race (the prev_seq of
        # the next event), and the order and state it told them.
        self.told_seq = 0
        self.told_order: list[str] = []
        self.told_state: RaceState | None = None
        self.limits = None if meta.review is None else ReviewLimits.from_dict(meta.review)

    @property
    def rematch_message(self) -> p.RematchOpened:
        """The rematch event as it was sent (the race has one)."""
        assert self.rematch is not None
        r = self.rematch
        return p.RematchOpened(
            self.rematch_seq, self.rematch_prev, FINISHED, r["race_id"], r["code"], r["url"]
        )

    @property
    def race_id(self) -> str:
        return self.meta.race_id

    def state(self, now: int) -> RaceState:
        """Where the race stands at ``now`` (ms)."""
        if self.over_reason is not None:
            return FINISHED
        if self.start_at is None:
            return LOBBY
        return COUNTDOWN if now < self.start_at else RUNNING

    @property
    def host_id(self) -> str | None:
        """The host's player id, or None before the host has joined."""
        return next((p.player_id for p in self.players.values() if p.host), None)

    def player_by_token(self, token: str) -> Player | None:
        """The player whose token this is, or None."""
        wanted = secret_hash(token)
        return next((p for p in self.players.values() if p.token_hash == wanted), None)

    # -- what is secret (docs/fair-play.md) ------------------------------

    def layout_hidden(self) -> bool:
        """Whether the deal is still secret: a deal the server picked, before the start."""
        return self.meta.hidden_deal and self.start_at is None

    def code_hidden(self, now: int) -> bool:
        """Whether snapshots withhold the game code: a hidden layout, or today's daily deal."""
        if self.meta.hidden_deal and self.meta.daily is not None:
            return not day_over(self.meta.daily, now)
        return self.layout_hidden()

    def watch_refusal(self, viewer_id: str | None, player_id: str, now: int) -> Refused | None:
        """Why ``viewer_id`` (None: a spectator) may not see ``player_id``'s board now, or None.

        Anyone sees their own board, and every board once the race is over.
        Before that, a player still playing sees no one else's board; and,
        unless the race has open boards, nobody sees the board of a player
        still playing. No board shows before a secret deal is dealt.
        """
        if self.layout_hidden():
            return Refused("boards_hidden", "the deal is dealt when the race starts")
        if viewer_id == player_id:
            return None
        if self.state(now) == FINISHED:
            return None
        viewer = self.players.get(viewer_id or "")
        if viewer is not None and not viewer.done:
            return Refused("watch_refused", "players see others' boards once they have finished")
        if not self.meta.open_boards and not self.players[player_id].done:
            return Refused(
                "boards_hidden", "boards are hidden until their player finishes (no open boards)"
            )
        return None

    # -- views ---------------------------------------------------------

    def standing(self, player: Player) -> Standing:
        """One player's standing now (unranked: :meth:`standings` ranks)."""
        start = self.start_at or 0
        game = player.game
        return Standing(
            player_id=player.player_id,
            name=player.name,
            host=player.host,
            foundation_cards=game.board.foundation_cards,
            score=game.score,
            actions=game.actions,
            status=PlayerStatus.RESIGNED if player.resigned else player.status,
            elapsed_ms=max(0, player.last_at - start) if player.last_at else 0,
            rank=None,
            time_ms=None if player.won_at is None else player.won_at - start,
            review=player.review,
            line=player.line,
            line_held=player.line_held,
            order=player.order,
            signed_in=player.signed_in,
            rating=player.rating,
        )

    def _leaderboard_key(self, player: Player) -> tuple[int, int, int, int, int]:
        """The sort key of the player's standing (see standings.rank), without building it."""
        game = player.game
        won_at = player.won_at
        return leaderboard_key(
            None if won_at is None else won_at - (self.start_at or 0),
            game.board.foundation_cards,
            game.score,
            game.actions,
            player.order,
        )

    def standings(self, final: bool = False) -> list[Standing]:
        """Everyone's standing in leaderboard order; ``final`` ranks everyone."""
        return rank([self.standing(p) for p in self.players.values()], final)

    def snapshot(self, now: int) -> SnapshotWire:
        """The race as a client sees it at ``now`` (``race`` of welcome and snapshot)."""
        ordered = self.standings(final=self.over_reason is not None)
        return {
            "race_id": self.race_id,
            "code": None if self.code_hidden(now) else self.meta.code,
            "cells": self.code.cells,
            "par": self.meta.par,
            "winnable": self.meta.winnable,
            "practice": self.meta.practice,
            "daily": self.meta.daily,
            "open_boards": self.meta.open_boards,
            "state": self.state(now),
            "host_id": self.host_id,
            "start_at": self.start_at,
            "ends_at": self.ends_at,
            "now": now,
            "seq": self.seq,
            "players": [s.to_wire() for s in sorted(ordered, key=lambda s: s.order)],
            "leaderboard": [s.player_id for s in ordered],
            "rematch": self.rematch,
        }

    def game_of(self, player_id: str | None) -> GameView | None:
        """A player's own game for their welcome or snapshot (None before a secret deal)."""
        if player_id is None or self.layout_hidden():
            return None
        return self.players[player_id].view()

    def record(self, player_id: str) -> GameRecord:
        """The player's game record, every action with its time ``t``."""
        player = self.players[player_id]
        return dataclasses.replace(player.game.record(), times=tuple(player.times))

    def _review(self, player: Player) -> None:
        """Review the player's result once, when it is final (race.review)."""
        if player.reviewed:
            return
        player.reviewed = True
        if self.limits is None:
            return
        won_ms = None if player.won_at is None else player.won_at - (self.start_at or 0)
        player.review = review(player.times, self.limits, won_ms=won_ms, par=self.meta.par)

    def line_due(self, player_id: str) -> bool:
        """Whether the player's win waits for its line to be measured (LineMeasured).

        A win is final when it is made; its line is measured off the event
        loop and logged. Results are recorded elsewhere (daily leaderboard,
        ratings) once no win of the race waits, so that they follow the verdict.
        """
        player = self.players.get(player_id)
        limits = self.limits
        return (
            player is not None
            and player.won_at is not None
            and not player.line_measured
            and limits is not None
            and limits.judges_lines
            and len(player.times) >= limits.min_actions  # shorter results are not judged
        )

    def lines_pending(self) -> list[str]:
        """The players whose win waits for its line (see :meth:`line_due`)."""
        return [pid for pid in self.players if self.line_due(pid)]

    # -- decisions: refuse, or return the event to append ----------------

    def decide_join(
        self,
        message: p.Join,
        now: int,
        player_id: str,
        token: str,
        *,
        signed_in: bool = False,
        rating: int | None = None,
    ) -> Joined:
        """A new player's join event (a returning player needs no event); ``signed_in``
        and ``rating`` for an account's player (the shell knows accounts)."""
        if self.state(now) == FINISHED:
            raise Refused("race_over", "the race is over; watch it instead")
        if self.start_at is not None:
            raise Refused("already_started", "the race has started; watch it instead")
        # A daily challenge attempt is one player's game.
        limit = 1 if self.meta.daily else MAX_PLAYERS
        if len(self.players) >= limit:
            raise Refused("race_full", f"the race has {limit} player(s) already")
        holds_key = message.host_key is not None and secret_matches(
            message.host_key, self.meta.host_key_hash
        )
        if self.meta.daily and not holds_key:
            # Whoever learns an attempt's race id must not take the attempt.
            raise Refused("not_host", "a daily attempt is played by the holder of its key")
        name = clean_name(message.name or "")
        if any(look_alike(pl.name, name) for pl in self.players.values()):
            raise Refused("name_taken", f"{name!r} is taken (or looks like a name taken)")
        host = holds_key and self.host_id is None
        return Joined(now, player_id, name, host, secret_hash(token), signed_in, rating)

    def decide_leave(self, player_id: str, now: int) -> Left:
        """A player's leaving the lobby; refused once the race has started (resign
        then), and to the host, who starts the race."""
        if self.over_reason is not None:
            raise Refused("race_over", "the race is over")
        if self.start_at is not None:
            raise Refused("already_started", "the race has started; resign instead")
        if player_id == self.host_id:
            raise Refused("not_host", "the host cannot leave the lobby; close the race instead")
        return Left(now, player_id)

    def decide_start(self, player_id: str, now: int) -> Started:
        """The start event; refused unless the host starts a race not started."""
        if self.over_reason is not None:
            raise Refused("race_over", "the race is over")
        if player_id != self.host_id:
            raise Refused("not_host", "only the race's host can start it")
        if self.start_at is not None:
            raise Refused("already_started", "the race has started already")
        return Started(now, now + self.meta.countdown_ms)

    def decide_action(
        self, player_id: str, action: p.Action, now: int
    ) -> Acted | Resigned | Duplicate:
        """A player's action or resign event; a repeated action id is a :class:`Duplicate`."""
        player = self.players[player_id]
        done = player.applied.get(action.action_id)
        if done is not None:
            return Duplicate(done)
        state = self.state(now)
        if state == FINISHED or (self.ends_at is not None and now >= self.ends_at):
            raise Refused("race_over", "the race is over")
        if state != RUNNING:
            raise Refused("not_started", "the race has not started yet")
        if player.done:
            raise Refused("finished", "you have already won or resigned")
        if isinstance(action, p.Resign):
            return Resigned(now, player_id, action.action_id)
        game = player.game
        try:
            if isinstance(action, p.Undo):
                if not game.can_undo:
                    game.undo()  # raises the right NothingToUndoError
                return Acted(now, player_id, action.action_id, None)
            move = self._resolve(game, action)
        except EngineError as error:
            raise _refusal(error) from None
        return Acted(now, player_id, action.action_id, move)

    @staticmethod
    def _resolve(game: Game, action: p.Action) -> Move:
        """The move an action makes, checked against the game without changing it."""
        if isinstance(action, p.MoveAction):
            move = Move.from_dict({"src": action.src, "dst": action.dst, "count": action.count})
            game.check(move)
            return move
        if isinstance(action, p.Tap):
            found = game.tap_move(action.card)
            if found is None:
                raise NoDestinationError(f"{action.card} cannot go to the foundation now")
            return found
        assert isinstance(action, p.DoubleTap)
        found = game.double_tap_move(action.card)
        if found is None:
            raise NoDestinationError(f"{action.card} has no destination")
        return found

    def needs_judging(self, player_id: str) -> bool:
        """Whether the player's position may be stuck or a dead end, not yet judged.

        Only a tight position can be (every cell full, no empty column: see
        ``Game.compute_status``), so most positions need no judgement at all.
        """
        player = self.players[player_id]
        if player.done or player.status is not PlayerStatus.PLAYING:
            return False
        board = player.game.board
        return None not in board.cells and all(board.columns)

    def decide_status(self, player_id: str, now: int) -> Judged | None:
        """The judgement of the player's position, when it changes their status.

        Searched here, once, by the process that asks (after the player
        paused); every replica applies the verdict as logged.
        """
        player = self.players.get(player_id)
        if player is None or player.done or self.state(now) != RUNNING:
            return None
        status = _PLAYER_STATUS[player.game.compute_status()]
        if status is player.status:
            return None
        return Judged(now, player_id, status)

    def decide_over(self, now: int) -> Ended | None:
        """The race_over event when the race should end now and has not yet."""
        if self.over_reason is not None or self.start_at is None:
            return None
        if self.players and all(pl.done for pl in self.players.values()):
            return Ended(now, EndReason.ALL_DONE)
        if self.ends_at is not None and now >= self.ends_at:
            return Ended(now, EndReason.TIME_LIMIT)
        return None

    def decide_line(self, player_id: str, line: LineSignal | None, now: int) -> LineMeasured | None:
        """The event logging a win's measured line; None once it is logged (or not due)."""
        if not self.line_due(player_id):
            return None
        return LineMeasured(now, player_id, line)

    def decide_rematch(
        self, player_id: str, race_id: str, code: str | None
    ) -> RematchOpened | None:
        """The rematch event; None when the race has its rematch already (one per race)."""
        if player_id != self.host_id:
            raise Refused("not_host", "only the race's host can open a rematch")
        if self.over_reason is None:
            raise Refused("not_started", "a rematch opens once the race is over")
        if self.rematch is not None:
            return None
        return RematchOpened(0, race_id, code, f"/race/{race_id}")

    def condition(self, event: Event) -> Condition:
        """When ``event``, decided against this replica, may still be appended.

        A player's action depends only on that player's own game (and on the
        race not being over), so it needs only their events unchanged; other
        events depend on the whole race as this replica has it.
        """
        if isinstance(event, (Acted, Resigned, Judged)):
            player = self.players[event.player_id]
            return Condition(player_id=player.player_id, player_events=player.events)
        return Condition(log_length=self.seq, ends_race=isinstance(event, Ended))

    # -- applying events -------------------------------------------------

    def apply(self, seq: int, event: Event) -> p.Message:
        """Apply the log's next event (number ``seq``); return its message.

        Every client of the race is sent it, but for a ``progress`` that
        changes nothing the others see: that one goes to its player alone
        (:meth:`told`).
        """
        if seq != self.seq + 1:
            raise ValueError(f"race {self.race_id}: event {seq} applied after {self.seq}")
        self.seq = seq
        prev = self.told_seq
        # Told to everyone, unless _progress finds nothing new for the others.
        self.told_seq = seq
        match event:
            case Acted():
                return self._acted(seq, prev, event)
            case Resigned():
                return self._resigned(seq, prev, event)
            case Judged():
                return self._judged(seq, prev, event)
            case LineMeasured():
                return self._line_measured(seq, prev, event)
            case Joined():
                return self._joined(seq, prev, event)
            case Left():
                return self._left(seq, prev, event)
            case Started():
                return self._started(seq, prev, event)
            case Ended():
                return self._ended(seq, prev, event)
            case RematchOpened():
                return self._rematch_opened(seq, prev, event)
        raise ValueError(f"race {self.race_id}: unknown event {event!r}")

    def told(self, seq: int) -> bool:
        """Whether the event ``seq``, the last applied, goes to every client of the race.

        Not so for a ``progress`` that changes none of what the others see of
        the race: its player's cards on foundations, score, status, rank and
        time, the leaderboard's order and the race's state. Its message then
        goes to its player's own connections only; ``prev_seq`` in every
        event lets a client tell such an event left out from one lost
        (docs/protocol.md, "Who is sent a progress").
        """
        return self.told_seq == seq

    def _joined(self, seq: int, prev: int, event: Joined) -> p.Message:
        player = Player(
            player_id=event.player_id,
            name=event.name,
            host=event.host,
            token_hash=event.token_hash,
            order=self.joins,
            game=Game(self.code),
            signed_in=event.signed_in,
            rating=event.rating,
        )
        player.place = self._leaderboard_key(player)
        self.joins += 1
        self.players[player.player_id] = player
        standing = self.standing(player)
        player.shown = standing.seen()
        self.told_state = self.state(event.at)
        return p.PlayerJoined(seq, prev, self.told_state, standing.to_wire())

    def _left(self, seq: int, prev: int, event: Left) -> p.Message:
        self.players.pop(event.player_id, None)
        self.told_state = self.state(event.at)
        self.told_order = [s.player_id for s in self.standings()]
        return p.PlayerLeft(seq, prev, self.told_state, event.player_id, self.told_order)

    def _started(self, seq: int, prev: int, event: Started) -> p.Message:
        self.start_at = event.start_at
        self.ends_at = self.start_at + self.meta.time_limit_s * 1000
        # The deal, for everyone at once: the same starting position for all.
        self.told_state = self.state(event.at)
        return p.RaceStarting(
            seq,
            prev,
            self.told_state,
            self.start_at,
            self.ends_at,
            event.at,
            self.meta.code,
            game_view(Game(self.code)),
        )

    def _acted(self, seq: int, prev: int, event: Acted) -> p.Message:
        player = self.players[event.player_id]
        now = event.at
        # Never backwards, whichever process's clock accepted it.
        last = player.times[-1] if player.times else 0
        player.times.append(max(last, now - (self.start_at or 0)))
        move = event.move
        game = player.game
        if move is None:
            move = game.undo()
            card = moved_card(game.board, move)  # back where the move took it from
        else:
            card = moved_card(game.board, move)
            game.play(move)
        # Won or not, nothing more: whether the position is stuck or a dead
        # end is judged once the player pauses (a Judged event), not here.
        if game.board.won:
            player.status = PlayerStatus.WON
            player.won_at = now
        else:
            player.status = PlayerStatus.PLAYING
        return self._player_event(seq, prev, player, event.action_id, now, move, card)

    def _resigned(self, seq: int, prev: int, event: Resigned) -> p.Message:
        player = self.players[event.player_id]
        # The game's own status says so too (its ack, welcome and board).
        player.resigned = True
        player.status = PlayerStatus.RESIGNED
        return self._player_event(seq, prev, player, event.action_id, event.at, None, None)

    def _judged(self, seq: int, prev: int, event: Judged) -> p.Message:
        player = self.players[event.player_id]
        player.status = event.status
        player.events += 1
        return self._progress(seq, prev, player, event.at)

    def _line_measured(self, seq: int, prev: int, event: LineMeasured) -> p.Message:
        # Appended on the whole log's condition (it may come after the race is
        # over, when no player event is taken), so not one of the player's events.
        player = self.players[event.player_id]
        player.line_measured = True
        player.line = event.line
        if event.line is not None and self.limits is not None:
            player.line_held = review_line(event.line, self.limits)
            if player.line_held is not None:
                held = [player.review] if player.review else []
                player.review = "; ".join([*held, LINE_REASON])
        message = self._progress(seq, prev, player, event.at)
        # Told to everyone, held or not: once per win, and no action of the
        # player's to route it to their own connections by.
        self.told_seq = seq
        return message

    def _player_event(
        self,
        seq: int,
        prev: int,
        player: Player,
        action_id: str,
        now: int,
        move: Move | None,
        card: str | None,
    ) -> p.Message:
        """What an action and a resign have in common: the player's standing sent to all."""
        player.events += 1
        player.last_at = now
        if player.done:
            self._review(player)
        applied = player.applied
        game = player.game
        applied[action_id] = Answer(
            seq,
            move,
            card,
            game.score,
            game.actions,
            game.board.foundation_cards,
            player.status.value,
            game.undo_depth,
        )
        if len(applied) > REMEMBERED_ACTIONS:
            del applied[next(iter(applied))]  # the oldest: dicts keep insertion order
        return self._progress(seq, prev, player, now)

    def _progress(self, seq: int, prev: int, player: Player, now: int) -> p.Progress:
        """The ``progress`` event of a change to ``player``'s game or status."""
        # The order of everyone, but the standing of the one who changed only:
        # this runs for every action. Only their place in it can have changed.
        player.place = self._leaderboard_key(player)
        ordered = sorted(self.players.values(), key=_PLACE)
        mine = self.standing(player)
        if mine.time_ms is not None:
            mine.rank = ordered.index(player) + 1
        leaderboard = [pl.player_id for pl in ordered]
        state = self.state(now)
        seen = mine.seen()
        if seen == player.shown and leaderboard == self.told_order and state == self.told_state:
            self.told_seq = prev  # nothing new for the others: their player's alone
        else:
            player.shown = seen
            self.told_order = leaderboard
            self.told_state = state
        return p.Progress(seq, prev, state, mine.to_wire(), leaderboard)

    def _ended(self, seq: int, prev: int, event: Ended) -> p.Message:
        for player in self.players.values():
            # A position never judged (no pause since) is judged now, for the
            # final standings: the same search in every replica.
            if self.needs_judging(player.player_id):
                player.status = _PLAYER_STATUS[player.game.compute_status()]
        self.over_reason = event.reason
        for player in self.players.values():
            self._review(player)
        final = [s.to_wire() for s in self.standings(final=True)]
        self.told_state = FINISHED
        return p.RaceOver(seq, prev, FINISHED, self.over_reason, final)

    def _rematch_opened(self, seq: int, prev: int, event: RematchOpened) -> p.Message:
        self.rematch = {"race_id": event.race_id, "code": event.code, "url": event.url}
        self.rematch_seq, self.rematch_prev = seq, prev
        self.told_state = self.state(event.at)
        return p.RematchOpened(seq, prev, self.told_state, event.race_id, event.code, event.url)
