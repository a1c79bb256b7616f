"""The typed wire shapes (race/wire.py) are what the race sends and what docs/protocol.md
shows: a field added to one and not the others fails here."""

from __future__ import annotations

import json
import re
import typing
from typing import Any

import pytest

from boulanger.race import protocol as p
from boulanger.race.ids import secret_hash
from boulanger.race.race import Race, RaceMeta
from boulanger.race.wire import GameView, SnapshotWire, StandingWire
from support.protocol_doc import DOC, examples, section

SERVER = examples(section("Server messages"))
CODE = "BK1-C4-AAAAA24"


def conforms(value: Any, shape: Any, where: str) -> None:
    """``value`` has every key ``shape`` requires and none it does not name, nested
    shapes (and lists of them) included."""
    assert isinstance(value, dict), f"{where}: not an object"
    hints = typing.get_type_hints(shape)
    required = set(shape.__required_keys__)
    assert required <= set(value), f"{where}: missing {sorted(required - set(value))}"
    assert set(value) <= set(hints), (
        f"{where}: not in {shape.__name__}: {sorted(set(value) - set(hints))}"
    )
    for key, item in value.items():
        hint = hints[key]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        inner = args[0] if args else hint
        if typing.get_origin(hint) is list and typing.is_typeddict(inner):
            for n, each in enumerate(item):
                conforms(each, inner, f"{where}.{key}[{n}]")
        elif typing.is_typeddict(inner) and item is not None:
            conforms(item, inner, f"{where}.{key}")


def _shapes(section_text: str) -> list[dict[str, Any]]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", section_text, re.S)]


def test_the_documented_messages_have_the_typed_shapes() -> None:
    for kind, field, shape in [
        ("welcome", "race", SnapshotWire),
        ("snapshot", "race", SnapshotWire),
        ("snapshot", "game", GameView),
        ("race_starting", "game", GameView),
        ("board", "game", GameView),
        ("player_joined", "player", StandingWire),
        ("progress", "player", StandingWire),
    ]:
        if SERVER[kind][field] is not None:  # a game not dealt yet, in the example
            conforms(SERVER[kind][field], shape, f"{kind}.{field}")
    for n, standing in enumerate(SERVER["race_over"]["standings"]):
        conforms(standing, StandingWire, f"race_over.standings[{n}]")


def test_the_documented_shared_shapes_are_the_typed_ones() -> None:
    standings = [s for s in _shapes(section("Shared shapes")) if "player_id" in s]
    assert len(standings) == 3  # a guest's, a signed-in player's, a held result
    for n, standing in enumerate(standings):
        conforms(standing, StandingWire, f"Standing example {n}")
    (snapshot,) = [s for s in _shapes(section("Shared shapes")) if "race_id" in s]
    conforms(snapshot, SnapshotWire, "Race snapshot")
    assert "## Shared shapes" in DOC


@pytest.mark.parametrize("signed_in", [False, True])
def test_what_a_race_sends_has_the_typed_shapes(signed_in: bool) -> None:
    race = Race(RaceMeta("r", CODE, 0, secret_hash("host"), countdown_ms=0))
    join = p.Join(name="Ann", host_key="host")
    joined = race.decide_join(join, 1, "p1", "t", signed_in=signed_in, rating=300)
    race.apply(1, joined)
    race.apply(2, race.decide_start("p1", 2))
    conforms(race.snapshot(3), SnapshotWire, "snapshot")
    conforms(race.game_of("p1"), GameView, "game")
    standing = race.standing(race.players["p1"]).to_wire()
    conforms(standing, StandingWire, "standing")
    assert ("signed_in" in standing) is signed_in
