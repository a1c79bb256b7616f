"""The daily store, in memory and in a real Redis: first write wins, ranks, pages, streaks."""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from datetime import date, timedelta

import pytest

from boulanger.broker import Broker, BrokerUnavailable, DailyStore, Store, open_store
from boulanger.broker.contracts import STREAK_BATCH, daily_channel, parse_published
from boulanger.broker.redis.daily import RedisDailyStore, unpack_record
from boulanger.race.daily import FIRST_DAY, DailyEntry, expires_at, ranking_key, today
from boulanger.race.review import CONFIRMED, DISQUALIFIED, Decision
from support.listeners import Collector, barrier
from support.servers import RedisProcess

from .conftest import eventually, subscribed
from .test_accounts_store import HandshakeRace

RETENTION = 100_000  # days: the test dates lie in the past
_days = itertools.count()


@pytest.fixture
def store(backend: Store) -> DailyStore:
    return backend.daily


@pytest.fixture
def day() -> date:
    """A day of this test's own (the session's Redis is shared)."""
    return FIRST_DAY + timedelta(days=next(_days))


def _entry(name: str, result: str = "won", time_ms: int = 60_000, fc: int = 52, score: int = 500,
           actions: int = 100) -> DailyEntry:  # fmt: skip
    return DailyEntry(name, result, time_ms, actions, score, fc)


def _record(name: str) -> dict:
    return {"code": "BK1-C4-AAAAAV5", "actions": [{"src": "col1", "dst": "cell1", "count": 1}]}


async def test_the_first_attempt_claimed_is_the_ranked_one(store: DailyStore, day: date) -> None:
    assert await store.attempt(day, "h1") is None
    assert await store.claim_attempt(day, "h1", "race-a") == "race-a"
    assert await store.claim_attempt(day, "h1", "race-b") == "race-a"
    assert await store.claim_attempt(day, "h2", "race-c") == "race-c"
    assert await store.attempt(day, "h1") == "race-a"
    assert await store.attempt(day + timedelta(days=1), "h1") is None


async def test_a_result_is_recorded_once_and_published_once(
    broker: Broker, store: DailyStore, day: date
) -> None:
    listener = Collector()
    await subscribed(broker, daily_channel(day), listener)
    first = await store.record(day, "h1", _entry("Ann", time_ms=90_000), _record("Ann"))
    again = await store.record(day, "h1", _entry("Ann", time_ms=10_000), _record("Ann"))
    assert first.created and not again.created
    assert again.ranked == first.ranked
    assert first.ranked.rank == 1 and first.ranked.entry.time_ms == 90_000
    other = await store.record(day, "h2", _entry("Bo", time_ms=30_000), _record("Bo"))
    assert other.created and other.ranked.rank == 1
    assert (await store.player(day, "h1")).rank == 2  # type: ignore[union-attr]
    await eventually(lambda: len(listener.messages) == 2)
    heard = await barrier(broker, daily_channel(day), listener)  # and nothing after them
    assert len(heard) == 2
    published = [parse_published(m) for m in heard]
    assert [(r.entry.name, r.rank) for r in published] == [("Ann", 1), ("Bo", 1)]
    await broker.unsubscribe(daily_channel(day), listener)


async def test_a_renamed_entry_keeps_its_place_and_record(store: DailyStore, day: date) -> None:
    """A deleted account's entries are shown as "deleted player", nothing else changes."""
    ann = await store.record(day, "h-ann", _entry("Ann", time_ms=20_000), _record("Ann"))
    await store.record(day, "h-bo", _entry("Bo", time_ms=30_000), _record("Bo"))
    assert await store.rename(day, "h-ann", "deleted player")
    assert not await store.rename(day, "h-nobody", "deleted player")
    assert not await store.rename(day + timedelta(days=1), "h-ann", "deleted player")
    page = await store.page(day, 0, 10)
    assert [(r.rank, r.entry.name) for r in page.entries] == [(1, "deleted player"), (2, "Bo")]
    mine = await store.player(day, "h-ann")
    assert mine is not None and mine.entry == _entry("deleted player", time_ms=20_000)
    assert await store.game_record(day, ann.ranked.entry_id) == _record("Ann")


async def test_a_held_entry_is_kept_for_its_player_off_the_board(
    broker: Broker, store: DailyStore, day: date
) -> None:
    listener = Collector()
    await subscribed(broker, daily_channel(day), listener)
    held = DailyEntry("Bot", "won", 12_000, 97, 560, 52, review="median 3 ms")
    first = await store.record(day, "h-bot", held, _record("Bot"))
    assert first.created and first.ranked.rank is None and first.ranked.entry == held
    again = await store.record(day, "h-bot", _entry("Bot"), _record("Bot"))
    assert not again.created and again.ranked == first.ranked
    fair = await store.record(day, "h-ann", _entry("Ann", time_ms=300_000), _record("Ann"))
    assert fair.ranked.rank == 1
    page = await store.page(day, 0, 10)
    assert page.total == 1 and [r.entry.name for r in page.entries] == ["Ann"]
    mine = await store.player(day, "h-bot")
    assert mine is not None and (mine.rank, mine.entry) == (None, held)
    assert mine.to_wire()["review"] == {"status": "held", "reason": "median 3 ms"}
    assert await store.game_record(day, first.ranked.entry_id) == _record("Bot")
    assert await store.streak("h-bot", day) == 0  # a held win is no day won
    await eventually(lambda: len(listener.messages) == 1)
    heard = await barrier(broker, daily_channel(day), listener)  # and nothing after it
    assert [parse_published(m).entry.name for m in heard] == ["Ann"]
    await broker.unsubscribe(daily_channel(day), listener)


