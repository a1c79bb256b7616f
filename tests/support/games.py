"""Seeded games for tests and benches: random play that loses, with times."""

from __future__ import annotations

import random
from typing import Any

from boulanger.engine import Game
from boulanger.race.race import game_view


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
    record = game.record().to_dict()
    record["actions"] = [{**a, "t": t} for a, t in zip(record["actions"], times, strict=True)]
    return record


def game_after(code: str, acks: list[dict[str, Any]]) -> dict[str, Any]:
    """The game a client keeps from its acks (docs/protocol.md, "ack"): the deal, each
    acknowledged move made on it (an undo, which lowers ``can_undo``, taken back),
    every ack's numbers checked; the wire's **Game** after the last one."""
    game = Game(code)
    status = "playing"
    for ack in acks:
        if ack["move"] is not None:
            if ack["can_undo"] < game.undo_depth:
                assert game.undo().to_dict() == ack["move"], ack
            else:
                game.play(ack["move"])
        view = game_view(game, ack["status"])
        numbers = ("score", "actions", "foundation_cards", "status", "can_undo")
        assert {k: view[k] for k in numbers} == {k: ack[k] for k in numbers}, ack
        status = ack["status"]
    return game_view(game, status)
