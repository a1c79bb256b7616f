"""The ack's cost, before and after it lost the player's game: bytes and encode time.

    .venv/bin/python bench/ack_cost.py [--deals 20] [--reps 7]

Positions: the first 60 moves of solver solutions of a few 4-cell deals (the
load generator's bots play such lines). At each, the ack of the move that led
there is made both ways, as the server makes it:

- before: the whole game (``game_view``: the board, the numbers) in the ack;
- now: the move, its card and the numbers (``Answer.ack``), the answer the
  race keeps for a resent action id made first, as ``Race._player_event`` does.

Both go through ``codec.encode``, the server's one encoder (orjson when it is
installed). Timed in process CPU time on one CPU where the OS allows it;
medians over the repetitions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))

from boulanger import codec
from boulanger.engine import Game, GameCode, Move
from boulanger.race.race import Answer, game_view, moved_card
from boulanger.solver import solve

MOVES = 60
Position = tuple[Game, Move, str, str]  # the game after a move, the move, its card, the status


def positions(deals: int) -> list[Position]:
    """The positions after each of the first MOVES moves of solutions of ``deals`` deals."""
    found = []
    for deal in range(1, deals + 1):
        code = str(GameCode(deal, 4))
        line = solve(code, budget=10).actions[:MOVES]
        game = Game(code)
        for n, action in enumerate(line):
            move = Move.from_dict(action)
            card = moved_card(game.board, move)
            game.play(move)
            after = Game.from_record({"code": code, "actions": line[: n + 1]})
            # The status is the server's whichever the ack: judged once per action.
            found.append((after, move, card, after.compute_status().value))
    return found


def before(found: list[Position]) -> list[str]:
    """The acks as they were: the whole game in each."""
    dumps = codec.dumps
    return [
        dumps(
            {
                "type": "ack",
                "action_id": "a17",
                "seq": 412,
                "move": move.to_dict(),
                "game": game_view(game, status),
                "ref": "r17",
            }
        )
        for game, move, _, status in found
    ]


def now(found: list[Position]) -> list[str]:
    """The acks now: the answer kept for the action id, then its message."""
    encode = codec.encode
    texts = []
    for game, move, card, status in found:
        answer = Answer(
            412,
            move,
            card,
            game.score,
            game.actions,
            game.board.foundation_cards,
            status,
            game.undo_depth,
        )
        texts.append(encode(answer.ack("a17", "r17")))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    found = positions(args.deals)
    makers = {"before": before, "now": now}
    sizes = {name: [len(t.encode()) for t in make(found)] for name, make in makers.items()}
    times: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(args.reps):
        for name, make in makers.items():  # interleaved, repetition by repetition
            start = time.process_time()
            make(found)
            times[name].append((time.process_time() - start) / len(found) * 1e6)
    print(f"{len(found)} acks: the first {MOVES} moves of solutions of {args.deals} deals")
    print(f"encoder: {'orjson' if codec_uses_orjson() else 'json'}")
    for name in makers:
        print(
            f"{name:>6}: {statistics.mean(sizes[name]):4.0f} bytes on average "
            f"(median {statistics.median(sizes[name]):.0f}), "
            f"{statistics.median(times[name]):5.2f} us to make and encode one "
            f"(runs: {', '.join(f'{t:.2f}' for t in times[name])})"
        )


def codec_uses_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
