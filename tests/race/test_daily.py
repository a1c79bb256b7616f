"""The daily challenge's pure parts: the deal of a date, the leaderboard key, streaks."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boulanger import codec
from boulanger.engine import GameCode
from boulanger.race import daily as d
from boulanger.race.decoding import decode
from boulanger.race.errors import Refused
from boulanger.race.standings import Standing, sort_key
from boulanger.solver import catalog
from support.protocol_doc import examples, section

# Computed once from the formula: a change to the pool, stride or offset
# changes the deal of dates already played, and fails here.
DEALS = [
    ("2026-01-01", 806, "BK1-C4-AAAAAZG"),
    ("2026-01-02", 2429, "BK1-C4-AAAACL5"),
    ("2026-11-30", 701, "BK1-C4-AAAAAV5"),
    ("2026-12-01", 2323, "BK1-C4-AAAACIT"),
    ("2027-06-15", 293, "BK1-C4-AAAAAJF"),
    ("2030-02-28", 2126, "BK1-C4-AAAACCO"),
]


@pytest.mark.parametrize(("text", "deal", "code"), DEALS)
def test_the_deal_of_a_date_is_fixed(text: str, deal: int, code: str) -> None:
    day = d.parse_date(text)
    assert d.deal_number(day) == deal
    assert str(d.game_code(day)) == code


def test_the_pool_is_the_catalog_prefix_and_every_deal_has_a_par() -> None:
    assert len(d.POOL) == 2000
    assert list(d.POOL) == sorted(set(d.POOL))
    entries = catalog.entries(4)
    assert [e.code.deal for e in entries[: len(d.POOL)]] == list(d.POOL)
    for deal in d.POOL:
        assert catalog.lookup(GameCode(deal, 4)) is not None


def test_no_deal_comes_back_within_the_pool_size() -> None:
    days = [d.FIRST_DAY + timedelta(days=n) for n in range(len(d.POOL))]
    assert len({d.deal_number(day) for day in days}) == len(d.POOL)
    # ...and then the same sequence starts again.
    again = d.FIRST_DAY + timedelta(days=len(d.POOL))
    assert d.deal_number(again) == d.deal_number(d.FIRST_DAY)


def test_a_secret_schedule_is_unknowable_without_the_secret_and_still_never_repeats() -> None:
    cycle = [d.FIRST_DAY + timedelta(days=n) for n in range(len(d.POOL))]
    secret = [d.deal_number(day, "s3cret") for day in cycle]
    assert sorted(secret) == sorted(d.POOL)  # every deal once per cycle
    assert secret != [d.deal_number(day) for day in cycle]
    assert secret != [d.deal_number(day, "another") for day in cycle]
    following = [day + timedelta(days=len(d.POOL)) for day in cycle]
    nxt = [d.deal_number(day, "s3cret") for day in following]
    assert sorted(nxt) == sorted(d.POOL) and nxt != secret  # a new order each cycle
    # Pinned: every process, and every later version, must deal the same.
    assert secret[:3] == [507, 1777, 2173] and nxt[0] == 2010
    assert str(d.game_code(d.FIRST_DAY, "s3cret")) == str(GameCode(507, 4))


@pytest.mark.parametrize(
    "text",
    ["2026-13-01", "2026-02-30", "2026-1-1", "26-01-01", "", "2026-01-01T00:00", "２０２６-01-01"],
)
def test_malformed_dates_are_refused_quoting_the_input(text: str) -> None:
    with pytest.raises(d.DateError) as refused:
        d.parse_date(text)
    assert repr(text) in str(refused.value)


def test_no_challenge_before_the_first_day() -> None:
    with pytest.raises(d.DateError, match="2026-01-01"):
        d.deal_number(date(2025, 12, 31))


def test_times_of_a_day() -> None:
    day = date(2026, 11, 30)
    assert d.day_start_ms(day) == 1_796_083_200_000 - d.DAY_MS
    assert d.next_at(day) == 1_796_083_200_000
    assert d.today(d.next_at(day) - 1) == day
    assert d.today(d.next_at(day)) == day + timedelta(days=1)
    assert d.expires_at(day, 90) == d.next_at(day) + 90 * d.DAY_MS


# -- the leaderboard order ----------------------------------------------------


def _entry(result: str, time_ms: int, fc: int, score: int, actions: int) -> d.DailyEntry:
    return d.DailyEntry("x", result, time_ms, actions, score, fc)


def test_ranking_key_orders_like_a_race() -> None:
    ordered = [
        _entry("won", 60_000, 52, 500, 120),
        _entry("won", 60_000, 52, 400, 100),  # same time: more score first
        _entry("won", 60_001, 52, 900, 90),
        _entry("won", 1_800_000, 52, 0, 300),
        _entry("resigned", 10_000, 51, 100, 200),  # not won: cards first
        _entry("time_limit", 1_800_000, 40, 300, 50),
        _entry("resigned", 5_000, 40, 300, 60),  # then fewer actions
        _entry("resigned", 5_000, 40, 200, 10),
        _entry("resigned", 5_000, 0, 0, 0),
    ]
    keys = [d.ranking_key(e, i + 1) for i, e in enumerate(ordered)]
    assert sorted(keys) == keys
    assert len({len(k) for k in keys}) == 1
    assert [d.entry_id_of(k) for k in keys] == list(range(1, len(ordered) + 1))
    # Equal results: the one recorded first is first.
    same = ordered[0]
    assert d.ranking_key(same, 7) < d.ranking_key(same, 8)


_results = st.builds(
    _entry,
    st.sampled_from(d.RESULTS),
    st.integers(0, 10**10),
    st.integers(0, 52),
    st.integers(0, 10**6),
    st.integers(0, 10**5),
)


@given(a=_results, b=_results)
def test_ranking_key_agrees_with_the_race_order(a: d.DailyEntry, b: d.DailyEntry) -> None:
    """Where the race's order decides (it does not tie-break winners by score), the keys agree."""

    def standing(e: d.DailyEntry, order: int) -> Standing:
        won = e.result == "won"
        return Standing(
            "p", "x", False, 52 if won else e.foundation_cards, e.score, e.actions,
            "won" if won else "resigned", 0, None, e.time_ms if won else None, order,
        )  # fmt: skip

    if a.result == "won":
        a = d.DailyEntry(a.name, a.result, a.time_ms, a.actions, a.score, 52)
    if b.result == "won":
        b = d.DailyEntry(b.name, b.result, b.time_ms, b.actions, b.score, 52)
    race_a, race_b = sort_key(standing(a, 1))[:4], sort_key(standing(b, 2))[:4]
    if race_a != race_b:
        assert (race_a < race_b) == (d.ranking_key(a, 1) < d.ranking_key(b, 2))


