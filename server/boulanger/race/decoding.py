"""Decoding wire messages: an untrusted JSON value in, a typed message out.

:func:`decode` checks every field of a message against its dataclass's type
hints (:mod:`.protocol`), with a checker built once per type, and raises
:class:`Refused` with a stable error code, echoing the message's ``ref`` and
``action_id`` when they are valid: a malformed frame never reaches the race
logic.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from .errors import Refused
from .protocol import ACTION_ID_MAX, REF_MAX, Message

Check = typing.Callable[[object], bool]


def _is_any(value: object) -> bool:
    return True


def _is_none(value: object) -> bool:
    return value is None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str(value: object) -> bool:
    return isinstance(value, str) and _encodable(value)


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _is_dict(value: object) -> bool:
    return isinstance(value, dict)


_SIMPLE: dict[object, Check] = {
    Any: _is_any,
    type(None): _is_none,
    int: _is_int,
    str: _is_str,
    bool: _is_bool,
}


def _check(hint: object) -> Check:
    """The test a field's value must pass, made once from the field's type hint."""
    simple = _SIMPLE.get(hint)
    if simple is not None:
        return simple
    if typing.is_typeddict(hint):  # a wire shape the server sends: an object
        return _is_dict
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


def _an_id(value: object, limit: int) -> str | None:
    """``value`` when it is a valid ``ref`` or ``action_id`` (a string of 1..limit characters)."""
    return value if isinstance(value, str) and 1 <= len(value) <= limit else None


def decode(data: object, registry: dict[str, type[Message]]) -> Message:
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


def _build(data: dict[str, object], registry: dict[str, type[Message]]) -> Message:
    kind = data.get("type")
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise Refused("unknown_type", f"unknown message type {str(kind)[:40]!r}")
    schema = _schema(cls)
    if not schema.names.issuperset(data):
        unknown = set(data) - schema.names
        names = ", ".join(sorted(str(u)[:40] for u in unknown)[:5])
        raise Refused("bad_message", f"{kind}: unknown field(s) {names}")
    values: dict[str, Any] = {}  # checked, one by one
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
