"""The replica without I/O: what each text is, catching up, lost events, missed events."""

from __future__ import annotations

import pytest

from boulanger import codec
from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.events import Acted, Joined, Logged, Started
from boulanger.race.ids import secret_hash
from boulanger.race.race import Answer, Duplicate, RaceMeta
from boulanger.race.replica import GAP, Applied, Replica

TO_CELL = Move("col1", "cell1", 1)
META = RaceMeta("r1", "BK1-C4-AAAAAAB", 0, secret_hash("k"), countdown_ms=0)
LOG = [
    codec.with_seq(seq, codec.encode_event(event))
    for seq, event in enumerate(
        [
            Joined(0, "p1", "Ann", True, "h1"),
            Joined(0, "p2", "Bo", False, "h2"),
            Started(5, 5),
            Acted(9, "p1", "a1", TO_CELL),
        ],
        start=1,
    )
]


def test_each_text_is_the_next_event_an_old_one_or_a_gap() -> None:
    replica = Replica(META, codec)
    assert replica.receive(LOG[1]) is GAP
    first = replica.receive(LOG[0])
    assert isinstance(first, Applied) and first.logged.seq == 1 and first.board_of is None
    assert isinstance(codec.decode_server(first.text), p.PlayerJoined)
    assert replica.receive(LOG[0]) is None  # a duplicate
    assert replica.seq == 1 and replica.last == LOG[0]
    # An event laid out otherwise (seq not first) is read whole; the next one, applied.
    later = codec.decode_logged(LOG[1])
    reordered = codec.dumps({**codec.event_to_dict(later.event), "seq": 2})
    assert codec.seq_of(reordered) is None
    second = replica.receive(reordered)
    assert isinstance(second, Applied) and second.logged.seq == 2


def test_a_text_that_is_no_event_is_refused() -> None:
    """A race's channel carries its events alone: a control message there is an error."""
    replica = Replica(META, codec)
    with pytest.raises(ValueError):
        replica.receive(codec.encode_kick(codec.Kick("r1", "p1", None)))
    with pytest.raises(ValueError):
        replica.receive("not json")
    assert replica.seq == 0


def test_catching_up_applies_what_follows_and_notices_a_log_that_lost_events() -> None:
    replica = Replica(META, codec)
    assert replica.read_after(verify=True) == 0
    applied = replica.catch_up(LOG[:3], verify=False)
    assert applied is not None and [a.logged.seq for a in applied] == [1, 2, 3]
    assert applied[2].started
    assert replica.read_after(verify=True) == 2  # from the last event applied on
    assert replica.catch_up(LOG[2:], verify=True) is not None and replica.seq == 4
    # A log whose event 4 is another one (a failover lost ours): rebuild.
    other = codec.with_seq(4, codec.encode_event(Acted(9, "p2", "b1", TO_CELL)))
    assert replica.catch_up([LOG[2], other][1:], verify=True) is None
    rebuilt = Replica.rebuilt(META, LOG[:3], codec)
    assert rebuilt.seq == 3 and rebuilt.last == LOG[2] and not rebuilt.recent


def test_whose_event_and_what_a_client_missed() -> None:
    replica = Replica(META, codec)
    replica.catch_up(LOG, verify=False)
    acted = Acted(9, "p1", "a1", TO_CELL)
    assert Replica.mine(acted, [Logged(4, acted)]) == Logged(4, acted)
    assert Replica.mine(acted, [Logged(4, Acted(9, "p1", "a2", TO_CELL))]) is None
    ours = replica.action_of("p1", Duplicate(Answer(4, None, None, 0, 0, 0, "resigned", 0)))
    assert ours(Logged(4, acted)) and not ours(Logged(4, Acted(9, "p2", "a1", TO_CELL)))
    assert len(replica.missed_since(1) or []) == 3
    assert replica.missed_since(4) == []
    assert replica.missed_since(0, most=2) is None
