"""Accounts' rules: names, passwords, stats, ratings."""

from __future__ import annotations

from datetime import date

import pytest

from boulanger.race import accounts as a
from boulanger.race.errors import Refused


def test_account_names_follow_race_names_with_their_own_length() -> None:
    assert a.account_name("  Ann   Lee ") == "Ann Lee"
    for bad in ("ab", "x" * 21, "", "a\u200bb", None, "Deleted  Player"):
        with pytest.raises(Refused) as refused:
            a.account_name(bad)
        assert refused.value.code == "bad_name"
    # Look-alikes share a key: case, fullwidth, Cyrillic.
    assert a.account_key("Ann") == a.account_key("ANN") == a.account_key("\uff21nn")
    assert a.account_key("\u0410nn") == a.account_key("Ann")
    assert a.account_key("Ann") != a.account_key("Anne")


def test_passwords_have_8_to_128_characters() -> None:
    assert a.check_password("x" * 8) and a.check_password("x" * 128)
    for bad in ("x" * 7, "x" * 129, None, 12345678):
        with pytest.raises(Refused):
            a.check_password(bad)


def _result(place: int | None, won: bool, time_ms: int | None, cells: int = 4, **kw: object):
    return a.RaceResult("r", "p", 0, cells, 3, place, won, time_ms, **kw)  # type: ignore[arg-type]


def test_stats_per_kind_and_cell_count() -> None:
    results = [
        _result(1, True, 60_000),
        _result(2, True, 90_000),
        _result(3, False, None, cells=2),
        _result(1, True, 120_000, daily="2026-01-02", ranked=True),
    ]
    found = a.stats(results)
    assert found["races"] == {
        "played": 3, "won": 2, "first": 1, "win_rate": 0.667, "best_ms": 60_000, "median_ms": 75_000,
    }  # fmt: skip
    assert found["dailies"]["played"] == 1 and found["dailies"]["won"] == 1
    assert found["cells"]["4"]["played"] == 3 and found["cells"]["4"]["best_ms"] == 60_000
    assert found["cells"]["2"]["win_rate"] == 0.0
    assert a.calendar([date(2026, 1, 2), date(2026, 1, 5), date(2026, 1, 2)]) == [
        "2026-01-05",
        "2026-01-02",
    ]


def test_ratings_follow_the_final_order() -> None:
    before = [a.Rating(), a.Rating(), a.Rating()]
    after = a.update_ratings(before, [1, 2, 3])
    assert after[0].mu > after[1].mu > after[2].mu
    assert all(r.races == 1 and r.sigma < before[0].sigma for r in after)
    tied = a.update_ratings([a.Rating(), a.Rating()], [1, 1])
    assert tied[0].mu == pytest.approx(tied[1].mu)
    assert a.Rating.from_dict(after[0].to_dict()) == after[0]
    assert after[0].shown > after[2].shown


def test_only_fair_races_are_rated() -> None:
    assert a.rated_race(practice=False, open_boards=False, daily=None)
    assert not a.rated_race(practice=True, open_boards=False, daily=None)
    assert not a.rated_race(practice=False, open_boards=True, daily=None)
    assert not a.rated_race(practice=False, open_boards=False, daily="2026-01-01")
