"""The SQLite store's file and its one writer: group commits, readers, checkpoints, ageing.

SQLite calls never run on the event loop. One writer thread owns the write
connection and commits in groups: every job waiting when it starts a
transaction (appends, race creations, the daily store's writes) goes in that
one transaction, so one fsync serves them all, and while it runs the next
group gathers (``?window_ms=N`` makes the writer wait N ms after the first
job for more). Reads run on their own connections in a small thread pool;
WAL lets them read while the writer writes. A checkpoint thread copies the
WAL into the file as it fills, so commits never wait for one.

Every part of the store on the file adds its tables (:meth:`SqliteWriter.add_schema`)
and its ageing (:meth:`SqliteWriter.add_maintenance`); the file gives freed
pages back (``auto_vacuum=INCREMENTAL``), in small steps between groups of
appends. :class:`~.log.SqliteBroker`, the race logs, is the writer's owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from ..contracts import AppendRefused, BrokerUnavailable, Condition, race_channel
from .file import SqliteUrl, connect, lock

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION = 1
JOBS_IN_FLIGHT = 4096  # waiting for the writer, at most; beyond: BrokerUnavailable
READERS = 2
AGE_INTERVAL_S = 600.0
VACUUM_PAGES = 256  # pages given back per transaction
CHECKPOINT_INTERVAL_S = 0.2  # between checkpoints while transactions commit
# A WAL this long (64 MiB of 4 KiB pages) is made to start over, and its file is
# cut back to that size then (reused in place, not grown again). Each
# transaction writes every page it touched, about one per race it appended
# to: at 1,000 players that is several MiB a second, so a shorter WAL would
# make the writer pause to start it over every second or so.
TRUNCATE_TRIES = 100  # a full checkpoint waits out the checkpoint thread this often
WAL_RESTART_FRAMES = 16384
WAL_LIMIT_BYTES = WAL_RESTART_FRAMES * 4096
BUSY_TIMEOUT_MS = 5000  # as file.connect sets it


# -- the writer's jobs ------------------------------------------------------------


class _Append:
    __slots__ = ("condition", "future", "race_id", "text")

    def __init__(
        self, race_id: str, text: str, condition: Condition, future: asyncio.Future[int]
    ) -> None:
        self.race_id = race_id
        self.text = text
        self.condition = condition
        self.future = future


class _Call:
    __slots__ = ("fn", "future")

    def __init__(
        self, fn: Callable[[sqlite3.Connection], Any], future: asyncio.Future[Any]
    ) -> None:
        self.fn = fn
        self.future = future


_Job = _Append | _Call
# What the loop does for a finished job: its future, the result or the error,
# and for an appended event the channel and text to publish.
_Done = tuple["asyncio.Future[Any]", Any, "BaseException | None", "str | None", "str | None"]


@dataclass(slots=True)
class WriteStats:
    """The group commit at work: appends and transactions since the start."""

    transactions: int = 0
    appends: int = 0
    jobs: int = 0
    largest: int = 0  # jobs in the largest transaction
    wal_restarts: int = 0  # times the WAL started over from its beginning


class SqliteWriter:
    """A SQLite file's writer thread, readers and upkeep (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        age_interval_s: float = AGE_INTERVAL_S,
    ) -> None:
        parsed = SqliteUrl.parse(url)
        self.url = url
        self.path = parsed.path
        self.synchronous = parsed.synchronous
        self.window_s = parsed.window_s
        self.clock = clock  # seconds since the epoch: ages survive restarts
        self.age_interval_s = age_interval_s
        self.stats = WriteStats()
        # Taken here, before anything else opens the file: `boulanger serve`
        # refuses to start rather than fail once serving.
        self._lock_fd: int | None = lock(self.path)
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writer: threading.Thread | None = None
        self._readers: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._checkpointer: threading.Thread | None = None
        self._stopping = threading.Event()  # for the checkpoint thread
        self._committed = 0  # transactions since the last checkpoint
        self._restart_wal = False  # set by the checkpoint thread, done by the writer
        self._tasks: list[asyncio.Task[None]] = []
        self._maintenance: list[Callable[[sqlite3.Connection, int], bool]] = []
        self._schemas: list[str] = []
        self._closing = False

    # -- life ---------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self._lock_fd is None:
            raise BrokerUnavailable("the broker was closed")
        writer = await asyncio.to_thread(self._open_file)
        self._writer = threading.Thread(
            target=self._write_loop, args=(writer,), name="sqlite-writer", daemon=True
        )
        self._writer.start()
        self._readers = ThreadPoolExecutor(READERS, "sqlite-reader", initializer=self._open_reader)
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop, name="sqlite-checkpoint", daemon=True
        )
        self._checkpointer.start()
        self._tasks = [asyncio.create_task(self._age_loop(), name="sqlite-age")]

    def _open_file(self) -> sqlite3.Connection:
        """Open the writer's connection: WAL, incremental vacuum, the schema."""
        conn = connect(self.path, self.synchronous)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ValueError(f"{self.path} was written by a newer boulanger (schema {version})")
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect on a new file
            if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] != "wal":
                raise ValueError(f"{self.path}: SQLite cannot use WAL mode there")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpoint thread's work
            conn.executescript(self.schema())
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
                conn.execute("VACUUM")  # a file made elsewhere: switch it to incremental
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def schema(self) -> str:
        """Every table of the file: those each part of the store added."""
        return "".join(self._schemas)

    def add_schema(self, schema: str) -> None:
        """Have the file hold ``schema``'s tables too (a part of the store, before start)."""
        self._schemas.append(schema)

    def _open_reader(self) -> None:
        conn = connect(self.path, self.synchronous)
        conn.execute("PRAGMA query_only = 1")
        self._local.conn = conn
        with self._connections_lock:
            self._connections.append(conn)

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._writer is not None:
            self._queue.put(None)  # after every job queued: they all finish first
            await asyncio.to_thread(self._writer.join)
        self._stopping.set()
        if self._checkpointer is not None:
            await asyncio.to_thread(self._checkpointer.join)
        if self._readers is not None:
            await asyncio.to_thread(self._readers.shutdown)
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the lock goes with it
            self._lock_fd = None
        stats = self.stats
        if stats.transactions:
            log.info(
                "sqlite %s: %d appends and %d other writes in %d transactions"
                " (%.2f appends per transaction, at most %d jobs in one)",
                self.path,
                stats.appends,
                stats.jobs - stats.appends,
                stats.transactions,
                stats.appends / stats.transactions,
                stats.largest,
            )

    # -- reading and writing, for the log and the store's other parts on this file ----

    async def transact(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in the writer thread, in the next group's transaction; answer
        once it is committed.

        ``fn`` runs inside a savepoint: if it raises, its own writes are undone
        and its exception is raised here; the rest of the group is unaffected.
        Raises :class:`BrokerUnavailable` when the transaction cannot commit.
        """
        future: asyncio.Future[T] = self._running_loop().create_future()
        self._submit(_Call(fn, future))
        return await future

    async def query(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on a reader's connection, in one read transaction (one snapshot)."""
        readers = self._readers
        if readers is None or self._closing:
            raise BrokerUnavailable("the SQLite broker is not running")
        try:
            return await self._running_loop().run_in_executor(readers, self._read, fn)
        except sqlite3.Error as error:
            raise BrokerUnavailable(f"SQLite: {error}") from error
        except RuntimeError as error:  # the pool shut down meanwhile
            raise BrokerUnavailable(str(error)) from error

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn: sqlite3.Connection = self._local.conn
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            conn.execute("ROLLBACK")

    def add_maintenance(self, step: Callable[[sqlite3.Connection, int], bool]) -> None:
        """Have ``step(conn, now_ms)`` run in the writer with each ageing; it deletes
        a bounded amount and answers True while more is left to delete."""
        self._maintenance.append(step)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise BrokerUnavailable("the SQLite broker is not started")
        return self._loop

    def _submit(self, job: _Job) -> None:
        if self._closing or self._writer is None:
            raise BrokerUnavailable("the SQLite broker is not running")
        if self._in_flight >= JOBS_IN_FLIGHT:
            raise BrokerUnavailable(f"{JOBS_IN_FLIGHT} writes already waiting for the disk")
        self._in_flight += 1
        self._queue.put(job)

    def _finish(self, done: list[_Done]) -> None:
        """On the loop, once a transaction is over: answer its jobs, publish its events.

        Published on the next loop turn, after the appenders have resumed: a
        hub applies its own event as the append returns, and then skips it
        unparsed when it comes by pub/sub (as on the memory broker).
        """
        self._in_flight -= len(done)
        published = []
        for future, result, error, channel, text in done:
            if channel is not None and text is not None:
                published.append((channel, text))
            if future.done():  # its caller went away; the write stands
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
        if published:
            self._running_loop().call_soon(self._deliver, published)

    # -- what the log fills in ----------------------------------------------

    def _append(self, conn: sqlite3.Connection, job: _Append) -> tuple[int, str]:
        """In the writer: check an append's condition and insert it; (seq or 0, published text)."""
        raise NotImplementedError

    def _deliver(self, published: list[tuple[str, str]]) -> None:
        """On the loop: hand committed events (channel, text) to their listeners."""
        raise NotImplementedError

    def _rolled_back(self) -> None:
        """In the writer: a transaction failed; forget what it may have cached."""

    # -- the writer thread ----------------------------------------------------

    def _write_loop(self, conn: sqlite3.Connection) -> None:
        take, take_nowait = self._queue.get, self._queue.get_nowait
        running = True
        try:
            while running:
                first = take()
                if first is None:
                    break
                if self.window_s:
                    time.sleep(self.window_s)
                jobs = [first]
                while True:
                    try:
                        job = take_nowait()
                    except queue.Empty:
                        break
                    if job is None:
                        running = False
                        break
                    jobs.append(job)
                self._commit(conn, jobs)
                if self._restart_wal:
                    self._restart(conn)
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()

    def _restart(self, conn: sqlite3.Connection) -> None:
        """Have the WAL start over from its beginning.

        Under steady writes a passive checkpoint never finds the WAL wholly
        copied, so it never starts over and grows without end (and a growing
        file costs each commit's fsync more). The checkpoint thread has just
        copied nearly all of it: finishing here, between transactions, is short.
        """
        self._restart_wal = False
        # Without waiting: while someone reads (a backup, say), it fails at once
        # and is tried again after the next checkpoint.
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
            if not busy:
                self.stats.wal_restarts += 1
        except sqlite3.Error as error:
            log.warning("sqlite %s: restarting the WAL failed: %s", self.path, error)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def _commit(self, conn: sqlite3.Connection, jobs: list[_Job]) -> None:
        """One transaction for every job of the group; the loop hears of it after COMMIT."""
        done: list[_Done] = []
        appends = 0
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in jobs:
                if type(job) is _Append:
                    seq, text = self._append(conn, job)
                    if seq:
                        appends += 1
                        done.append((job.future, seq, None, race_channel(job.race_id), text))
                    else:
                        refused = AppendRefused(f"race {job.race_id}: the log has moved on")
                        done.append((job.future, None, refused, None, None))
                else:
                    assert isinstance(job, _Call)
                    done.append(self._call(conn, job))
            conn.execute("COMMIT")
        except Exception as error:  # sqlite3.Error above all: the disk, the file
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            self._rolled_back()
            log.error("sqlite %s: a transaction of %d jobs failed: %s", self.path, len(jobs), error)
            failure = BrokerUnavailable(f"SQLite: {error}")
            done = [(job.future, None, failure, None, None) for job in jobs]
        else:
            stats = self.stats
            stats.transactions += 1
            stats.appends += appends
            stats.jobs += len(jobs)
            stats.largest = max(stats.largest, len(jobs))
            self._committed += 1
        loop = self._loop
        assert loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(self._finish, done)

    def _call(self, conn: sqlite3.Connection, job: _Call) -> _Done:
        conn.execute("SAVEPOINT job")
        try:
            result = job.fn(conn)
        except Exception as error:
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
            if isinstance(error, sqlite3.Error):
                error = BrokerUnavailable(f"SQLite: {error}")
            return (job.future, None, error, None, None)
        conn.execute("RELEASE job")
        return (job.future, result, None, None, None)

    # -- upkeep: checkpoints, ageing ------------------------------------------

    def _checkpoint_loop(self) -> None:
        """The checkpoint thread: copy the WAL into the file while transactions commit.

        A thread of its own rather than a task, so that a busy event loop
        does not space checkpoints out (the WAL grows meanwhile). PASSIVE
        copies what it can without holding up the writer; once the WAL is long
        the writer makes it start over (:meth:`_restart`).
        """
        conn = connect(self.path, self.synchronous)
        try:
            while not self._stopping.wait(CHECKPOINT_INTERVAL_S):
                if not self._committed:
                    continue
                self._committed = 0
                try:
                    _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as error:
                    log.warning("sqlite %s: checkpoint failed: %s", self.path, error)
                    continue
                if frames >= WAL_RESTART_FRAMES:
                    self._restart_wal = True
        finally:
            conn.close()

    async def checkpoint(self) -> None:
        """Copy the whole WAL into the file and empty it (waits for the writer)."""
        if self._writer is None or self._closing:
            raise BrokerUnavailable("the SQLite broker is not running")

        def truncate() -> None:
            conn = connect(self.path, self.synchronous)
            try:
                # Busy while the checkpoint thread's own checkpoint runs: SQLite
                # answers that at once, without its busy handler, so try again.
                for _ in range(TRUNCATE_TRIES):
                    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                    if not busy:
                        return
                    time.sleep(CHECKPOINT_INTERVAL_S / 10)
                log.warning("sqlite %s: the WAL stayed busy; not emptied", self.path)
            finally:
                conn.close()

        await asyncio.to_thread(truncate)

    async def _age_loop(self) -> None:
        while True:
            try:
                await self.age()
            except BrokerUnavailable as error:
                log.warning("sqlite %s: ageing failed: %s", self.path, error)
            await asyncio.sleep(self.age_interval_s)

    async def age(self) -> None:
        """Delete races past their time and days past their retention, then give the
        freed pages back to the file system: in small transactions, so appends
        wait for none of it for long."""
        now = self.now_ms()
        for step in self._maintenance:
            while await self.transact(_at(step, now)):
                pass
        while await self.transact(_vacuum_step):
            pass


def _at(
    step: Callable[[sqlite3.Connection, int], bool], now_ms: int
) -> Callable[[sqlite3.Connection], bool]:
    return lambda conn: step(conn, now_ms)


def _vacuum_step(conn: sqlite3.Connection) -> bool:
    """Give up to VACUUM_PAGES free pages back; True while more are free."""
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    # Each step of the statement frees one page, and Python's sqlite3 steps a
    # statement that returns no rows once: one execute per page.
    for _ in range(min(free, VACUUM_PAGES)):
        conn.execute("PRAGMA incremental_vacuum(1)")
    return free > VACUUM_PAGES
