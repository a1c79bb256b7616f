"""A win held for its line: the figures the solver logs, judged the same way in every replica."""

from __future__ import annotations

import dataclasses

import pytest

from boulanger import codec
from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.daily import DailyEntry, RankedEntry, entry_from_standing
from boulanger.race.events import Acted, Joined, LineMeasured, Started
from boulanger.race.race import Race, RaceMeta
from boulanger.race.review import LINE_REASON, LineSignal, ReviewLimits, review_line
from boulanger.solver import solve
from boulanger.solver.line import measure_line
from support.players import HumanPace, Planner, play_offline

SHORT = "BK1-C4-AAAAE4D"  # deal 4995: par 68, 16 decisions on the solver's line
LIMITS = ReviewLimits()


def _signal(**fields: int) -> LineSignal:
    base = {
        "actions": 94,
        "undos": 0,
        "par": 94,
        "decisions": 40,
        "on_line": 20,
        "longest_run": 5,
        "unmeasured": 0,
        "hard": 10,
        "easy": 30,
        "hard_pause_ms": 900,
        "easy_pause_ms": 700,
        "positions": 1000,
        "seconds": 0.2,
    }
    return LineSignal(**{**base, **fields})  # type: ignore[arg-type]


def test_the_solvers_line_is_held_and_a_planners_is_not() -> None:
    solver = LineSignal.from_dict(
        measure_line({"code": SHORT, "actions": solve(SHORT, budget=30).actions}).to_dict()
    )
    # 16 decisions in all: the run is under its limit, the share is not.
    assert (
        review_line(solver, LIMITS) == "16 of 16 decisions on a solver's line (100%; held from 75%)"
    )
    human = measure_line(play_offline(Planner(HumanPace(0), 0), SHORT), budget=None)
    assert review_line(LineSignal.from_dict(human.to_dict()), LIMITS) is None


@pytest.mark.parametrize(
    ("fields", "held"),
    [
        ({"on_line": 30}, "30 of 40 decisions on a solver's line (75%; held from 75%)"),
        ({"on_line": 29}, None),
        ({"longest_run": 25}, "25 decisions in a row on a solver's line (held from 25)"),
        ({"longest_run": 24}, None),
        (  # both
            {"on_line": 40, "longest_run": 40},
            "40 of 40 decisions on a solver's line (100%; held from 75%); "
            "40 decisions in a row on a solver's line (held from 25)",
        ),
        # Too few decisions, or actions, to tell anything.
        ({"decisions": 11, "on_line": 11, "longest_run": 11}, None),
        ({"actions": 9, "decisions": 12, "on_line": 12}, None),
    ],
)
def test_the_limits_of_the_line(fields: dict[str, int], held: str | None) -> None:
    assert review_line(_signal(**fields), LIMITS) == held


def test_a_limit_of_zero_is_not_checked() -> None:
    everything = _signal(on_line=40, longest_run=40)
    assert review_line(everything, dataclasses.replace(LIMITS, line_share=0)) == (
        "40 decisions in a row on a solver's line (held from 25)"
    )
    off = dataclasses.replace(LIMITS, line_share=0, line_run=0)
    assert not off.judges_lines and review_line(everything, off) is None


def _race(review: ReviewLimits | None = LIMITS) -> Race:
    meta = RaceMeta(
        "r1",
        SHORT,
        0,
        "h",
        countdown_ms=0,
        par=68,
        review=None if review is None else review.to_dict(),
    )
    race = Race(meta)
    race.apply(1, Joined(0, "p1", "Ann", True, "t1"))
    race.apply(2, Joined(0, "p2", "Bo", False, "t2"))
    race.apply(3, Started(0, 0))
    return race


def _win(race: Race, player_id: str, gap_ms: int = 700) -> None:
    at = 0
    for action in solve(SHORT, budget=30).actions:
        at += gap_ms
        race.apply(race.seq + 1, Acted(at, player_id, f"a{at}", Move.from_dict(action)))


