"""The solver, off the event loop: catalog picks, winnability checks, hints, and the
lines of wins (docs/fair-play.md).

Searches run in separate processes, so a long search never holds the event
loop (or the GIL) of the process serving WebSockets. Those processes must not
outlive the server: :meth:`SolverPool.close` stops them when the server stops,
and each worker itself exits when the server process is gone, however it
ended (a SIGKILL runs no clean-up code).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from ..engine import GameCode, GameRecord, RecordDict
from ..engine.moves import MoveDict
from ..race.replay import ReviewLines
from ..solver import catalog, hint, solve
from ..solver.line import LineMeasureDict
from ..solver.search import Verdict

HINT_BUDGET_S = 1.0
# How often a worker checks that the server process is still its parent.
PARENT_CHECK_S = 0.5
# How long closing waits for a stopped worker to be gone.
CLOSE_WAIT_S = 5.0


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


class SolverPool:
    """Worker processes that judge deals, give hints and measure lines, so the event
    loop never searches."""

    def __init__(self, catalog_seed: str = "") -> None:
        # Two workers, each started on first use: one for what a player waits
        # for (hints, judging a code, reviews), one for the lines of wins (a
        # few seconds each at most, which must not hold up a hint).
        self._pools: dict[str, ProcessPoolExecutor] = {}
        # A seeded sequence of catalog picks, or None for random ones.
        self._rng = random.Random(catalog_seed) if catalog_seed else None

    def _executor(self, worker: str = "answers") -> ProcessPoolExecutor:
        pool = self._pools.get(worker)
        if pool is None:
            context = multiprocessing.get_context("spawn")
            pool = self._pools[worker] = ProcessPoolExecutor(
                max_workers=1,
                mp_context=context,
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        return pool

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

    async def judge(self, code: GameCode, budget: float) -> tuple[bool | None, int | None]:
        """(winnable, par) for any code: from the catalog, else a bounded search."""
        entry = catalog.lookup(code)
        if entry is not None:
            return True, entry.par
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), _judge, str(code), budget)

    async def hint(
        self, record: GameRecord, budget: float = HINT_BUDGET_S
    ) -> tuple[str, MoveDict | None]:
        """A hint for a game record, searched by a worker within ``budget`` seconds.

        The search's verdict, and its move (None without one).
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), _hint, record, budget)

    async def review(self, record: RecordDict, par: int | None, budget: float) -> ReviewLines:
        """A finished game's review (boulanger.solver.review), with its readable lines."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), _review, record, par, budget)

    async def line(self, record: RecordDict, par: int | None) -> LineMeasureDict:
        """A won game's line (boulanger.solver.line), measured by a worker within its budget."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor("lines"), _line, record, par)

    def close(self) -> None:
        """Stop the workers now and wait until they are gone.

        A search under way is abandoned: nobody waits for its answer once the
        server stops. The server process may end right after this (uvicorn
        re-raises SIGTERM, so no exit handler runs): the workers must be gone
        by then, not merely asked to go.
        """
        pools = list(self._pools.values())
        self._pools.clear()
        # ProcessPoolExecutor has no public way to stop its workers before
        # Python 3.14 (terminate_workers); its process table is read instead.
        workers = [
            worker
            for pool in pools
            for worker in list((getattr(pool, "_processes", None) or {}).values())
        ]
        for worker in workers:
            worker.terminate()
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
        for worker in workers:
            worker.join(CLOSE_WAIT_S)
