"""The codec: events keep the bytes the logs have always held, and round-trip."""

from __future__ import annotations

import pytest

from boulanger import codec
from boulanger.engine import Move
from boulanger.race.events import (
    EVENT_TYPES,
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
from boulanger.race.review import LineSignal
from boulanger.race.states import PlayerStatus

# Each event type as a log holds it (the bytes written before events had types).
LOGGED: list[tuple[Event, str]] = [
    (
        Joined(5, "p1", "Zoë", True, "ab12"),
        '{"kind":"join","at":5,"player_id":"p1","name":"Zo\\u00eb","host":true,"token_hash":"ab12"}',
    ),
    (Started(7, 3007), '{"kind":"start","at":7,"start_at":3007}'),
    (
        Acted(9, "p1", "a1", Move("col1", "cell1", 1)),
        '{"kind":"action","at":9,"player_id":"p1","action_id":"a1",'
        '"action":{"src":"col1","dst":"cell1","count":1}}',
    ),
    (
        Acted(10, "p1", "a\u00e92", None),
        '{"kind":"action","at":10,"player_id":"p1","action_id":"a\\u00e92","action":{"undo":true}}',
    ),
    (
        Resigned(11, "p2", "r"),
        '{"kind":"resign","at":11,"player_id":"p2","action_id":"r"}',
    ),
    (
        Judged(13, "p2", PlayerStatus.DEAD_END),
        '{"kind":"status","at":13,"player_id":"p2","status":"dead_end"}',
    ),
    (
        LineMeasured(14, "p1", LineSignal(94, 0, 94, 42, 42, 42, 0, 15, 27, 776, 724, 5957, 0.549)),
        '{"kind":"line","at":14,"player_id":"p1","line":{"actions":94,"undos":0,"par":94,'
        '"decisions":42,"on_line":42,"longest_run":42,"unmeasured":0,"hard":15,"easy":27,'
        '"hard_pause_ms":776,"easy_pause_ms":724,"positions":5957,"seconds":0.549}}',
    ),
    (  # a win whose line could not be measured
        LineMeasured(15, "p2", None),
        '{"kind":"line","at":15,"player_id":"p2","line":null}',
    ),
    (Ended(12, "all_done"), '{"kind":"over","at":12,"reason":"all_done"}'),
    (
        RematchOpened(0, "r2", None, "/race/r2"),
        '{"kind":"rematch","at":0,"race_id":"r2","code":null,"url":"/race/r2"}',
    ),
    (  # a signed-in player's join: two fields more, after the old ones
        Joined(6, "p2", "Bo", False, "cd34", True, 312),
        '{"kind":"join","at":6,"player_id":"p2","name":"Bo","host":false,"token_hash":"cd34",'
        '"signed_in":true,"rating":312}',
    ),
    (Left(8, "p3"), '{"kind":"leave","at":8,"player_id":"p3"}'),
]


def test_every_event_type_is_covered() -> None:
    assert {type(event) for event, _ in LOGGED} == set(EVENT_TYPES.values())


@pytest.mark.parametrize(("event", "text"), LOGGED, ids=lambda x: type(x).__name__)
def test_events_keep_their_bytes_and_round_trip(event: Event, text: str) -> None:
    assert codec.encode_event(event) == text
    logged = codec.with_seq(41, text)
    assert logged == '{"seq":41,' + text[1:]
    assert codec.seq_of(logged) == 41
    assert codec.decode_logged(logged) == Logged(41, event)


def test_a_decoded_move_is_the_shared_one() -> None:
    logged = codec.decode_logged(codec.with_seq(1, codec.encode_event(LOGGED[2][0])))
    assert isinstance(logged.event, Acted)
    assert logged.event.move is Move.from_dict({"src": "col1", "dst": "cell1", "count": 1})


def test_seq_of_reads_only_logged_events() -> None:
    assert codec.seq_of('{"seq":7}') == 7
    assert codec.seq_of('{"seq":12,"kind":"over"}') == 12
    kick = codec.encode_kick(codec.Kick("r1", "p1", "n1"))
    assert codec.seq_of(kick) is None
    assert codec.decode_control(kick) == codec.Kick("r1", "p1", "n1")
    assert codec.seq_of('{"seq":"x","kind":"over"}') is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1]",
        '{"kind":"reboot"}',
        '{"kind":"kick","player_id":"p1"}',  # no race: an older version's kick
        '{"kind":"kick","race_id":7,"player_id":"p1"}',
    ],
)
def test_a_control_message_of_no_known_kind_is_none(text: str) -> None:
    assert codec.decode_control(text) is None


@pytest.mark.parametrize(
    "value",
    [
        {"name": "Zoë", "t": "日本", "e": "😀", "del": "\x7f", "ctl": "\x00\n\t\x1f"},
        ["\u2028", "\\", '"', None, True, -3, 2**70],
        {"a": ["Ω" * 3, {"b": "x"}]},
    ],
)
def test_dumps_writes_the_bytes_json_writes(value: object) -> None:
    import json

    assert codec.dumps(value) == json.dumps(value, separators=(",", ":"))
