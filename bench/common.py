"""What the benchmarks share: the source tree they measure, percentiles.

Every script of ``bench/`` runs by its path (``.venv/bin/python bench/x.py``)
and puts the repository on ``sys.path`` first, so that it can import this
package's modules as ``bench.<module>``.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The source tree whose server is measured: the repository, or a snapshot
# (`git archive <rev> server | tar -x -C DIR`) so that edits in progress in
# the working tree do not change a run, or an older commit to compare with.
TREE = Path(os.environ.get("BOULANGER_BENCH_TREE", REPO)).resolve()


def use_tree() -> Path:
    """Import ``boulanger`` from the measured tree (``BOULANGER_BENCH_TREE``); that tree."""
    server = str(TREE / "server")
    if server not in sys.path:
        sys.path.insert(0, server)
    return TREE


def use_tests() -> None:
    """Import the tests' helpers (``support.*``: real servers, a scripted racer)."""
    tests = str(REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0 to 100) by nearest rank: the smallest value with at
    least ``q`` % of the values at or below it (the 50th of 1..4 is 2, the 99th of
    100 values their second largest); None for no values."""
    ordered = sorted(values)  # linear when already sorted
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]
