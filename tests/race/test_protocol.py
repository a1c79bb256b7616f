"""docs/protocol.md is tested against the code: every type is there and round-trips."""

from __future__ import annotations

import json
import re

import pytest

from boulanger.race import protocol as p
from boulanger.race.errors import ERROR_CODES, ProtocolError
from support.protocol_doc import examples, section

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
    message = p.decode_client(json.dumps(example))
    assert type(message) is p.CLIENT_MESSAGES[kind]
    assert message.to_wire() == {**message.to_wire(), **example}
    assert p.decode_client(message.encode()) == message


@pytest.mark.parametrize("kind", sorted(SERVER))
def test_server_examples_round_trip(kind: str) -> None:
    example = SERVER[kind]
    message = p.decode_server(json.dumps(example))
    assert type(message) is p.SERVER_MESSAGES[kind]
    assert message.to_wire() == example
    assert p.decode_server(message.encode()) == message


def test_every_error_code_is_documented() -> None:
    table = section("Error codes")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))
    assert documented == set(ERROR_CODES)


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
        ("[" * 100000 + "]" * 100000, "bad_json"),
    ],
)
def test_malformed_client_frames_get_typed_errors(frame: str, code: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        p.decode_client(frame)
    assert refused.value.code == code
