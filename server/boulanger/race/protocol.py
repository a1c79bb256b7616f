"""Wire messages: one dataclass per message type, decoded and encoded here.

Client messages go from a browser to the server, server messages the other
way (named by who sends them). :func:`.decoding.decode` turns an untrusted
JSON value into a typed message or raises :class:`Refused` with a stable
error code; it never lets a malformed frame reach the race logic. The text
of frames is :mod:`boulanger.codec`'s business. The document
``docs/protocol.md`` describes every type here and is tested against it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ..engine.moves import MoveDict
from .wire import GameView, SnapshotWire, StandingWire

ACTION_ID_MAX = 64
REF_MAX = 64
NAME_MAX = 24

# A message's JSON object, as the codec encodes it.
JsonDict = dict[str, object]


@dataclass(slots=True)
class Message:
    """Every message may carry a ``ref``: a client chooses it for any message,
    and the server echoes it in that message's direct answers (ack, reject,
    error, welcome, snapshot, resync_done, board, hint_result, pong); events
    never carry one."""

    type: ClassVar[str]
    # Fields left out of the wire form when they are None.
    omitted_when_none: ClassVar[frozenset[str]] = frozenset({"ref"})
    ref: str | None = field(default=None, kw_only=True)

    def to_wire(self) -> JsonDict:
        """The message as a JSON object: ``type`` first, ``ref`` last, optional Nones left out."""
        data: JsonDict = {"type": self.type}
        omitted = self.omitted_when_none
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is None and item.name in omitted:
                continue
            data[item.name] = value
        if "ref" in data:  # last, where a reader looks for it
            data["ref"] = data.pop("ref")
        return data


# -- client messages ------------------------------------------------------


@dataclass(slots=True)
class Join(Message):
    """Join a race as a player (new, or returning with ``token``) or as a spectator."""

    type: ClassVar[str] = "join"
    role: Literal["player", "spectator"] = "player"
    name: str | None = None
    host_key: str | None = None
    token: str | None = None
    last_seq: int | None = None


@dataclass(slots=True)
class Start(Message):
    """The host starts the race (after the countdown)."""

    type: ClassVar[str] = "start"


@dataclass(slots=True)
class Leave(Message):
    """A player leaves the lobby before the start (a quick race's queue, say)."""

    type: ClassVar[str] = "leave"


@dataclass(slots=True)
class MoveAction(Message):
    """Move ``count`` cards from ``src`` to ``dst`` (place names)."""

    type: ClassVar[str] = "move"
    action_id: str
    src: str
    dst: str
    count: int = 1


@dataclass(slots=True)
class Tap(Message):
    """A card tapped: to the foundation if it can go there."""

    type: ClassVar[str] = "tap"
    action_id: str
    card: str


@dataclass(slots=True)
class DoubleTap(Message):
    """A card double-tapped: to its best destination."""

    type: ClassVar[str] = "double_tap"
    action_id: str
    card: str


@dataclass(slots=True)
class Undo(Message):
    """Take back the player's last move."""

    type: ClassVar[str] = "undo"
    action_id: str


@dataclass(slots=True)
class Resign(Message):
    """The player gives up this race."""

    type: ClassVar[str] = "resign"
    action_id: str


@dataclass(slots=True)
class Resync(Message):
    """The events after ``last_seq`` again (or a snapshot)."""

    type: ClassVar[str] = "resync"
    last_seq: int


@dataclass(slots=True)
class Watch(Message):
    """Follow a player's board (None: stop)."""

    type: ClassVar[str] = "watch"
    player_id: str | None


@dataclass(slots=True)
class HintRequest(Message):
    """A hint, in a practice game."""

    type: ClassVar[str] = "hint"


@dataclass(slots=True)
class Rematch(Message):
    """The host opens the race's rematch."""

    type: ClassVar[str] = "rematch"


@dataclass(slots=True)
class Ping(Message):
    """The client checks the connection; answered with a pong."""

    type: ClassVar[str] = "ping"
    t: int | None = None


@dataclass(slots=True)
class Pong(Message):
    """The client's answer to a server ping."""

    type: ClassVar[str] = "pong"
    t: int | None = None


Action = MoveAction | Tap | DoubleTap | Undo | Resign
ACTION_TYPES = (MoveAction, Tap, DoubleTap, Undo, Resign)

# -- server messages ------------------------------------------------------


@dataclass(slots=True)
class Welcome(Message):
    """The answer to a join: who the connection is, the race and the player's game."""

    type: ClassVar[str] = "welcome"
    role: str
    player_id: str | None
    token: str | None
    race: SnapshotWire
    game: GameView | None


@dataclass(slots=True)
class Ack(Message):
    """An action accepted: its seq in the log, the move made (and the card it carried)
    and the numbers of the player's game after it (the game itself is the client's to
    keep: it applies the move)."""

    type: ClassVar[str] = "ack"
    action_id: str
    seq: int
    move: MoveDict | None
    card: str | None
    score: int
    actions: int
    foundation_cards: int
    status: str
    can_undo: int

    def to_wire(self) -> JsonDict:
        """:meth:`Message.to_wire`, written out: one ack per action makes it hot."""
        data: JsonDict = {
            "type": "ack",
            "action_id": self.action_id,
            "seq": self.seq,
            "move": self.move,
            "card": self.card,
            "score": self.score,
            "actions": self.actions,
            "foundation_cards": self.foundation_cards,
            "status": self.status,
            "can_undo": self.can_undo,
        }
        if self.ref is not None:
            data["ref"] = self.ref
        return data


@dataclass(slots=True)
class Reject(Message):
    """An action refused, with a stable code."""

    type: ClassVar[str] = "reject"
    action_id: str
    code: str
    reason: str


@dataclass(slots=True)
class Error(Message):
    """A message refused (other than an action), with a stable code."""

    type: ClassVar[str] = "error"
    omitted_when_none: ClassVar[frozenset[str]] = frozenset({"ref", "action_id"})
    code: str
    reason: str
    # The action's id, when the message refused is an action that could not be read.
    action_id: str | None = None


@dataclass(slots=True)
class PlayerJoined(Message):
    """Event: a player joined."""

    type: ClassVar[str] = "player_joined"
    seq: int
    prev_seq: int
    race_state: str
    player: StandingWire


@dataclass(slots=True)
class PlayerLeft(Message):
    """Event: a player left the lobby; they are no longer in the race."""

    type: ClassVar[str] = "player_left"
    seq: int
    prev_seq: int
    race_state: str
    player_id: str
    leaderboard: list[str]


@dataclass(slots=True)
class QueueState(Message):
    """A quick race's queue, to everyone connected to it while it waits: the
    players connected, how many start it at once, and when it starts at the
    latest (None until a second player is connected)."""

    type: ClassVar[str] = "queue"
    waiting: int
    players: int
    start_by: int | None
    now: int


@dataclass(slots=True)
class RaceStarting(Message):
    """Event: the race starts at ``start_at``, and its deal."""

    type: ClassVar[str] = "race_starting"
    seq: int
    prev_seq: int
    race_state: str
    start_at: int
    ends_at: int
    now: int
    # The deal, now that the race starts: its code and starting position.
    code: str
    game: GameView


@dataclass(slots=True)
class Progress(Message):
    """Event: a player acted; their standing and everyone's order.

    Sent to the other connections of the race only when it changes what they
    see (``Race.apply`` decides, docs/protocol.md "Who is sent a progress").
    """

    type: ClassVar[str] = "progress"
    seq: int
    prev_seq: int
    race_state: str
    player: StandingWire
    leaderboard: list[str]

    def to_wire(self) -> JsonDict:
        """:meth:`Message.to_wire`, written out: one progress per action makes it hot."""
        data: JsonDict = {
            "type": "progress",
            "seq": self.seq,
            "prev_seq": self.prev_seq,
            "race_state": self.race_state,
            "player": self.player,
            "leaderboard": self.leaderboard,
        }
        if self.ref is not None:
            data["ref"] = self.ref
        return data


@dataclass(slots=True)
class RaceOver(Message):
    """Event: the race is over; the final standings."""

    type: ClassVar[str] = "race_over"
    seq: int
    prev_seq: int
    race_state: str
    reason: str
    standings: list[StandingWire]


@dataclass(slots=True)
class RematchOpened(Message):
    """Event: the race's rematch is open at ``url``."""

    type: ClassVar[str] = "rematch"
    seq: int
    prev_seq: int
    race_state: str
    race_id: str
    code: str | None
    url: str


@dataclass(slots=True)
class Snapshot(Message):
    """The whole race now (and the player's game), for a client too far behind."""

    type: ClassVar[str] = "snapshot"
    race: SnapshotWire
    game: GameView | None


@dataclass(slots=True)
class ResyncDone(Message):
    """The end of the answer to ``resync`` (or to a ``join`` with ``last_seq``)."""

    type: ClassVar[str] = "resync_done"
    seq: int


@dataclass(slots=True)
class BoardUpdate(Message):
    """A watched player's board after their action."""

    type: ClassVar[str] = "board"
    player_id: str
    game: GameView


@dataclass(slots=True)
class HintResult(Message):
    """The answer to a hint request."""

    type: ClassVar[str] = "hint_result"
    result: str
    move: MoveDict | None


@dataclass(slots=True)
class ServerPing(Message):
    """The server checks the connection; the client answers with a pong."""

    type: ClassVar[str] = "ping"
    t: int | None = None


@dataclass(slots=True)
class ServerPong(Message):
    """The answer to a client's ping."""

    type: ClassVar[str] = "pong"
    t: int | None = None


CLIENT_MESSAGES: dict[str, type[Message]] = {
    cls.type: cls
    for cls in (
        Join,
        Start,
        Leave,
        MoveAction,
        Tap,
        DoubleTap,
        Undo,
        Resign,
        Resync,
        Watch,
        HintRequest,
        Rematch,
        Ping,
        Pong,
    )
}
SERVER_MESSAGES: dict[str, type[Message]] = {
    cls.type: cls
    for cls in (
        Welcome,
        Ack,
        Reject,
        Error,
        PlayerJoined,
        PlayerLeft,
        QueueState,
        RaceStarting,
        Progress,
        RaceOver,
        RematchOpened,
        Snapshot,
        ResyncDone,
        BoardUpdate,
        HintResult,
        ServerPing,
        ServerPong,
    )
}
