"""JSON, in one place: the wire's messages and the race logs' events.

The race logic works with typed values (:mod:`.race.protocol`'s messages,
:mod:`.race.events`' events) and never sees text; the web layer and the
brokers move text they do not read. This module turns one into the other.

A logged event is its JSON object with ``"seq"`` first: ``{"seq":12,"kind":...}``.
The process that appended an event has most often applied it before its own
copy comes back over pub/sub, so :func:`seq_of` reads the number from the
first bytes alone and spares parsing it. Every broker writes that layout:
with :func:`with_seq`, or (Redis) in its append script, the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from .engine import Move
from .race import protocol as p
from .race.decoding import decode
from .race.errors import Refused
from .race.events import (
    Acted,
    Ended,
    Event,
    Joined,
    Judged,
    Left,
    LineMeasured,
    Logged,
    RematchOpened,
    Resigned,
    Started,
)
from .race.review import LineSignal
from .race.states import EndReason, PlayerStatus

# Deeper JSON is refused before parsing: no message nests beyond 2 levels,
# and parsing deeper text costs stack (thousands of "[" raise RecursionError).
JSON_DEPTH_MAX = 32
SEQ_PREFIX = '{"seq":'
_COMPACT = (",", ":")
_UNDO = {"undo": True}
# What json's ensure_ascii escapes and orjson writes as it is: DEL and beyond ASCII.
_NOT_ASCII = re.compile(r"[^\x00-\x7e]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as json writes it
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def dumps(value: Any) -> str:
    """Compact JSON, byte for byte as ``json.dumps(value, separators=(",", ":"))`` writes it.

    orjson writes it several times faster; its text differs only where json
    escapes (DEL and non-ASCII as ``\\uXXXX``, which the logs have always
    held), so those characters are escaped after it. Integers beyond 64 bits
    (which orjson refuses) go through json.
    """
    try:
        data = orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=_COMPACT)
    if data.isascii() and b"\x7f" not in data:
        return data.decode()
    return _NOT_ASCII.sub(_escape, data.decode())


# -- messages ---------------------------------------------------------------


def encode(message: p.Message) -> str:
    """A message's frame, as the wire carries it (compact JSON)."""
    return dumps(message.to_wire())


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
    """Untrusted JSON text parsed, or :class:`Refused` ``bad_json``.

    Refuses nesting deeper than ``depth`` and numbers too long to convert
    (Python's 4,300-digit limit) the same way as any other malformed text.
    """
    if _too_deep(text, depth):
        raise Refused("bad_json", f"JSON nested deeper than {depth} levels")
    try:
        return orjson.loads(text)
    except ValueError:
        pass  # json reads a little more (NaN, lone surrogates): refused as before, later
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise Refused("bad_json", "the frame is not valid JSON") from None


def decode_client(text: str | bytes) -> p.Message:
    """Parse one client frame; raise :class:`Refused` on anything malformed."""
    return decode(parse_json(text), p.CLIENT_MESSAGES)


def decode_server(text: str | bytes) -> p.Message:
    """Parse one server frame (for clients written in Python, and the tests)."""
    return decode(orjson.loads(text), p.SERVER_MESSAGES)


