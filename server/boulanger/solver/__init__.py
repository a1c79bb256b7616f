"""The solver: winnable deals, par and hints, on top of the engine.

Synchronous and pure (no asyncio, no I/O but the catalog files): the server
runs it in a thread or process pool.
"""

from . import catalog
from .catalog import CatalogEntry
from .hint import Hint, hint
from .solve import UNKNOWN, UNSOLVABLE, WON, Solution, solve, solve_board

__all__ = [
    "UNKNOWN",
    "UNSOLVABLE",
    "WON",
    "CatalogEntry",
    "Hint",
    "Solution",
    "catalog",
    "hint",
    "solve",
    "solve_board",
]
