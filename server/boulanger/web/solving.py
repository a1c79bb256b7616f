"""The solver, off the event loop: catalog picks, winnability checks, hints, and the
lines of wins (docs/fair-play.md).

Searches run in separate processes, so a long search never holds the event
loop (or the GIL) of the process serving WebSockets. Those processes must not
outlive the server: :meth:`SolverPool.close` stops them when the server stops,
and each worker itself exits when the server process is gone, however it
ended (a SIGKILL runs no clean-up code).

The processes are shared fairly (:class:`Lane`): what players wait for
(hints, reviews) runs on one process per core; race creation's checks of a
code on a process of their own, so that they never wait behind hints; the
lines of wins on another. Each requester (an address, an account) has at
most one request waiting or running in a lane, and a lane holds a bounded
number waiting: past either, a request is refused at once
(``solver_busy``) rather than queued. One address's burst therefore puts
one request in the queue, and anyone else waits for at most the queue's
bound of other requesters' searches.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from ..engine import GameCode, GameRecord, RecordDict
from ..engine.moves import MoveDict
from ..race.errors import Refused
from ..race.replay import ReviewLines
from ..solver import catalog, hint, solve
from ..solver.line import LineMeasureDict
from ..solver.search import Verdict

HINT_BUDGET_S = 1.0
# How often a worker checks that the server process is still its parent.
PARENT_CHECK_S = 0.5
# How long closing waits for a stopped worker to be gone.
CLOSE_WAIT_S = 5.0
# Requests waiting per worker process, unless the settings say otherwise.
QUEUE_PER_WORKER = 2

T = TypeVar("T")


def machine_workers() -> int:
    """The cores this process may run on (at least one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _judge(code: str, budget: float) -> tuple[bool | None, int | None]:
    solution = solve(code, budget=budget)
    if solution.result is Verdict.WON:
        return True, solution.par
    return (False if solution.result is Verdict.UNSOLVABLE else None), None


def _hint(record: GameRecord, budget: float) -> tuple[str, MoveDict | None]:
    found = hint(record.game(), budget=budget)
    return found.result, None if found.move is None else found.move.to_dict()


def _review(record: RecordDict, par: int | None, budget: float) -> ReviewLines:
    # Imported here: only the solver process reviews games.
    from ..race.replay import review_lines
    from ..solver.review import review_record

    if par is None:
        entry = catalog.lookup(GameCode.parse(record["code"]))
        par = entry.par if entry is not None else solve(record["code"], budget=budget / 4).par
    return review_lines(record, review_record(record, par=par, budget=budget).to_dict())


def _line(record: RecordDict, par: int | None) -> LineMeasureDict:
    # Imported here: only the solver process measures lines.
    from ..solver.line import measure_line

    return measure_line(record, par=par).to_dict()


def _exit_with_parent(parent: int) -> None:
    """In a worker: exit as soon as ``parent`` (the server process) is gone.

    A worker holds both ends of its task queue, so it would never see the
    server go: it would wait forever, adopted by init, and keep the
    resource tracker alive with it.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class Lane:
    """Worker processes and their fair, bounded queue.

    ``workers`` searches run at once; at most ``queue`` more wait, in the
    order they came. A requester (any of the ``owners`` keys a request
    carries: an address, an account) has one request at most waiting or
    running: another is refused at once, as is any request while the queue
    is full. A request's owners are free again when its search has ended in
    the worker, not when its asker stops waiting (a closed connection does
    not free a place the worker still uses).
    """

    def __init__(self, name: str, workers: int, queue: int) -> None:
        self.name = name
        self.workers = workers
        self.queue = queue
        self.busy: set[str] = set()  # owners with a request waiting or running
        self.waiting = 0
        self.running = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._pool: ProcessPoolExecutor | None = None

    def executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    async def run(self, owners: Iterable[str], fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker, once a place is free; refused when busy (above)."""
        keys = {key for key in owners if key}
        self.check(keys)
        self.busy |= keys
        try:
            await self._place()
        except BaseException:
            self.busy -= keys
            raise
        loop = asyncio.get_running_loop()
        try:
            future = self.executor().submit(fn, *args)
        except BaseException:
            self._release(keys)
            raise

        def ended(_: concurrent.futures.Future[T]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed first: nobody waits
                loop.call_soon_threadsafe(self._release, keys)

        future.add_done_callback(ended)
        return await asyncio.wrap_future(future)

    def check(self, owners: Iterable[str]) -> None:
        """Refuse (``solver_busy``) what :meth:`run` would refuse now."""
        if not self.busy.isdisjoint(owners):
            raise Refused(
                "solver_busy", "one solver request at a time: wait for the answer to the last"
            )
        if self.running >= self.workers and self.waiting >= self.queue:
            raise Refused("solver_busy", "the solver is busy; try again in a few seconds")

    async def _place(self) -> None:
        """Wait for a free worker, first come first served."""
        if self.running < self.workers and not self._waiters:
            self.running += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self.waiting += 1
        try:
            await waiter  # _release counted us as running when it woke us
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._release(set())  # woken and cancelled at once: pass the place on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise
        finally:
            self.waiting -= 1

    def _release(self, keys: set[str]) -> None:
        self.busy -= keys
        while self._waiters:
            waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)  # its place: running stays as it is
                return
        self.running -= 1

    def close(self) -> tuple[ProcessPoolExecutor | None, list[Any]]:
        """Forget the workers: their pool, and its processes to stop.

        ProcessPoolExecutor has no public way to stop its workers before
        Python 3.14 (terminate_workers); its process table is read instead.
        """
        pool, self._pool = self._pool, None
        if pool is None:
            return None, []
        return pool, list((getattr(pool, "_processes", None) or {}).values())


class SolverPool:
    """Worker processes that judge deals, give hints and measure lines, so the event
    loop never searches; shared fairly (:class:`Lane`)."""

    def __init__(self, catalog_seed: str = "", workers: int = 0, queue: int = 0) -> None:
        workers = workers or machine_workers()
        queue = queue or QUEUE_PER_WORKER * workers
        # Started on first use: what a player waits for (hints, reviews), one
        # process per core; race creation's checks of a code, one process that
        # never waits behind hints; the lines of wins (a few seconds each at
        # most, one per win), one that never holds up a hint.
        self.answers = Lane("answers", workers, queue)
        self.judges = Lane("judges", 1, QUEUE_PER_WORKER)
        self.lines = Lane("lines", 1, 1 << 30)
        # A seeded sequence of catalog picks, or None for random ones.
        self._rng = random.Random(catalog_seed) if catalog_seed else None

    def pick(self, cells: int, avoid: int | None = None) -> tuple[GameCode, int, bool]:
        """A deal from the catalog of proven-winnable deals, and its par; never deal ``avoid``."""
        entry = catalog.pick(cells, self._rng)
        for _ in range(100):  # a catalog of one deal, that deal avoided: give up
            if entry.code.deal != avoid:
                break
            entry = catalog.pick(cells, self._rng)
        else:
            raise LookupError(f"no deal with {cells} cells but deal {avoid}")
        return entry.code, entry.par, True

    async def judge(
        self, code: GameCode, budget: float, owners: Iterable[str] = ()
    ) -> tuple[bool | None, int | None]:
        """(winnable, par) for any code: from the catalog, else a bounded search.

        Refused (``solver_busy``) when one of ``owners`` has a check under way,
        or the checks' queue is full.
        """
        entry = catalog.lookup(code)
        if entry is not None:
            return True, entry.par
        return await self.judges.run(owners, _judge, str(code), budget)

    async def hint(
        self, record: GameRecord, budget: float = HINT_BUDGET_S, owners: Iterable[str] = ()
    ) -> tuple[str, MoveDict | None]:
        """A hint for a game record, searched by a worker within ``budget`` seconds.

        The search's verdict, and its move (None without one). Refused
        (``solver_busy``) as :meth:`Lane.run` says.
        """
        return await self.answers.run(owners, _hint, record, budget)

    async def review(
        self, record: RecordDict, par: int | None, budget: float, owners: Iterable[str] = ()
    ) -> ReviewLines:
        """A finished game's review (boulanger.solver.review), with its readable lines.

        Refused (``solver_busy``) as :meth:`Lane.run` says.
        """
        return await self.answers.run(owners, _review, record, par, budget)

    async def line(self, record: RecordDict, par: int | None) -> LineMeasureDict:
        """A won game's line (boulanger.solver.line), measured by a worker within its budget."""
        return await self.lines.run((), _line, record, par)

    def close(self) -> None:
        """Stop the workers now and wait until they are gone.

        A search under way is abandoned: nobody waits for its answer once the
        server stops. The server process may end right after this (uvicorn
        re-raises SIGTERM, so no exit handler runs): the workers must be gone
        by then, not merely asked to go.
        """
        pools: list[ProcessPoolExecutor] = []
        workers: list[Any] = []
        for lane in (self.answers, self.judges, self.lines):
            pool, processes = lane.close()
            if pool is not None:
                pools.append(pool)
                workers += processes
        for worker in workers:
            worker.terminate()
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
        for worker in workers:
            worker.join(CLOSE_WAIT_S)
