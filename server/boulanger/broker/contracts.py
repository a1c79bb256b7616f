"""What a store is: every contract of it, and its errors, in one place.

A store keeps four things, each behind one contract here, and every backend
(:mod:`.memory`, :mod:`.sqlite`, :mod:`.redis`, Redis Cluster included)
has one folder holding its four parts:

- :class:`Broker`: each race's ordered event log, and pub/sub between processes;
- :class:`KeyValue`: the few single-key operations accounts need (:mod:`.accounts`);
- :class:`DailyStore`: the daily challenge's attempts, entries, records and streaks;
- :class:`Limits`: per-address counts that every process sharing the store sees.

:func:`boulanger.broker.open_store` opens one by URL and answers a
:class:`Store`. This module imports nothing else of the store: the backends
import it, never the other way round. It speaks in the race's own records
(:mod:`boulanger.race`), which are below it.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

from ..engine import RecordDict
from ..race.condition import Condition as Condition
from ..race.daily import DailyEntry, RankedEntry, streak
from ..race.race import RaceMeta
from ..race.review import Decision

# -- errors -----------------------------------------------------------------------


class BrokerUnavailable(Exception):
    """The store cannot be reached right now; the caller should try again."""


class AppendRefused(Exception):
    """An append's condition failed: the log moved on meanwhile (nothing was appended)."""


# -- the log and pub/sub ------------------------------------------------------------


class Listener(Protocol):
    """What a broker delivers a subscribed channel's messages to (a race hub, a live board)."""

    def on_message(self, data: str) -> None:
        """A message published on a subscribed channel (must not block)."""

    def on_resync(self) -> None:
        """Messages may have been lost (the connection to the broker dropped)."""


def race_channel(race_id: str) -> str:
    """The pub/sub channel of a race's events (nothing else goes on it)."""
    # The {hash tag} keeps a race's keys and channel on one Redis Cluster shard.
    return f"bk:race:{{{race_id}}}"


# The deployment's one control channel: messages to every process, not to a
# race's replicas (a kick: a player joined again elsewhere). Each process
# subscribes to it once, whatever the number of its races.
CONTROL_CHANNEL = "bk:control"


class Broker(abc.ABC):
    """A store of race logs with pub/sub between processes.

    Whether an append's condition holds is decided by
    :meth:`~boulanger.race.condition.LogState.append`, which every backend
    applies (Redis in its append script, atomically).
    """

    kind: str
    # Replicas an append must reach before it counts as appended (see confirm()).
    replica_wait = 0

    async def start(self) -> None:  # noqa: B027  (optional hook)
        """Connect; called once before use."""

    async def close(self) -> None:  # noqa: B027  (optional hook)
        """Disconnect and stop background tasks."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """True when the broker answers."""

    # -- race logs ---------------------------------------------------------

    @abc.abstractmethod
    async def create_race(self, meta: RaceMeta) -> None:
        """Store a new race's meta (its settings; the race's id is its ``race_id``)."""

    @abc.abstractmethod
    async def race_meta(self, race_id: str) -> RaceMeta | None:
        """A race's meta, or None when the race is unknown (or aged out)."""

    @abc.abstractmethod
    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        """Append ``event`` if ``condition`` holds, and publish it; return its ``seq``.

        ``event`` is a JSON object's text, which the broker does not read
        (:func:`boulanger.codec.encode_event`). The broker numbers it (``seq``
        = the log's length + 1) and stores and publishes it with that number
        first (:func:`boulanger.codec.with_seq`). Raises :class:`AppendRefused`,
        appending nothing, when the condition fails, and
        :class:`BrokerUnavailable` when the broker cannot be reached.
        """

    async def confirm(self, race_id: str, event: str) -> bool:
        """Whether ``event`` (a text :meth:`read` returned) is in the log, durable as an
        acknowledged append is; raises :class:`BrokerUnavailable` when that cannot be told.

        An event found in the log is on the primary, which is all an append
        promises without a replica wait: only a broker with one has to check.
        """
        return True

    @abc.abstractmethod
    async def read(self, race_id: str, after: int) -> list[str]:
        """The events with ``seq`` greater than ``after``, in order, as logged (``seq`` first)."""

    # -- pub/sub -----------------------------------------------------------

    @abc.abstractmethod
    async def subscribe(self, channel: str, listener: Listener) -> None:
        """Deliver the channel's messages to ``listener`` from now on."""

    @abc.abstractmethod
    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        """Stop delivering the channel's messages to ``listener``."""

    @abc.abstractmethod
    async def publish(self, channel: str, data: str) -> None:
        """Send ``data`` to the channel's listeners in every process (at most once)."""

    # The control channel goes through these three, not the ones above: a
    # broker may carry it otherwise than a race's channel (a cluster does).

    async def subscribe_control(self, listener: Listener) -> None:
        """Deliver the control channel's messages (:data:`CONTROL_CHANNEL`) to ``listener``."""
        await self.subscribe(CONTROL_CHANNEL, listener)

    async def unsubscribe_control(self, listener: Listener) -> None:
        """Stop delivering the control channel's messages to ``listener``."""
        await self.unsubscribe(CONTROL_CHANNEL, listener)

    async def publish_control(self, data: str) -> None:
        """Send ``data`` to every process's control listeners (at most once)."""
        await self.publish(CONTROL_CHANNEL, data)


