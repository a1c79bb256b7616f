"""docs/protocol.md is tested against the code: every type is there and round-trips."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import boulanger
from boulanger import codec
from boulanger.race import protocol as p
from boulanger.race.errors import ERROR_CODES, Refused
from boulanger.web import connection, refusals
from support.protocol_doc import DOC, examples, section

CLIENT = examples(section("Client messages"))
SERVER = examples(section("Server messages"))


def test_every_client_message_is_documented() -> None:
    assert set(CLIENT) == set(p.CLIENT_MESSAGES)


def test_every_server_message_is_documented() -> None:
    assert set(SERVER) == set(p.SERVER_MESSAGES)


@pytest.mark.parametrize("kind", sorted(CLIENT))
def test_client_examples_round_trip(kind: str) -> None:
    example = CLIENT[kind]
    assert example["type"] == kind
    message = codec.decode_client(json.dumps(example))
    assert type(message) is p.CLIENT_MESSAGES[kind]
    assert message.to_wire() == {**message.to_wire(), **example}
    assert codec.decode_client(codec.encode(message)) == message


@pytest.mark.parametrize("kind", sorted(SERVER))
def test_server_examples_round_trip(kind: str) -> None:
    example = SERVER[kind]
    message = codec.decode_server(json.dumps(example))
    assert type(message) is p.SERVER_MESSAGES[kind]
    assert message.to_wire() == example
    assert codec.decode_server(codec.encode(message)) == message


def test_every_error_code_is_documented() -> None:
    table = section("Error codes")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))
    assert documented == set(ERROR_CODES)


PACKAGE = Path(boulanger.__file__).parent
_CODE = re.compile(r"[a-z][a-z_]*")
# Calls that refuse with a code: the code is their first string argument of
# the first two (Refused(code, reason), error(status, code, reason),
# self.error(code, reason), Reject(id, code, ...)).
_REFUSING = {"Refused", "error", "Error", "Reject"}


def _codes_in_source() -> set[str]:
    """Every error code written literally in the server's source."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name in _REFUSING:
                    for arg in node.args[:2]:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            if _CODE.fullmatch(arg.value):
                                found.add(arg.value)
                            break
            elif isinstance(node, ast.Dict):  # {"error": {"code": "...", ...}}
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "error"
                        and isinstance(value, ast.Dict)
                    ):
                        found.update(
                            v.value
                            for k, v in zip(value.keys, value.values, strict=True)
                            if isinstance(k, ast.Constant) and k.value == "code"
                            if isinstance(v, ast.Constant) and isinstance(v.value, str)
                        )
    return found


def _documented_codes() -> set[str]:
    """Codes in the document's tables: the WebSocket ones and the HTTP ones."""
    websocket = re.findall(r"^\| `([a-z_]+)` \|", section("Error codes"), re.M)
    http = re.findall(r"^\| (?:\d{3}|any) \| `([a-z_]+)` \|", section("HTTP"), re.M)
    return {*websocket, *http}


def test_every_error_code_the_server_can_send_is_documented() -> None:
    in_source = _codes_in_source()
    # The scan finds the codes it must (it would find nothing if the code changed shape).
    assert {"not_joined", "bad_code", "no_client", "unknown_entry", "internal"} <= in_source
    assert (in_source | set(ERROR_CODES)) - _documented_codes() == set()


def test_each_http_refusal_has_the_status_the_document_gives_its_code() -> None:
    rows = re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", section("HTTP"), re.M)
    assert len(rows) > 20
    for status, code in rows:
        assert refusals.http_status(Refused(code, "why"), "/api/races") == int(status), code
    # The one code whose status depends on the route, as the route's row says.
    assert "`403` `bad_credentials`" in DOC
    changed = refusals.http_status(Refused("bad_credentials", "why"), "/api/me/password")
    assert changed == 403
    # A race's refusal met over HTTP (a name, a password) is a 400.
    assert refusals.http_status(Refused("bad_name", "why"), "/api/accounts") == 400


