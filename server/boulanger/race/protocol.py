"""Wire messages: one dataclass per message type, decoded and encoded here.

Client messages go from a browser to the server, server messages the other
way (named by who sends them). ``decode_client`` turns untrusted JSON into a
typed message or raises :class:`ProtocolError` with a stable error code; it
never lets a malformed frame reach the race logic. The document
``docs/protocol.md`` describes every type here and is tested against it.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .errors import ProtocolError

ACTION_ID_MAX = 64
NAME_MAX = 24
# Deeper JSON is refused before parsing: no message nests beyond 2 levels,
# and parsing deeper text costs stack (thousands of "[" raise RecursionError).
JSON_DEPTH_MAX = 32

JsonDict = dict[str, Any]


@dataclass(slots=True)
class Message:
    type: ClassVar[str]

    def to_wire(self) -> JsonDict:
        data: JsonDict = {"type": self.type}
        for field in dataclasses.fields(self):
            data[field.name] = getattr(self, field.name)
        return data

    def encode(self) -> str:
        return json.dumps(self.to_wire(), separators=(",", ":"))


# -- client messages ------------------------------------------------------


@dataclass(slots=True)
class Join(Message):
    type: ClassVar[str] = "join"
    role: Literal["player", "spectator"] = "player"
    name: str | None = None
    host_key: str | None = None
    token: str | None = None
    last_seq: int | None = None


@dataclass(slots=True)
class Start(Message):
    type: ClassVar[str] = "start"


@dataclass(slots=True)
class MoveAction(Message):
    type: ClassVar[str] = "move"
    action_id: str
    src: str
    dst: str
    count: int = 1


@dataclass(slots=True)
class Tap(Message):
    type: ClassVar[str] = "tap"
    action_id: str
    card: str


@dataclass(slots=True)
class DoubleTap(Message):
    type: ClassVar[str] = "double_tap"
    action_id: str
    card: str


@dataclass(slots=True)
class Undo(Message):
    type: ClassVar[str] = "undo"
    action_id: str


@dataclass(slots=True)
class Resign(Message):
    type: ClassVar[str] = "resign"
    action_id: str


@dataclass(slots=True)
class Resync(Message):
    type: ClassVar[str] = "resync"
    last_seq: int


@dataclass(slots=True)
class Watch(Message):
    type: ClassVar[str] = "watch"
    player_id: str | None


@dataclass(slots=True)
class HintRequest(Message):
    type: ClassVar[str] = "hint"


@dataclass(slots=True)
class Rematch(Message):
    type: ClassVar[str] = "rematch"


@dataclass(slots=True)
class Ping(Message):
    type: ClassVar[str] = "ping"
    t: int | None = None


@dataclass(slots=True)
class Pong(Message):
    type: ClassVar[str] = "pong"
    t: int | None = None


Action = MoveAction | Tap | DoubleTap | Undo | Resign
ACTION_TYPES = (MoveAction, Tap, DoubleTap, Undo, Resign)

# -- server messages ------------------------------------------------------


@dataclass(slots=True)
class Welcome(Message):
    type: ClassVar[str] = "welcome"
    role: str
    player_id: str | None
    token: str | None
    race: JsonDict
    game: JsonDict | None


@dataclass(slots=True)
class Ack(Message):
    type: ClassVar[str] = "ack"
    action_id: str
    seq: int
    move: JsonDict | None
    game: JsonDict


@dataclass(slots=True)
class Reject(Message):
    type: ClassVar[str] = "reject"
    action_id: str
    code: str
    reason: str


@dataclass(slots=True)
class Error(Message):
    type: ClassVar[str] = "error"
    code: str
    reason: str


@dataclass(slots=True)
class PlayerJoined(Message):
    type: ClassVar[str] = "player_joined"
    seq: int
    race_state: str
    player: JsonDict


@dataclass(slots=True)
class RaceStarting(Message):
    type: ClassVar[str] = "race_starting"
    seq: int
    race_state: str
    start_at: int
    ends_at: int
    now: int
    # The deal, now that the race starts: its code and starting position.
    code: str
    game: JsonDict


@dataclass(slots=True)
class Progress(Message):
    type: ClassVar[str] = "progress"
    seq: int
    race_state: str
    player: JsonDict
    leaderboard: list[str]


@dataclass(slots=True)
class RaceOver(Message):
    type: ClassVar[str] = "race_over"
    seq: int
    race_state: str
    reason: str
    standings: list[JsonDict]


@dataclass(slots=True)
class RematchOpened(Message):
    type: ClassVar[str] = "rematch"
    seq: int
    race_state: str
    race_id: str
    code: str | None
    url: str


@dataclass(slots=True)
class Snapshot(Message):
    type: ClassVar[str] = "snapshot"
    race: JsonDict
    game: JsonDict | None


@dataclass(slots=True)
class BoardUpdate(Message):
    type: ClassVar[str] = "board"
    player_id: str
    game: JsonDict


@dataclass(slots=True)
class HintResult(Message):
    type: ClassVar[str] = "hint_result"
    result: str
    move: JsonDict | None


@dataclass(slots=True)
class ServerPing(Message):
    type: ClassVar[str] = "ping"
    t: int | None = None


@dataclass(slots=True)
class ServerPong(Message):
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
        BoardUpdate,
        HintResult,
        ServerPing,
        ServerPong,
    )
}

# -- decoding -------------------------------------------------------------

_HINTS: dict[type[Message], dict[str, Any]] = {}


def _hints(cls: type[Message]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _matches(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arm) for arm in typing.get_args(hint))
    if origin is Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str) and _encodable(value)
    if hint is bool:
        return isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    raise TypeError(f"unsupported field type {hint!r}")


def _encodable(text: str) -> bool:
    """False for strings with lone surrogates ("\\ud800" in JSON): they have no UTF-8."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _too_deep(text: str | bytes, limit: int) -> bool:
    """True when brackets nest deeper than ``limit`` (strings are skipped)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    # Most frames have a few brackets in all: no need to look closer.
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json(text: str | bytes, depth: int = JSON_DEPTH_MAX) -> Any:
    """Untrusted JSON text parsed, or :class:`ProtocolError` ``bad_json``.

    Refuses nesting deeper than ``depth`` and numbers too long to convert
    (Python's 4,300-digit limit) the same way as any other malformed text.
    """
    if _too_deep(text, depth):
        raise ProtocolError("bad_json", f"JSON nested deeper than {depth} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", "the frame is not valid JSON") from None


def decode(data: Any, registry: dict[str, type[Message]]) -> Message:
    """Build a typed message from a parsed JSON value, checking every field."""
    if not isinstance(data, dict):
        raise ProtocolError("bad_json", "a message must be a JSON object")
    kind = data.get("type")
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError("unknown_type", f"unknown message type {str(kind)[:40]!r}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields) - {"type"}
    if unknown:
        names = ", ".join(sorted(str(u)[:40] for u in unknown)[:5])
        raise ProtocolError("bad_message", f"{kind}: unknown field(s) {names}")
    values: dict[str, Any] = {}
    for name, field in fields.items():
        if name not in data:
            no_default = field.default is dataclasses.MISSING
            if no_default and field.default_factory is dataclasses.MISSING:
                raise ProtocolError("bad_message", f"{kind}: field {name!r} is missing")
            continue
        value = data[name]
        if not _matches(value, hints[name]):
            raise ProtocolError("bad_message", f"{kind}: field {name!r} has the wrong type")
        values[name] = value
    return cls(**values)


def decode_client(text: str) -> Message:
    """Parse one client frame; raise :class:`ProtocolError` on anything malformed."""
    message = decode(parse_json(text), CLIENT_MESSAGES)
    action_id = getattr(message, "action_id", None)
    if action_id is not None and not 1 <= len(action_id) <= ACTION_ID_MAX:
        raise ProtocolError("bad_message", f"action_id must be 1..{ACTION_ID_MAX} characters")
    return message


def decode_server(text: str) -> Message:
    """Parse one server frame (for clients written in Python, and the tests)."""
    return decode(json.loads(text), SERVER_MESSAGES)
