"""What the game review costs per record (boulanger.solver.review).

    .venv/bin/python bench/review.py                    # deals 1..200 at 4 and 2 cells
    .venv/bin/python bench/review.py --to 50 --cells 4  # a smaller run

The records are made here, seeded, two kinds per deal:

* ``random``: random play from the deal (seed = the deal number): a random
  legal move, a foundation move 4 times in 5 when there is one, an undo one
  time in 10, until the game is stuck, at a dead end or 300 actions long;
* ``line+random``: the solver's winning line for half its length, then the
  same random play (deals with no win found in 10 s have none of these):
  a game that loses the win mid-game, as a human's often does.

For each cell count and kind it prints the median and 95th-percentile time
per record (wall and CPU), the slowest, and how many reviews found the
losing move, ``never_winnable``, ``winnable_at_end``, ``won`` or ``unknown``
(the budget, as the server gives it: ``REVIEW_BUDGET_S``).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(
    0, str(Path(os.environ.get("BOULANGER_BENCH_TREE", Path(__file__).parent.parent)) / "server")
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile
from boulanger.engine import Game, GameCode
from boulanger.solver import solve
from boulanger.solver.review import review_record
from boulanger.web.replays import REVIEW_BUDGET_S


def random_play(game: Game, seed: int, limit: int = 300) -> None:
    rng = random.Random(seed)
    for _ in range(limit):
        if game.compute_status().value != "playing":
            return
        if game.undo_depth and rng.random() < 0.1:
            game.undo()
            continue
        moves = game.legal_moves()
        home = [m for m in moves if m.dst == "foundation"]
        game.play(rng.choice(home) if home and rng.random() < 0.8 else rng.choice(moves))


def timed(game: Game, seed: int) -> dict[str, Any]:
    """The game's record with ``t``: 0.3 to 3 s between actions."""
    rng = random.Random(seed)
    record = game.record()
    record = record.to_dict() if hasattr(record, "to_dict") else record  # a GameRecord now
    t = 0
    for action in record["actions"]:
        t += rng.randint(300, 3000)
        action["t"] = t
    return record


def records(code: GameCode) -> dict[str, dict[str, Any]]:
    out = {}
    game = Game(code)
    random_play(game, code.deal)
    out["random"] = timed(game, code.deal)
    solution = solve(code, budget=10)
    if solution.result == "won":
        game = Game(code)
        for move in solution.actions[: len(solution.actions) // 2]:
            game.play(move)
        random_play(game, code.deal)
        out["line+random"] = timed(game, code.deal)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="first", type=int, default=1)
    parser.add_argument("--to", dest="last", type=int, default=200)
    parser.add_argument("--cells", type=int, nargs="*", default=[4, 2])
    parser.add_argument("--budget", type=float, default=REVIEW_BUDGET_S)
    args = parser.parse_args()
    print(f"review budget {args.budget:.1f} s, deals {args.first}..{args.last}")
    for cells in args.cells:
        walls: dict[str, list[float]] = collections.defaultdict(list)
        cpus: dict[str, list[float]] = collections.defaultdict(list)
        findings: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        slowest: dict[str, tuple[float, int]] = {}
        for deal in range(args.first, args.last + 1):
            for kind, record in records(GameCode(deal, cells)).items():
                started, started_cpu = time.perf_counter(), time.process_time()
                found = review_record(record, budget=args.budget)
                wall = time.perf_counter() - started
                walls[kind].append(wall)
                cpus[kind].append(time.process_time() - started_cpu)
                findings[kind][found.finding] += 1
                if wall > slowest.get(kind, (0.0, 0))[0]:
                    slowest[kind] = (wall, deal)
        for kind in sorted(walls):
            w, c = walls[kind], cpus[kind]
            print(
                f"{cells} cells {kind:12s} records {len(w):4d}"
                f"  wall median {statistics.median(w) * 1000:7.1f} ms p95 {percentile(w, 95) * 1000:7.1f} ms"
                f"  cpu median {statistics.median(c) * 1000:7.1f} ms p95 {percentile(c, 95) * 1000:7.1f} ms"
                f"  slowest {slowest[kind][0]:.2f} s (deal {slowest[kind][1]})"
            )
            print("    " + ", ".join(f"{k} {n}" for k, n in sorted(findings[kind].items())))


if __name__ == "__main__":
    main()