def test_every_close_code_is_documented() -> None:
    documented = {int(c) for c in re.findall(r"^\| (\d{4}) \|", section("Connection"), re.M)}
    constants = {v for k, v in vars(connection).items() if k.startswith("CLOSE_")}
    assert len(constants) >= 10
    assert constants <= documented
    # And nothing documented that the server never sends.
    assert documented <= constants


def test_the_document_names_every_message_type_it_mentions() -> None:
    """Message types quoted in the text exist (no stale names after a rename)."""
    quoted = set(re.findall(r"`([a-z_]+)` event", DOC))
    assert quoted <= set(p.SERVER_MESSAGES), quoted - set(p.SERVER_MESSAGES)


def test_ref_is_echoed_only_when_given() -> None:
    ack = ("a1", 3, None, None, 0, 0, 0, "resigned", 0)
    assert "ref" not in p.Ack(*ack).to_wire()
    assert p.Ack(*ack, ref="r1").to_wire()["ref"] == "r1"
    error = p.Error("bad_message", "why").to_wire()
    assert error == {"type": "error", "code": "bad_message", "reason": "why"}
    assert codec.decode_client('{"type": "ping", "t": 1, "ref": "x"}') == p.Ping(1, ref="x")


@pytest.mark.parametrize(
    ("frame", "ref", "action_id"),
    [
        ('{"type": "move", "action_id": "a9", "src": 3, "ref": "r9"}', "r9", "a9"),
        ('{"type": "move", "action_id": "a9", "src": "col1"}', None, "a9"),
        ('{"type": "start", "extra": 1, "ref": "r1"}', "r1", None),
        ('{"type": "teleport", "ref": "r2"}', "r2", None),
        ('{"type": "ping", "ref": ""}', None, None),  # not a valid ref: nothing to echo
        ('{"type": "undo", "action_id": "' + "x" * 65 + '", "ref": "r3"}', "r3", None),
        ('{"type": "ping", "ref": ["r4"]}', None, None),
    ],
)
def test_a_refusal_carries_the_ids_it_could_read(
    frame: str, ref: str | None, action_id: str | None
) -> None:
    with pytest.raises(Refused) as refused:
        codec.decode_client(frame)
    assert refused.value.code in ("bad_message", "unknown_type")
    assert (refused.value.ref, refused.value.action_id) == (ref, action_id)


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("not json", "bad_json"),
        ("[1, 2]", "bad_json"),
        ('"join"', "bad_json"),
        ("{}", "unknown_type"),
        ('{"type": "fly"}', "unknown_type"),
        ('{"type": 7}', "unknown_type"),
        ('{"type": "move", "action_id": "a", "src": "col1"}', "bad_message"),
        ('{"type": "move", "action_id": "a", "src": "col1", "dst": 3}', "bad_message"),
        (
            '{"type": "move", "action_id": "a", "src": "col1", "dst": "cell1", "count": true}',
            "bad_message",
        ),
        ('{"type": "move", "action_id": "", "src": "col1", "dst": "cell1"}', "bad_message"),
        ('{"type": "undo", "action_id": "' + "x" * 65 + '"}', "bad_message"),
        ('{"type": "join", "role": "king"}', "bad_message"),
        ('{"type": "start", "extra": 1}', "bad_message"),
        ('{"type": "resync"}', "bad_message"),
        ('{"type": "resync", "last_seq": 1, "ref": ""}', "bad_message"),
        ('{"type": "hint", "ref": "' + "r" * 65 + '"}', "bad_message"),
        ('{"type": "hint", "ref": 7}', "bad_message"),
        ("[" * 100000 + "]" * 100000, "bad_json"),
    ],
)
def test_malformed_client_frames_get_typed_errors(frame: str, code: str) -> None:
    with pytest.raises(Refused) as refused:
        codec.decode_client(frame)
    assert refused.value.code == code


def test_the_acks_own_wire_form_is_the_generic_one() -> None:
    move = {"src": "col1", "dst": "cell1", "count": 1}
    for ref in (None, "r1"):
        ack = p.Ack("a1", 3, move, "6S", 0, 1, 0, "playing", 1, ref=ref)
        assert ack.to_wire() == p.Message.to_wire(ack)
        assert list(ack.to_wire()) == list(p.Message.to_wire(ack))  # the same order too