def test_entry_from_a_finished_race_standing() -> None:
    won = Standing("p", "Ann", True, 52, 560, 118, "won", 402_000, 1, 402_000)
    assert d.entry_from_standing(won, 1_800_000) == d.DailyEntry(
        "Ann", "won", 402_000, 118, 560, 52
    )
    resigned = Standing("p", "Bo", True, 12, 135, 41, "resigned", 63_000, None, None)
    assert d.entry_from_standing(resigned, 1_800_000).result == "resigned"
    assert d.entry_from_standing(resigned, 1_800_000).time_ms == 63_000
    open_game = Standing("p", "Cy", True, 30, 300, 90, "stuck", 900_000, None, None)
    late = d.entry_from_standing(open_game, 1_800_000)
    assert (late.result, late.time_ms) == ("time_limit", 1_800_000)


def test_entries_round_trip_and_wire_form() -> None:
    entry = d.DailyEntry("Ann", "won", 402_000, 118, 560, 52)
    assert d.DailyEntry.from_dict(json.loads(json.dumps(entry.to_dict()))) == entry
    assert d.RankedEntry(3, 17, entry).to_wire() == {
        "rank": 3,
        "entry_id": 17,
        "name": "Ann",
        "result": "won",
        "time_ms": 402_000,
        "actions": 118,
        "score": 560,
        "foundation_cards": 52,
        "review": None,
    }
    held = d.DailyEntry("Bot", "won", 9_000, 97, 560, 52, review="median 2 ms")
    assert d.DailyEntry.from_dict(json.loads(json.dumps(held.to_dict()))) == held
    assert d.RankedEntry(None, 18, held).to_wire()["review"] == {
        "status": "held",
        "reason": "median 2 ms",
    }


# -- streaks and sharing -------------------------------------------------------


def test_streaks_end_today_or_yesterday() -> None:
    day = date(2026, 11, 30)
    back = [day - timedelta(days=n) for n in range(5)]
    assert d.streak(set(), day) == 0
    assert d.streak({back[0]}, day) == 1
    assert d.streak({back[1], back[2]}, day) == 2  # not played today yet: still running
    assert d.streak({back[0], back[1], back[3]}, day) == 2
    assert d.streak({back[2], back[3]}, day) == 0  # yesterday missed: broken
    assert d.streak(set(back), day) == 5
    assert d.streak({day + timedelta(days=1)}, day) == 0


FULL, HALF, EMPTY = "\U0001f7e9", "\U0001f7e8", "\u2b1c"


def test_share_text_tells_the_result_without_the_deal() -> None:
    day = date(2026, 11, 30)
    won = d.RankedEntry(12, 40, d.DailyEntry("Ann", "won", 252_345, 118, 560, 52))
    site = "https://example.org"
    assert d.share_text(day, won, 340, 3, par=94, site=site) == (
        "Baker's Game daily #334\n"
        "Won in 4:12.3 · 12th of 340\n"
        "118 moves · par 94\n" + FULL * 13 + " 3 days in a row\n"
        "https://example.org/daily/2026-11-30"
    )
    lost = d.RankedEntry(300, 41, d.DailyEntry("Bo", "resigned", 60_000, 212, 150, 37))
    assert d.share_text(day, lost, 340, 0) == (
        "Baker's Game daily #334\n"
        "Not won: 37/52 cards · 300th of 340\n"
        "212 moves\n" + FULL * 9 + HALF + EMPTY * 3
    )
    held = d.RankedEntry(None, 42, d.DailyEntry("Bot", "won", 9_000, 97, 560, 52, review="x"))
    assert d.share_text(day, held, 340, 0, par=94).splitlines()[1] == "Won in 0:09.0 · under review"
    assert [d._ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip
    assert d.format_time(3_725_000) == "1:02:05.0"


# -- the live leaderboard's messages, as documented ---------------------------


def test_daily_messages_are_documented_and_round_trip() -> None:
    found = examples(section("Daily challenge"))
    assert set(found) == {"daily_leaderboard"}
    for kind, example in found.items():
        message = decode(example, d.SERVER_MESSAGES)
        assert type(message) is d.SERVER_MESSAGES[kind]
        assert message.to_wire() == example
        assert decode(json.loads(codec.encode(message)), d.SERVER_MESSAGES) == message


def test_the_live_socket_accepts_only_ping_and_pong() -> None:
    assert set(d.CLIENT_MESSAGES) == {"ping", "pong"}
    with pytest.raises(Refused) as refused:
        decode({"type": "move"}, d.CLIENT_MESSAGES)
    assert refused.value.code == "unknown_type"
