"""Benchmark our solver against Freecell Solver on the same deals.

    .venv/bin/python bench/solver.py                      # deals 1..1000 at 4 and 2 cells
    .venv/bin/python bench/solver.py --cells 2 --to 100   # a smaller run

For each cell count it prints: the share of deals each solver decided, the
disagreements on deals both decided (there must be none), the median and
95th-percentile time per deal, and the time ratio ours / fc-solve. fc-solve
runs as ``fc-solve -g bakers_game --method soft-dfs -to 01ABCDE`` (single-card
moves only, so its "could not solve" is a proof); its time is the wall time of
the process, start-up included.

Ours is also timed in process CPU time: a figure that a busy machine skews
less, to compare two versions of our solver.
``BOULANGER_BENCH_TREE=/path/to/checkout`` measures another checkout's solver.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(os.environ.get("BOULANGER_BENCH_TREE", Path(__file__).parent.parent)) / "server")
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile
from boulanger.engine import Board, GameCode
from boulanger.solver import UNKNOWN, fcsolve, solve_board


def bench(cells: int, first: int, last: int, budget: float, fc_max_iters: int | None) -> bool:
    ours_times: list[float] = []
    ours_cpu: list[float] = []
    theirs_times: list[float] = []
    ours_decided = theirs_decided = both = won = 0
    disagreements: list[int] = []
    undecided: list[int] = []
    for deal in range(first, last + 1):
        board = Board.deal(GameCode(deal, cells))
        started, started_cpu = time.perf_counter(), time.process_time()
        ours = solve_board(board, budget=budget).result
        ours_cpu.append(time.process_time() - started_cpu)
        ours_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        theirs = fcsolve.verdict(board, max_iters=fc_max_iters)
        theirs_times.append(time.perf_counter() - started)
        ours_decided += ours != UNKNOWN
        if ours == UNKNOWN:
            undecided.append(deal)
        theirs_decided += theirs != UNKNOWN
        won += ours == "won"
        if UNKNOWN not in (ours, theirs):
            both += 1
            if ours != theirs:
                disagreements.append(deal)
                print(f"  DISAGREEMENT deal {deal}: ours {ours}, fc-solve {theirs}", flush=True)
    count = last - first + 1
    ratio = sum(ours_times) / sum(theirs_times)
    print(f"{cells} cells, deals {first}..{last} ({count} deals), budget {budget} s per deal")
    print(
        f"  decided: ours {100 * ours_decided / count:.1f}%, fc-solve {100 * theirs_decided / count:.1f}%"
    )
    print(f"  won (ours): {won} ({100 * won / count:.1f}%)")
    if undecided:
        print(f"  undecided by ours within the budget: {undecided}")
    print(
        f"  disagreements on {both} deals both decided: {len(disagreements)} {disagreements or ''}"
    )
    for name, times in (("ours", ours_times), ("fc-solve", theirs_times)):
        print(
            f"  {name:8} median {statistics.median(times):.4f} s, p95 {percentile(times, 95):.4f} s,"
            f" max {max(times):.4f} s, total {sum(times):.1f} s"
        )
    print(
        f"  ours CPU median {statistics.median(ours_cpu):.4f} s, p95 {percentile(ours_cpu, 95):.4f} s,"
        f" total {sum(ours_cpu):.1f} s"
    )
    print(
        f"  time ratio ours/fc-solve: total {ratio:.1f}x, median"
        f" {statistics.median(ours_times) / statistics.median(theirs_times):.1f}x",
        flush=True,
    )
    return not disagreements


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[4, 2], choices=[4, 2, 1])
    parser.add_argument("--from", dest="first", type=int, default=1)
    parser.add_argument("--to", dest="last", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=2.0, help="our seconds per deal")
    parser.add_argument("--fc-max-iters", type=int, help="fc-solve's limit (default: none)")
    args = parser.parse_args(argv)
    if not fcsolve.available():
        print("fc-solve is not installed (Debian package freecell-solver-bin)", file=sys.stderr)
        return 2
    agreed = [bench(c, args.first, args.last, args.budget, args.fc_max_iters) for c in args.cells]
    return 0 if all(agreed) else 1


if __name__ == "__main__":
    sys.exit(main())