def test_a_win_waits_for_its_line_and_is_held_by_it() -> None:
    race = _race()
    assert race.lines_pending() == []
    _win(race, "p1")  # at a human pace: the pace passes
    assert race.players["p1"].review is None
    assert race.lines_pending() == ["p1"] and race.line_due("p1")
    assert not race.line_due("p2")  # still playing: nothing to measure

    signal = _signal(actions=68, decisions=16, on_line=16, longest_run=16)
    event = race.decide_line("p1", signal, 50_000)
    assert event == LineMeasured(50_000, "p1", signal)
    # Appended on the whole log (it may come after the race is over).
    assert race.condition(event).log_length == race.seq
    message = race.apply(race.seq + 1, event)
    assert isinstance(message, p.Progress)
    wire = message.to_wire()
    assert wire["player"]["review"] == {"status": "held", "reason": LINE_REASON}
    # The figures and the limits stay off the wire: for moderators only.
    assert "decisions" not in codec.encode(message) and "line" not in wire["player"]
    standing = race.standing(race.players["p1"])
    assert standing.line == signal and standing.line_held is not None
    assert standing.line_held.startswith("16 of 16 decisions on a solver's line")
    assert race.lines_pending() == [] and race.decide_line("p1", signal, 51_000) is None


def test_a_line_within_the_limits_holds_nothing_and_a_held_pace_keeps_its_reason() -> None:
    race = _race()
    _win(race, "p1")
    race.apply(
        race.seq + 1, LineMeasured(50_000, "p1", _signal(actions=68, decisions=16, on_line=8))
    )
    assert race.players["p1"].review is None and race.players["p1"].line_held is None
    # To everyone, though it changes nothing they see (no action to route it by).
    assert race.told(race.seq)

    fast = _race()
    _win(fast, "p2", gap_ms=50)
    pace = fast.players["p2"].review
    assert pace is not None and "median time between actions 50 ms" in pace
    fast.apply(fast.seq + 1, LineMeasured(9_000, "p2", _signal(decisions=16, on_line=16)))
    assert fast.players["p2"].review == f"{pace}; {LINE_REASON}"


def test_an_unmeasured_line_holds_nothing_and_is_not_measured_again() -> None:
    race = _race()
    _win(race, "p1")
    race.apply(race.seq + 1, LineMeasured(50_000, "p1", None))
    assert race.players["p1"].review is None and race.lines_pending() == []


def test_practice_and_short_wins_and_lines_off_wait_for_nothing() -> None:
    for limits in (None, dataclasses.replace(LIMITS, min_actions=100)):
        race = _race(limits)
        _win(race, "p1")
        assert race.lines_pending() == [], limits
    off = _race(dataclasses.replace(LIMITS, line_share=0, line_run=0))
    _win(off, "p1")
    assert off.lines_pending() == []


def test_old_limits_read_with_the_line_limits_by_default() -> None:
    stored = {k: v for k, v in LIMITS.to_dict().items() if not k.startswith("line")}
    assert ReviewLimits.from_dict(stored) == LIMITS


def test_another_replica_reading_the_logged_text_judges_the_line_the_same() -> None:
    signal = _signal(actions=68, decisions=16, on_line=16, longest_run=16)
    here, there = _race(), _race()
    for race in (here, there):
        _win(race, "p1")
    event = LineMeasured(50_000, "p1", signal)
    here.apply(here.seq + 1, event)
    logged = codec.decode_logged(codec.with_seq(there.seq + 1, codec.encode_event(event)))
    assert logged.event == event
    there.apply(logged.seq, logged.event)
    assert there.standing(there.players["p1"]) == here.standing(here.players["p1"])


def test_the_daily_entry_keeps_the_line_for_moderators_and_never_shows_it() -> None:
    race = _race()
    _win(race, "p1")
    signal = _signal(actions=68, decisions=16, on_line=16, longest_run=16)
    race.apply(race.seq + 1, LineMeasured(50_000, "p1", signal))
    entry = entry_from_standing(race.standing(race.players["p1"]), 1_800_000)
    assert entry.review == LINE_REASON and entry.line == signal
    stored = entry.to_dict()
    assert stored["line"] == signal.to_dict() and stored["line_held"] == entry.line_held
    assert DailyEntry.from_dict(stored) == entry
    wire = RankedEntry(None, 7, entry).to_wire()
    assert "line" not in wire and "line_held" not in wire
    assert wire["review"] == {"status": "held", "reason": LINE_REASON}
    # An entry stored before lines were measured reads as it did.
    old = {k: v for k, v in stored.items() if not k.startswith("line")}
    assert DailyEntry.from_dict(old).line is None
