"""Engine speed: validated-and-applied moves per second, legal-move generations per second.

    .venv/bin/python bench/engine.py [--deals 200] [--reps 7]

Moves: random legal play from many deals is recorded first; each timed
repetition then replays every game through the public API (``Game.play``,
which checks the move, applies it and scores it) and takes every move back
(``Game.undo``). One move counted = one play plus its undo.

Generations: ``Board.legal_moves()`` on positions met during that play.

Status: ``Game.status`` (won, stuck, dead end or playing; the property form of
``Game.compute_status()``, which older checkouts lack) on those positions,
as the server computes it after every action; the dead-end search in tight
positions is most of its cost. Random play meets many hopeless positions;
the load generator's bots play solver solutions, so ``Game.status`` is also
timed along the first 40 moves of those (from bench/load.py's cache of
solutions, when it exists: run bench/load.py once to make it). ``BOULANGER_BENCH_TREE=/path/to/checkout``
measures another checkout's engine, to compare two versions side by side.

Both figures are medians over the repetitions, on one core: the process is
pinned to one CPU where the OS allows it, and timed in process CPU time
(time.process_time), so other busy processes on the machine skew it less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(os.environ.get("BOULANGER_BENCH_TREE", Path(__file__).parent.parent)) / "server")
)

from boulanger.engine import Board, Game, GameCode, Move

MOVES_AIM = 250_000
GENERATIONS_AIM = 30_000
MAX_MOVES = 100  # within the undo limit, so every move can be undone


def random_game(code: GameCode, rng: random.Random) -> tuple[list[Move], list[Board]]:
    """Random legal play that backs up when stuck; returns its deepest line and every position seen.

    It favours the foundation and columns; uniform random play fills the cells
    and is stuck within a dozen moves.
    """
    game = Game(code)
    line: list[Move] = []
    best: list[Move] = []
    positions: list[Board] = []
    for _ in range(4 * MAX_MOVES):
        legal = game.legal_moves()
        positions.append(game.board.copy())
        if not legal or len(line) == MAX_MOVES:
            for _ in range(min(len(line), rng.randint(1, 8))):
                game.undo()
                line.pop()
            if not line and not legal:
                break
            continue
        useful = [m for m in legal if m.dst == "foundation"] or [
            m for m in legal if m.dst.startswith("col") and not game.board.is_pointless(m)
        ]
        move = rng.choice(useful if useful and rng.random() < 0.8 else legal)
        game.play(move)
        line.append(move)
        if len(line) > len(best):
            best = list(line)
    return best, positions


def time_moves(games: list[tuple[GameCode, list[Move]]], as_dicts: bool = False) -> float:
    fresh = [
        (Game(code), [m.to_dict() for m in moves] if as_dicts else moves) for code, moves in games
    ]
    count = 0
    start = time.process_time()
    for game, moves in fresh:
        play = game.play
        undo = game.undo
        for move in moves:
            play(move)  # type: ignore[arg-type]
        for _ in moves:
            undo()
        count += len(moves)
    return count / (time.process_time() - start)


def time_generations(positions: list[Board], rounds: int) -> float:
    start = time.process_time()
    for _ in range(rounds):
        for board in positions:
            board.legal_moves()
    return rounds * len(positions) / (time.process_time() - start)


def time_status(positions: list[Board]) -> float:
    """Microseconds per ``Game.status``."""
    game = Game(GameCode(1))
    start = time.process_time()
    for board in positions:
        game.board = board
        game.status  # noqa: B018 (computed for its cost)
    return (time.process_time() - start) / len(positions) * 1e6


SOLUTIONS = Path(tempfile.gettempdir()) / "boulanger-bench-solutions.json"


def solution_positions(moves_each: int = 40) -> list[Board]:
    """Positions along the first moves of the load generator's solved games."""
    if not SOLUTIONS.exists():
        return []
    positions = []
    for code, actions in json.loads(SOLUTIONS.read_text()).items():
        game = Game(code)
        for action in actions[:moves_each]:
            game.play(Move.from_dict(action))
            positions.append(game.board.copy())
    return positions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=200, help="deals to play (default 200)")
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (default 7)")
    args = parser.parse_args()

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = random.Random(20240601)
    games: list[tuple[GameCode, list[Move]]] = []
    positions: list[Board] = []
    for deal in range(1, args.deals + 1):
        code = GameCode(deal, (4, 4, 2, 1)[deal % 4])
        moves, seen = random_game(code, rng)
        games.append((code, moves))
        positions.extend(seen)
    total_moves = sum(len(m) for _, m in games)
    legal = sum(len(b.legal_moves()) for b in positions) / len(positions)

    move_rates = [time_moves(games) for _ in range(args.reps)]
    dict_rates = [time_moves(games, as_dicts=True) for _ in range(args.reps)]
    generation_rates = [time_generations(positions, 3) for _ in range(args.reps)]
    status_us = [time_status(positions) for _ in range(args.reps)]
    solved = solution_positions()
    solved_us = [time_status(solved) for _ in range(args.reps)] if solved else []
    tight = sum(1 for b in positions if None not in b.cells and all(b.columns))
    moves_per_s = statistics.median(move_rates)
    generations_per_s = statistics.median(generation_rates)

    print(f"python {sys.version.split()[0]}, {args.reps} repetitions, medians, one core")
    print(f"{args.deals} deals, {total_moves} moves per repetition (play + undo each)")
    print(f"{len(positions)} positions, {legal:.1f} legal moves each on average")
    print(
        f"moves/s (Game.play + Game.undo): {moves_per_s:>10,.0f}   aim {MOVES_AIM:,}  "
        f"{'ok' if moves_per_s >= MOVES_AIM else 'BELOW AIM'}"
    )
    print(f"moves/s from dicts (as a server receives them): {statistics.median(dict_rates):,.0f}")
    print(
        f"generations/s (Board.legal_moves): {generations_per_s:>8,.0f}   aim {GENERATIONS_AIM:,}  "
        f"{'ok' if generations_per_s >= GENERATIONS_AIM else 'BELOW AIM'}"
    )
    print(
        f"Game.status: {statistics.median(status_us):.1f} us per position "
        f"({tight} of the positions are tight: the dead-end search runs there)"
    )
    if solved_us:
        print(
            f"Game.status along solutions: {statistics.median(solved_us):.1f} us per position "
            f"({len(solved)} positions, the first 40 moves of each solved deal)"
        )
    print(f"  moves/s runs: {', '.join(f'{r:,.0f}' for r in move_rates)}")
    print(f"  generations/s runs: {', '.join(f'{r:,.0f}' for r in generation_rates)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