# -- key-value ---------------------------------------------------------------------


class KeyValue(abc.ABC):
    """The few single-key operations accounts need (:mod:`boulanger.broker.accounts`).

    Every operation is on one key: a Redis Cluster routes it by the key's
    hash tag. Raises :class:`BrokerUnavailable` when the store cannot be reached.
    """

    @abc.abstractmethod
    async def get(self, key: str) -> str | None: ...

    @abc.abstractmethod
    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None: ...

    @abc.abstractmethod
    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        """Set ``key`` unless it is there: True when this call set it."""

    @abc.abstractmethod
    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        """Set ``key`` to ``change(current)`` atomically: no other write comes in between.

        ``change`` may run more than once (Redis retries when the key moved) and
        must not await or have side effects. Answers the value written.
        """

    @abc.abstractmethod
    async def delete(self, key: str) -> None: ...

    @abc.abstractmethod
    async def incr(self, key: str, ttl_s: float) -> int:
        """Add one; the key expires ``ttl_s`` after its first increment."""

    @abc.abstractmethod
    async def push(self, key: str, value: str, cap: int) -> None:
        """Put ``value`` first in the list at ``key``, keeping its ``cap`` newest."""

    @abc.abstractmethod
    async def items(self, key: str, limit: int) -> list[str]:
        """The list's first ``limit`` values (newest first)."""

    @abc.abstractmethod
    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        """Set ``member``'s score, unless a write of a version at least as new is
        there already: of two writers racing, the newer value stays, whichever
        of them writes last."""

    @abc.abstractmethod
    async def zrem(self, key: str, member: str) -> None: ...

    @abc.abstractmethod
    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        """The members with the highest scores, highest first."""


# -- the daily challenge ----------------------------------------------------------

STREAK_BATCH = 128


def daily_channel(day: date) -> str:
    """The pub/sub channel on which a day's new entries are published."""
    return f"bk:daily:{{{day.isoformat()}}}:live"


@dataclass(frozen=True, slots=True)
class Recorded:
    """The answer to :meth:`DailyStore.record`: the entry and whether this call wrote it."""

    created: bool
    ranked: RankedEntry


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a day's leaderboard, and how many entries the board has in all."""

    total: int
    entries: list[RankedEntry]


def published(day: date, ranked: RankedEntry) -> str:
    """The message published on :func:`daily_channel` for a new entry (or one a
    moderator's decision put on the leaderboard, or took off it: rank null)."""
    return json.dumps(
        {
            "date": day.isoformat(),
            "entry_id": ranked.entry_id,
            "rank": ranked.rank,
            "entry": ranked.entry.to_dict(),
        },
        separators=(",", ":"),
    )


def parse_published(data: str) -> RankedEntry:
    """The inverse of :func:`published` (the date is the channel's). A rank of null: an
    entry a moderator's decision took off the leaderboard."""
    message = json.loads(data)
    rank = message["rank"]
    return RankedEntry(
        None if rank is None else int(rank),
        int(message["entry_id"]),
        DailyEntry.from_dict(message["entry"]),
    )


def check_page(offset: int, limit: int) -> None:
    """Refuse a page that cannot be: ``ValueError``."""
    if offset < 0 or limit < 0:
        raise ValueError(f"a page needs offset >= 0 and limit >= 0, not {offset} and {limit}")


