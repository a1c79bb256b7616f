"""The solver, off the event loop: catalog picks, winnability checks and hints.

Searches run in a separate process, so a long search never holds the event
loop (or the GIL) of the process serving WebSockets.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..engine import Game, GameCode
from ..solver import catalog, hint, solve

HINT_BUDGET_S = 1.0


def _judge(code: str, budget: float) -> tuple[bool | None, int | None]:
    solution = solve(code, budget=budget)
    if solution.result == "won":
        return True, solution.par
    return (False if solution.result == "unsolvable" else None), None


def _hint(record: dict[str, Any], budget: float) -> tuple[str, dict[str, Any] | None]:
    found = hint(Game.from_record(record), budget=budget)
    return found.result, None if found.move is None else found.move.to_dict()


class SolverPool:
    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
        return self._pool

    def pick(self, cells: int, avoid: int | None = None) -> tuple[GameCode, int, bool]:
        """A deal from the catalog of proven-winnable deals, and its par; never deal ``avoid``."""
        entry = catalog.pick(cells)
        for _ in range(100):  # a catalog of one deal, that deal avoided: give up
            if entry.code.deal != avoid:
                break
            entry = catalog.pick(cells)
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

    async def hint(self, record: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), _hint, record, HINT_BUDGET_S)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