async def test_a_decision_puts_an_entry_on_the_board_and_in_the_streak_or_off_them(
    store: DailyStore, day: date
) -> None:
    """Confirmed, a held win counts (rank, streak); disqualified, a fair one does not."""
    held = DailyEntry("Bot", "won", 12_000, 97, 560, 52, review="median 3 ms")
    bot = await store.record(day, "h-bot", held, _record("Bot"))
    ann = await store.record(day, "h-ann", _entry("Ann", time_ms=300_000), _record("Ann"))
    await store.record(day, "h-cy", _entry("Cy", time_ms=400_000), _record("Cy"))
    bot_id, ann_id = bot.ranked.entry_id, ann.ranked.entry_id
    assert [r.entry_id for r in await store.reviewed(day, 10)] == [bot_id]
    confirmed = Decision(CONFIRMED, "replay read", "Mod", 1)
    decided = await store.decide(day, bot_id, confirmed)
    assert decided is not None and decided.rank == 1 and decided.entry.decision == confirmed
    assert decided.to_wire()["review"] == {"status": "confirmed", "reason": "replay read"}
    assert await store.decide(day, bot_id, confirmed) == decided  # again: nothing changes
    page = await store.page(day, 0, 10)
    assert [(r.rank, r.entry.name) for r in page.entries] == [(1, "Bot"), (2, "Ann"), (3, "Cy")]
    assert await store.streak("h-bot", day) == 1
    assert (await store.player(day, "h-ann")).rank == 2  # type: ignore[union-attr]

    gone = Decision(DISQUALIFIED, "a copied line", "Mod", 2)
    off = await store.decide(day, ann_id, gone)
    assert off is not None and off.rank is None
    assert off.to_wire()["review"] == {"status": "disqualified", "reason": "a copied line"}
    assert await store.streak("h-ann", day) == 0
    page = await store.page(day, 0, 10)
    assert page.total == 2 and [r.entry.name for r in page.entries] == ["Bot", "Cy"]
    reversed_ = await store.decide(day, bot_id, dataclasses.replace(gone, note="after all"))
    assert reversed_ is not None and reversed_.rank is None
    assert await store.streak("h-bot", day) == 0
    assert [r.entry.name for r in (await store.page(day, 0, 10)).entries] == ["Cy"]
    # Newest first, each with the decision kept, at its rank (none: off the board).
    listed = await store.reviewed(day, 10)
    assert [(r.entry_id, r.rank, r.entry.decision) for r in listed] == [
        (ann_id, None, gone),
        (bot_id, None, dataclasses.replace(gone, note="after all")),
    ]
    assert await store.reviewed(day, 1) == listed[:1]
    assert await store.decide(day, 999, confirmed) is None
    assert await store.decide(day + timedelta(days=1), bot_id, confirmed) is None


async def test_leaderboard_order_ranks_and_pages(store: DailyStore, day: date) -> None:
    rng = random.Random(7)
    entries = []
    for i in range(60):
        result = rng.choice(["won", "won", "resigned", "time_limit"])
        entries.append(
            _entry(
                f"p{i}",
                result,
                rng.randrange(100_000, 200_000, 1000),
                52 if result == "won" else rng.randrange(0, 52),
                rng.randrange(0, 1000, 50),
                rng.randrange(50, 200, 10),
            )
        )
    for i, entry in enumerate(entries):
        await store.record(day, f"h{i}", entry, _record(entry.name))
    expected = sorted(range(60), key=lambda i: ranking_key(entries[i], i + 1))

    whole = await store.page(day, 0, 100)
    assert whole.total == 60
    assert [r.entry.name for r in whole.entries] == [f"p{i}" for i in expected]
    assert [r.rank for r in whole.entries] == list(range(1, 61))
    assert [r.entry_id for r in whole.entries] == [i + 1 for i in expected]

    paged = []
    for offset in range(0, 70, 7):
        page = await store.page(day, offset, 7)
        assert page.total == 60
        paged.extend(page.entries)
    assert paged == whole.entries
    assert (await store.page(day, 60, 10)).entries == []
    total_only = await store.page(day, 0, 0)
    assert (total_only.total, total_only.entries) == (60, [])
    with pytest.raises(ValueError):
        await store.page(day, -1, 5)

    for rank, i in enumerate(expected, start=1):
        mine = await store.player(day, f"h{i}")
        assert mine is not None and (mine.rank, mine.entry) == (rank, entries[i])
    assert await store.player(day, "nobody") is None
    empty = await store.page(day + timedelta(days=1000), 0, 20)
    assert (empty.total, empty.entries) == (0, [])


