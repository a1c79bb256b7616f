"""Wire messages: one dataclass per message type, decoded and encoded here.

Client messages go from a browser to the server, server messages the other
way (named by who sends them). :func:`decode` turns an untrusted JSON value
into a typed message or raises :class:`Refused` with a stable error
code; it never lets a malformed frame reach the race logic. The text of
frames is :mod:`boulanger.codec`'s business. The document
``docs/protocol.md`` describes every type here and is tested against it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .errors import Refused

ACTION_ID_MAX = 64
REF_MAX = 64
NAME_MAX = 24

JsonDict = dict[str, Any]


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
    race: JsonDict
    game: JsonDict | None


@dataclass(slots=True)
class Ack(Message):
    """An action accepted: its seq in the log, the move made (and the card it carried)
    and the numbers of the player's game after it (the game itself is the client's to
    keep: it applies the move)."""

    type: ClassVar[str] = "ack"
    action_id: str
    seq: int
    move: JsonDict | None
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
    player: JsonDict


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
    game: JsonDict


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
    player: JsonDict
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
    standings: list[JsonDict]


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
    race: JsonDict
    game: JsonDict | None


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
    game: JsonDict


@dataclass(slots=True)
class HintResult(Message):
    """The answer to a hint request."""

    type: ClassVar[str] = "hint_result"
    result: str
    move: JsonDict | None


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

# -- decoding -------------------------------------------------------------

Check = typing.Callable[[Any], bool]


def _is_any(value: Any) -> bool:
    return True


def _is_none(value: Any) -> bool:
    return value is None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and _encodable(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


_SIMPLE: dict[Any, Check] = {
    Any: _is_any,
    type(None): _is_none,
    int: _is_int,
    str: _is_str,
    bool: _is_bool,
}


def _check(hint: Any) -> Check:
    """The test a field's value must pass, made once from the field's type hint."""
    simple = _SIMPLE.get(hint)
    if simple is not None:
        return simple
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        if len(arms) == 2 and type(None) in arms:  # X | None: the usual optional field
            inner = _check(next(arm for arm in arms if arm is not type(None)))
            return lambda value: value is None or inner(value)
        checks = tuple(_check(arm) for arm in arms)
        return lambda value: any(check(value) for check in checks)
    if origin is Literal:
        allowed = typing.get_args(hint)
        return lambda value: value in allowed
    if origin is list:
        (item,) = typing.get_args(hint)
        each = _check(item)
        return lambda value: isinstance(value, list) and all(each(v) for v in value)
    if origin is dict:
        return _is_dict
    raise TypeError(f"unsupported field type {hint!r}")


@dataclass(frozen=True, slots=True)
class _Schema:
    """What decoding checks of one message type, worked out once per type."""

    names: frozenset[str]  # the fields, and "type"
    # (name, check, required) of each field, in the dataclass's order.
    fields: tuple[tuple[str, Check, bool], ...]


_SCHEMAS: dict[type[Message], _Schema] = {}


def _schema(cls: type[Message]) -> _Schema:
    schema = _SCHEMAS.get(cls)
    if schema is None:
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)
        schema = _Schema(
            frozenset(f.name for f in fields) | {"type"},
            tuple(
                (
                    f.name,
                    _check(hints[f.name]),
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                )
                for f in fields
            ),
        )
        _SCHEMAS[cls] = schema
    return schema


def _encodable(text: str) -> bool:
    """False for strings with lone surrogates ("\\ud800" in JSON): they have no UTF-8."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _an_id(value: Any, limit: int) -> str | None:
    """``value`` when it is a valid ``ref`` or ``action_id`` (a string of 1..limit characters)."""
    return value if isinstance(value, str) and 1 <= len(value) <= limit else None


def decode(data: Any, registry: dict[str, type[Message]]) -> Message:
    """Build a typed message from a parsed JSON value, checking every field.

    A refusal carries the message's ``ref`` and ``action_id`` when they are
    valid, so that the answer can echo them.
    """
    if not isinstance(data, dict):
        raise Refused("bad_json", "a message must be a JSON object")
    try:
        return _build(data, registry)
    except Refused as error:
        error.ref = _an_id(data.get("ref"), REF_MAX)
        error.action_id = _an_id(data.get("action_id"), ACTION_ID_MAX)
        raise


def _build(data: dict[str, Any], registry: dict[str, type[Message]]) -> Message:
    kind = data.get("type")
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise Refused("unknown_type", f"unknown message type {str(kind)[:40]!r}")
    schema = _schema(cls)
    if not schema.names.issuperset(data):
        unknown = set(data) - schema.names
        names = ", ".join(sorted(str(u)[:40] for u in unknown)[:5])
        raise Refused("bad_message", f"{kind}: unknown field(s) {names}")
    values: dict[str, Any] = {}
    for name, check, required in schema.fields:
        if name not in data:
            if required:
                raise Refused("bad_message", f"{kind}: field {name!r} is missing")
            continue
        value = data[name]
        if not check(value):
            raise Refused("bad_message", f"{kind}: field {name!r} has the wrong type")
        values[name] = value
    for name, limit in (("ref", REF_MAX), ("action_id", ACTION_ID_MAX)):
        if values.get(name) is not None and _an_id(values[name], limit) is None:
            raise Refused("bad_message", f"{name} must be 1..{limit} characters")
    return cls(**values)
