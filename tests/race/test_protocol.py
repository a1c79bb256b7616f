"""docs/protocol.md is tested against the code: every type is there and round-trips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from boulanger.race import protocol as p
from boulanger.race.errors import ERROR_CODES, ProtocolError

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()


def _section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end > 0 else None]


def _examples(section: str) -> dict[str, dict]:
    """Each ``### `type` `` heading with the first JSON block under it."""
    found = {}
    for match in re.finditer(r"### `([a-z_]+)`\n(.*?)(?=\n### |\Z)", section, re.S):
        block = re.search(r"```json\n(.*?)\n```", match.group(2), re.S)
        assert block, f"no example for {match.group(1)}"
        found[match.group(1)] = json.loads(block.group(1))
    return found


CLIENT = _examples(_section("Client messages"))
SERVER = _examples(_section("Server messages"))


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
    table = _section("Error codes")
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
