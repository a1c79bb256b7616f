"""Leaderboard order: winners by time, then cards, score, fewer actions, join order."""

from __future__ import annotations

from boulanger.race.standings import Standing, rank


def _s(
    pid: str, cards: int, score: int, actions: int, time_ms: int | None = None, order: int = 0
) -> Standing:
    return Standing(pid, pid, False, cards, score, actions, "playing", 0, None, time_ms, order)


def test_leaderboard_order_and_ranks() -> None:
    standings = [
        _s("slow-winner", 52, 520, 150, time_ms=9000, order=0),
        _s("many-cards", 40, 400, 90, order=1),
        _s("fast-winner", 52, 530, 170, time_ms=5000, order=2),
        _s("same-cards-more-score", 40, 415, 120, order=3),
        _s("same-all-fewer-actions", 40, 400, 80, order=4),
        _s("same-all-later", 40, 400, 80, order=5),
    ]
    ordered = rank(standings)
    assert [s.player_id for s in ordered] == [
        "fast-winner",
        "slow-winner",
        "same-cards-more-score",
        "same-all-fewer-actions",
        "same-all-later",
        "many-cards",
    ]
    assert [s.rank for s in ordered] == [1, 2, None, None, None, None]
    assert [s.rank for s in rank(standings, final=True)] == [1, 2, 3, 4, 5, 6]