# -- events -----------------------------------------------------------------


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event's JSON object without its seq, keys in the order the log has them."""
    match event:
        case Acted(at, player_id, action_id, move):
            action = _UNDO if move is None else move.to_dict()
            return {
                "kind": "action",
                "at": at,
                "player_id": player_id,
                "action_id": action_id,
                "action": action,
            }
        case Resigned(at, player_id, action_id):
            return {"kind": "resign", "at": at, "player_id": player_id, "action_id": action_id}
        case Judged(at, player_id, status):
            return {"kind": "status", "at": at, "player_id": player_id, "status": str(status)}
        case LineMeasured(at, player_id, line):
            signal = None if line is None else line.to_dict()
            return {"kind": "line", "at": at, "player_id": player_id, "line": signal}
        case Joined(at, player_id, name, host, token_hash, signed_in, rating):
            joined = {
                "kind": "join",
                "at": at,
                "player_id": player_id,
                "name": name,
                "host": host,
                "token_hash": token_hash,
            }
            if signed_in:  # only then: a guest's join is logged as it always was
                joined["signed_in"] = True
                joined["rating"] = rating
            return joined
        case Left(at, player_id):
            return {"kind": "leave", "at": at, "player_id": player_id}
        case Started(at, start_at):
            return {"kind": "start", "at": at, "start_at": start_at}
        case Ended(at, reason):
            return {"kind": "over", "at": at, "reason": str(reason)}
        case RematchOpened(at, race_id, code, url):
            return {"kind": "rematch", "at": at, "race_id": race_id, "code": code, "url": url}
    raise TypeError(f"not an event: {event!r}")


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event of a logged JSON object (its seq, if any, ignored)."""
    kind = data["kind"]
    at = data.get("at", 0)
    if kind == "action":
        action = data["action"]
        move = None if "undo" in action else Move.from_dict(action)
        return Acted(at, data["player_id"], data["action_id"], move)
    if kind == "resign":
        return Resigned(at, data["player_id"], data["action_id"])
    if kind == "status":
        return Judged(at, data["player_id"], PlayerStatus(data["status"]))
    if kind == "line":
        line = data["line"]
        return LineMeasured(
            at, data["player_id"], None if line is None else LineSignal.from_dict(line)
        )
    if kind == "join":
        return Joined(
            at,
            data["player_id"],
            data["name"],
            data["host"],
            data["token_hash"],
            bool(data.get("signed_in", False)),
            data.get("rating"),
        )
    if kind == "leave":
        return Left(at, data["player_id"])
    if kind == "start":
        return Started(at, data["start_at"])
    if kind == "over":
        return Ended(at, EndReason(data["reason"]))
    if kind == "rematch":
        return RematchOpened(at, data["race_id"], data["code"], data["url"])
    raise ValueError(f"unknown event kind {kind!r}")


def encode_event(event: Event) -> str:
    """The text a broker appends: the event's JSON without its seq (the broker numbers it)."""
    return dumps(event_to_dict(event))


def with_seq(seq: int, body: str) -> str:
    """The logged text of an event: ``body`` (from :func:`encode_event`) with ``"seq"`` first."""
    return f"{SEQ_PREFIX}{seq}}}" if body == "{}" else f"{SEQ_PREFIX}{seq},{body[1:]}"


def seq_of(text: str) -> int | None:
    """The seq of a logged event, read from its first bytes; None for other text."""
    if not text.startswith(SEQ_PREFIX):
        return None
    start = len(SEQ_PREFIX)
    end = text.find(",", start)
    digits = text[start : end if end >= 0 else text.find("}", start)]
    return int(digits) if digits.isdigit() else None


def decode_logged(text: str) -> Logged:
    """A logged event's text (as brokers read and publish it) as a typed event;
    ``ValueError`` for a text that is none."""
    data = orjson.loads(text)
    try:
        return Logged(data["seq"], event_from_dict(data))
    except (KeyError, TypeError) as error:
        raise ValueError(f"not a logged event: {text[:100]!r}") from error


# -- control messages -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Kick:
    """A player of ``race_id`` connected again: close their other connections (all
    but the one named ``keep``), in every process."""

    race_id: str
    player_id: str
    keep: str | None


def encode_kick(kick: Kick) -> str:
    """The text of a kick, published on the control channel (never a race's)."""
    return dumps(
        {"kind": "kick", "race_id": kick.race_id, "player_id": kick.player_id, "keep": kick.keep}
    )


def decode_control(text: str) -> Kick | None:
    """A message of the control channel; None when it is none we know (another
    version's, or not JSON: a process that shares the channel sent it)."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("kind") != "kick":
        return None
    race_id, player_id, keep = data.get("race_id"), data.get("player_id"), data.get("keep")
    if not isinstance(race_id, str) or not isinstance(player_id, str):
        return None
    return Kick(race_id, player_id, keep if isinstance(keep, str) else None)
