"""The SQLite store's log: every race log in one file, durable, for one process.

``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``. The file is
in WAL mode; an append is acknowledged (its future resolved) only after the
transaction holding it is committed, and with ``synchronous=FULL`` (the
default) a commit has reached the disk. ``?synchronous=normal`` skips that
fsync: a crash of the *process* still loses nothing (the kernel has the
data), a power loss or a crash of the *machine* may lose the last
transactions, acknowledged actions included, and never corrupts the file.

SQLite calls never run on the event loop: the file's writer thread, readers
and checkpoints are :mod:`.writer`'s.

Each race's state that appends check (its length, whether it is over, each
player's number of events) is kept in the writer thread's memory, loaded
from the file the first time a race is touched after a start. That is sound
because the file has one writer: an exclusive lock on ``<file>.lock``, held
for the process's life, refuses a second process (:mod:`.file`). Pub/sub
is in-process, as on the memory broker; events are published once their
transaction is committed, in log order.

Races are deleted ``race_ttl_s`` after their creation (7 days, as on Redis),
the daily store's days after their retention, and the file gives freed pages
back (``auto_vacuum=INCREMENTAL``), in small steps between groups of appends.

Layout::

    races   (no INTEGER PRIMARY KEY, id TEXT UNIQUE, created_at ms, meta JSON, over 0/1)
    events  (race -> races.no, seq, player, data)   one row per log event;
            ``player`` is the player whose own event count the event counts in
            (an action's), ``data`` the event's JSON without ``seq``
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ...codec import with_seq
from ...race.condition import LogState
from ...race.race import RaceMeta
from ..contracts import Broker, BrokerUnavailable, Condition, Listener
from .writer import AGE_INTERVAL_S, SqliteWriter, _Append

log = logging.getLogger(__name__)

RACE_TTL_S = 7 * 24 * 3600  # as on Redis (RACE_TTL_S in .redis)
STATES_KEPT = 4096  # races whose append state the writer keeps in memory
AGE_BATCH = 16  # races deleted per transaction (each a few hundred events)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS races (
    no INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    meta TEXT,
    over INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS races_by_age ON races (created_at);
CREATE TABLE IF NOT EXISTS events (
    race INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    player TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (race, seq)
) WITHOUT ROWID;
"""


@dataclass(slots=True)
class _RaceState:
    """A race's row, and what an append checks: as committed plus what this transaction added."""

    no: int
    log: LogState


