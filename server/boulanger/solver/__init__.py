"""The solver: winnable deals, par and hints, on top of the engine.

Synchronous and pure (no asyncio, no I/O but the catalog files): the server
runs it in a thread or process pool.

* ``solve(code, budget=2.0, max_positions=None) -> Solution``: search a deal.
  ``Solution.result`` is a :class:`Verdict`: ``WON`` (``actions`` replay to a
  win, ``par`` is their number), ``UNSOLVABLE`` (proved: every reachable
  position was searched) or ``UNKNOWN`` (out of budget). A verdict is a
  ``str`` enum: it equals, and is sent as, ``"won"``, ``"unsolvable"``,
  ``"unknown"``.
* ``solve_board(board, budget=2.0)``: the same from any position.
* ``hint(game, budget=1.0) -> Hint``: the next move toward a win, or
  ``UNSOLVABLE`` (undo) or ``UNKNOWN``.
* ``line.measure_line(record) -> LineMeasure``: how closely a won game's moves
  follow a solver's winning line (docs/fair-play.md), within a budget.
* ``catalog.entries(cells)``, ``catalog.lookup(code)``, ``catalog.pick(cells, rng)``:
  the shipped deals verified winnable, with their par.
"""

from . import catalog
from .catalog import CatalogEntry
from .hint import Hint, hint
from .search import Verdict
from .solve import UNKNOWN, UNSOLVABLE, WON, Solution, solve, solve_board

__all__ = [
    "UNKNOWN",
    "UNSOLVABLE",
    "WON",
    "CatalogEntry",
    "Hint",
    "Solution",
    "Verdict",
    "catalog",
    "hint",
    "solve",
    "solve_board",
]
