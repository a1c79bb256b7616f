"""Seeded games for tests and benches: random play that loses, with times."""

from __future__ import annotations

import random
from typing import Any

from boulanger.engine import Game


def random_record(code: str, seed: int, undo_rate: float = 0.1, limit: int = 300) -> dict[str, Any]:
    """A seeded game of random moves (foundation moves preferred, some undos), with ``t``.

    It stops when the game is won, stuck or at a dead end, or after ``limit``
    actions; times are 0.3 to 3 s apart.
    """
    rng = random.Random(seed)
    game = Game(code)
    times = []
    t = 0
    for _ in range(limit):
        if game.compute_status().value != "playing":
            break
        t += rng.randint(300, 3000)
        if game.undo_depth and rng.random() < undo_rate:
            game.undo()
        else:
            moves = game.legal_moves()
            home = [m for m in moves if m.dst == "foundation"]
            game.play(rng.choice(home) if home and rng.random() < 0.8 else rng.choice(moves))
        times.append(t)
    record = game.record()
    record["actions"] = [{**a, "t": t} for a, t in zip(record["actions"], times, strict=True)]
    return record
