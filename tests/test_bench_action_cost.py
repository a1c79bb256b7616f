"""bench/action_cost.py drives the hub as the race socket does: it must keep working
as the hub's seams move (it stood still once when a connection's send grew a flag)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_action_cost_runs_and_prints_a_figure() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "action_cost.py"), "--actions", "300", "--reps", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"race work per accepted action: ([0-9.]+) us \(median\)", done.stdout)
    assert found and float(found.group(1)) > 0, done.stdout