async def test_game_records_are_kept_per_entry(store: DailyStore, day: date) -> None:
    record = {"code": "BK1-C4-AAAAAV5", "actions": [{"undo": True}]}
    recorded = await store.record(day, "h1", _entry("Ann"), record)
    assert await store.game_record(day, recorded.ranked.entry_id) == record
    assert await store.game_record(day, recorded.ranked.entry_id + 1) is None
    if isinstance(store, RedisDailyStore):  # kept compressed
        stored = await store.redis.hget(f"bk:daily:{{{day}}}:records", "1")
        assert stored.startswith("z:") and unpack_record(stored) == record


async def test_streaks_count_days_won(store: DailyStore) -> None:
    key = f"streaker-{next(_days)}"
    base = FIRST_DAY + timedelta(days=400 + next(_days) * 200)
    # Won base-2, base-1, base; lost base-3; won base-5.
    for offset, result in [(-5, "won"), (-3, "resigned"), (-2, "won"), (-1, "won"), (0, "won")]:
        entry = _entry("Ann", result, fc=52 if result == "won" else 10)
        await store.record(base + timedelta(days=offset), key, entry, _record("Ann"))
    assert await store.streak(key, base) == 3
    assert await store.streak(key, base + timedelta(days=1)) == 3  # today not played yet
    assert await store.streak(key, base + timedelta(days=2)) == 0
    assert await store.streak(key, base - timedelta(days=1)) == 2
    assert await store.streak(key, base - timedelta(days=3)) == 0
    assert await store.streak(key, base - timedelta(days=5)) == 1
    assert await store.streak("someone-else", base) == 0


async def test_long_streaks_are_read_in_batches(store: DailyStore) -> None:
    key = f"long-{next(_days)}"
    base = FIRST_DAY + timedelta(days=5000 + next(_days) * 400)
    length = STREAK_BATCH + 10
    for n in range(length):
        await store.record(base - timedelta(days=n), key, _entry("Ann"), _record("Ann"))
    assert await store.streak(key, base) == length


@pytest.mark.retention(90)
async def test_days_expire_after_the_retention(backend: Store, broker: Broker) -> None:
    store = backend.daily
    recent = today(int(time.time() * 1000))
    await store.record(recent, "h-retention", _entry("Ann"), _record("Ann"))
    if broker.kind in ("redis", "redis-cluster"):
        redis = broker.redis  # type: ignore[attr-defined]
        deadline = expires_at(recent, 90)
        for part in ("players", "board", "entries", "records", "ids"):
            assert await redis.pexpiretime(f"bk:daily:{{{recent}}}:{part}") == deadline
        assert await redis.pexpiretime("bk:daily:won:{h-retention}") == deadline
    # A day past its retention is gone (Redis: PEXPIREAT in the past deletes).
    old = recent - timedelta(days=200)
    await store.record(old, "h-old", _entry("Ann"), _record("Ann"))
    await store.record(recent, "h-retention-2", _entry("Bo"), _record("Bo"))
    assert (await store.page(old, 0, 10)).total == 0
    assert (await store.page(recent, 0, 10)).total >= 2


async def test_redis_entries_survive_a_restart() -> None:
    redis = RedisProcess()
    redis.start()
    try:
        opened = open_store(redis.url, retention_days=90)
        await opened.start()
        store = opened.daily
        day = today(int(time.time() * 1000))
        for i in range(5):
            await store.record(day, f"h{i}", _entry(f"p{i}", time_ms=100_000 - i), _record("x"))
        before = await store.page(day, 0, 10)
        await opened.close()

        redis.restart()  # SIGTERM and start again: the AOF has every write

        opened = open_store(redis.url, retention_days=90)
        await opened.start()
        store = opened.daily
        after = await store.page(day, 0, 10)
        assert after == before and after.total == 5
        assert [r.entry.name for r in after.entries] == ["p4", "p3", "p2", "p1", "p0"]
        assert (await store.player(day, "h0")).rank == 5  # type: ignore[union-attr]
        assert await store.game_record(day, 1) == _record("x")
        again = await store.record(day, "h0", _entry("p0", time_ms=1), _record("x"))
        assert not again.created and again.ranked.entry.time_ms == 100_000
        await opened.close()
    finally:
        redis.cleanup()


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
async def test_a_client_s_broken_handshake_is_unavailable(backend: Store) -> None:
    """The daily store on redis-py's client says the store is unavailable (a typed
    error, answered 503) when the cluster client breaks a handshake, as the accounts'
    store does: never a bare AttributeError."""
    store = backend.daily
    assert isinstance(store, RedisDailyStore)
    broken = HandshakeRace(store.redis)
    flaky = RedisDailyStore(broken, 7)
    day = date(2026, 11, 30)
    for call in (
        lambda: flaky.attempt(day, "k" * 16),
        lambda: flaky.won_days("k" * 16, day, 5),
    ):
        broken.failures = 1
        with pytest.raises(BrokerUnavailable):
            await call()
        assert broken.failures == 0
    assert await flaky.attempt(day, "k" * 16) is None