class DailyStore(abc.ABC):
    """Every day's attempts, entries and game records; every player's won days.

    Results are recorded once per player key and day: the first write wins,
    and writing again answers the entry already there (the race's on-over
    hook may run more than once, in any process). An entry held for review
    (``DailyEntry.review``) is kept with its game record and shown to its
    player, but stays out of the leaderboard (and so has no rank), is not
    published and does not count as a day won, until a moderator confirms it
    (:meth:`decide`); a disqualified entry leaves the leaderboard and its
    player's won days the same way. Days are kept ``retention_days`` after
    they end.
    """

    def __init__(self, retention_days: int) -> None:
        self.retention_days = retention_days

    @abc.abstractmethod
    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        """Make ``race_id`` the player's ranked attempt unless they have one: answer theirs."""

    @abc.abstractmethod
    async def attempt(self, day: date, key_hash: str) -> str | None:
        """The race id of the player's ranked attempt, if any."""

    @abc.abstractmethod
    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: RecordDict
    ) -> Recorded:
        """Record the player's result and game record, unless recorded already (first wins).

        A new entry is published on :func:`daily_channel`, unless it is held.
        """

    @abc.abstractmethod
    async def rename(self, day: date, key_hash: str, name: str) -> bool:
        """Show the player's entry of ``day`` under ``name`` (a deleted account's
        entries become "deleted player"); False when the player has none."""

    @abc.abstractmethod
    async def page(self, day: date, offset: int, limit: int) -> Page:
        """Entries ``offset`` .. ``offset + limit - 1`` in leaderboard order, and the total.

        ``limit`` 0 answers the total only.
        """

    @abc.abstractmethod
    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        """The player's entry at its current rank."""

    @abc.abstractmethod
    async def game_record(self, day: date, entry_id: int) -> RecordDict | None:
        """The game record of a day's entry, or None when there is no such entry."""

    @abc.abstractmethod
    async def decide(self, day: date, entry_id: int, decision: Decision) -> RankedEntry | None:
        """Keep a moderator's decision with the entry, and put the entry on the
        leaderboard and its win in its player's won days when it counts
        (``DailyEntry.counts``), off both when it does not. Idempotent: the same
        decision again changes nothing. None when there is no such entry.

        Not published: the caller publishes it (:func:`published`; rank null when off).
        """

    @abc.abstractmethod
    async def reviewed(self, day: date, limit: int) -> list[RankedEntry]:
        """Up to ``limit`` of the day's entries that were held or decided, newest first."""

    @abc.abstractmethod
    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        """Up to ``limit`` days won by the player, ``upto`` and before, latest first."""

    async def streak(self, key_hash: str, day: date) -> int:
        """Consecutive days won, ending on ``day`` or the day before."""
        found: set[date] = set()
        upto = day
        while True:
            days = await self.won_days(key_hash, upto, STREAK_BATCH)
            found.update(days)
            count = streak(found, day)
            if len(days) < STREAK_BATCH or min(days) < day - timedelta(days=count + 1):
                return count
            upto = min(days) - timedelta(days=1)


# -- per-address limits -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lease:
    """One holder's place in a key's count of things open at once (a connection)."""

    key: str
    member: str


class Limits(abc.ABC):
    """Counts that hold across every process on the store, each decided atomically.

    Two kinds: hits in a sliding window (races created a minute; later,
    sign-in attempts), and leases on things open at once (connections). A
    lease lasts ``lease_s`` unless renewed: a process that dies without giving
    its leases back stops renewing them, and they expire on their own.
    Raises :class:`BrokerUnavailable` when the store cannot be reached.
    """

    async def start(self) -> None:  # noqa: B027  (optional hook)
        """Called once, after the store's broker started."""

    async def close(self) -> None:  # noqa: B027  (optional hook)
        """Called once, before the store's broker closes."""

    @abc.abstractmethod
    async def hit(self, key: str, limit: int, window_s: float) -> bool:
        """Count one hit of ``key`` if it had fewer than ``limit`` in the last
        ``window_s`` seconds: True when counted, False (nothing counted) when over."""

    @abc.abstractmethod
    async def enter(self, key: str, limit: int, lease_s: float, member: str) -> Lease | None:
        """A lease named ``member`` on one of ``key``'s ``limit`` places, or None when
        every place is held."""

    @abc.abstractmethod
    async def leave(self, lease: Lease) -> None:
        """Give ``lease`` back."""

    @abc.abstractmethod
    async def renew(self, leases: list[Lease], lease_s: float) -> None:
        """Make each of ``leases`` still held last ``lease_s`` from now (one given back
        stays given back)."""


# -- a store ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Store:
    """One backend's four parts, kept in the same place (:func:`boulanger.broker.open_store`)."""

    broker: Broker
    kv: KeyValue
    daily: DailyStore
    limits: Limits

    async def start(self) -> None:
        """Connect (the broker first: the other parts use its connections)."""
        await self.broker.start()
        await self.limits.start()

    async def close(self) -> None:
        """Stop and disconnect (the broker last)."""
        await self.limits.close()
        await self.broker.close()