class SqliteBroker(SqliteWriter, Broker):
    """Race logs in a SQLite file (see the module docstring)."""

    kind = "sqlite"

    def __init__(
        self,
        url: str,
        *,
        race_ttl_s: float = RACE_TTL_S,
        clock: Callable[[], float] = time.time,
        age_interval_s: float = AGE_INTERVAL_S,
    ) -> None:
        super().__init__(url, clock=clock, age_interval_s=age_interval_s)
        self.race_ttl_s = race_ttl_s
        self._listeners: dict[str, set[Listener]] = {}
        self._states: OrderedDict[str, _RaceState] = OrderedDict()  # the writer thread's
        self.add_schema(_SCHEMA)
        self.add_maintenance(self._age_races)  # first: the other parts' after

    async def ping(self) -> bool:
        try:
            return bool(await self.query(lambda c: c.execute("SELECT 1").fetchone()[0]))
        except BrokerUnavailable:
            return False

    # -- race logs ----------------------------------------------------------

    async def create_race(self, meta: RaceMeta) -> None:
        race_id = meta.race_id
        text = json.dumps(meta.to_dict(), separators=(",", ":"))
        created = self.now_ms()

        def create(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO races (id, created_at, meta) VALUES (?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET meta = excluded.meta",
                (race_id, created, text),
            )

        await self.transact(create)

    async def race_meta(self, race_id: str) -> RaceMeta | None:
        oldest = self.now_ms() - int(self.race_ttl_s * 1000)

        def find(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT meta FROM races WHERE id = ? AND created_at > ?", (race_id, oldest)
            ).fetchone()
            return None if row is None else row[0]

        text = await self.query(find)
        return None if text is None else RaceMeta.from_dict(json.loads(text))

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        future: asyncio.Future[int] = self._running_loop().create_future()
        self._submit(_Append(race_id, event, condition, future))
        return await future

    async def read(self, race_id: str, after: int) -> list[str]:
        def rows(conn: sqlite3.Connection) -> list[tuple[int, str]]:
            return conn.execute(
                "SELECT seq, data FROM events WHERE race = (SELECT no FROM races WHERE id = ?)"
                " AND seq > ? ORDER BY seq",
                (race_id, after),
            ).fetchall()

        found = await self.query(rows)
        return [with_seq(seq, data) for seq, data in found]

    # -- pub/sub: in this process -------------------------------------------

    async def subscribe(self, channel: str, listener: Listener) -> None:
        self._listeners.setdefault(channel, set()).add(listener)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[channel]

    async def publish(self, channel: str, data: str) -> None:
        # On the next loop turn, as a network broker would deliver it.
        loop = self._running_loop()
        for listener in tuple(self._listeners.get(channel, ())):
            loop.call_soon(listener.on_message, data)

    def _deliver(self, published: list[tuple[str, str]]) -> None:
        listeners_of = self._listeners
        for channel, data in published:
            for listener in tuple(listeners_of.get(channel, ())):
                try:
                    listener.on_message(data)
                except Exception:
                    log.exception("listener failed on %r", channel)

    # -- in the writer thread -----------------------------------------------

    def _append(self, conn: sqlite3.Connection, job: _Append) -> tuple[int, str]:
        """Check the condition against the race's state, insert; (seq or 0, published text)."""
        state = self._state(conn, job.race_id)
        log = state.log
        was_over = log.over
        seq = log.append(job.condition)  # the rule every store applies
        if not seq:
            return 0, ""
        conn.execute(
            "INSERT INTO events (race, seq, player, data) VALUES (?, ?, ?, ?)",
            (state.no, seq, job.condition.player_id, job.text),
        )
        if log.over and not was_over:
            conn.execute("UPDATE races SET over = 1 WHERE no = ?", (state.no,))
        return seq, with_seq(seq, job.text)

    def _state(self, conn: sqlite3.Connection, race_id: str) -> _RaceState:
        states = self._states
        state = states.get(race_id)
        if state is not None:
            states.move_to_end(race_id)
            return state
        row = conn.execute("SELECT no, over FROM races WHERE id = ?", (race_id,)).fetchone()
        if row is None:
            # A log without a race (never created, or aged out): it gets a row
            # of its own so that it ages out too.
            cursor = conn.execute(
                "INSERT INTO races (id, created_at) VALUES (?, ?)", (race_id, self.now_ms())
            )
            assert cursor.lastrowid is not None
            state = _RaceState(cursor.lastrowid, LogState())
        else:
            no, over = row
            length = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM events WHERE race = ?", (no,)
            ).fetchone()[0]
            counts = conn.execute(
                "SELECT player, count(*) FROM events WHERE race = ? AND player IS NOT NULL"
                " GROUP BY player",
                (no,),
            ).fetchall()
            state = _RaceState(no, LogState(length, bool(over), dict(counts)))
        states[race_id] = state
        if len(states) > STATES_KEPT:
            states.popitem(last=False)  # the least recently used; reloaded when needed
        return state

    def _rolled_back(self) -> None:
        self._states.clear()  # they may hold what was rolled back: reload from the file

    def _age_races(self, conn: sqlite3.Connection, now_ms: int) -> bool:
        oldest = now_ms - int(self.race_ttl_s * 1000)
        rows = conn.execute(
            "SELECT no, id FROM races WHERE created_at <= ? ORDER BY created_at LIMIT ?",
            (oldest, AGE_BATCH),
        ).fetchall()
        for no, race_id in rows:
            conn.execute("DELETE FROM events WHERE race = ?", (no,))
            conn.execute("DELETE FROM races WHERE no = ?", (no,))
            self._states.pop(race_id, None)
        return len(rows) == AGE_BATCH
