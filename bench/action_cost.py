"""The race's own work per accepted action, without sockets: what the fan-out baseline lacks.

    .venv/bin/python bench/action_cost.py [--actions 20000] [--reps 5]
    BOULANGER_BENCH_TREE=/path/to/checkout .venv/bin/python bench/action_cost.py

One race of 8 players on the embedded broker, in one process: each action
goes through ``RaceHub.submit`` as a race socket sends it (decide against
the replica, append to the memory broker, apply: the engine's move, the
status with its dead-end search, the standings, the ``progress`` message
encoded and framed once for the 8 connections, which are stand-ins that
keep nothing) and then its ``ack`` is encoded, as ``RaceSession._act`` does.
The event's own copy comes back over the broker's channel on the next loop
turn, as in the server. Not timed: receiving and parsing the frame, writing
to sockets, the event loop's own work (the baseline pays those too).

The actions: seeded random legal moves of a 4-cell deal, one in ten an undo
(random play reaches tight positions, where the dead-end search runs, more
often than the load generator's bots, which play solver solutions). Timed in
process CPU time on one CPU where the OS allows it; the median per action
over the repetitions (the same deal and moves in each).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
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

from boulanger import codec
from boulanger.broker.memory import MemoryBroker
from boulanger.engine import GameCode
from boulanger.race import protocol as p
from boulanger.race.ids import secret_hash
from boulanger.race.race import RaceMeta
from boulanger.web.connection import text_frame
from boulanger.web.hub import RaceHub, now_ms

PLAYERS = 8


class StandIn:
    """A connection that frames nothing again and keeps nothing (what the hub sees of one)."""

    def __init__(self, player_id: str) -> None:
        self.player_id = player_id
        self.watching: str | None = None

    def send(self, text: str, frame: bytes | None = None, soon: bool = True) -> None:
        if frame is None:
            text_frame(text)


async def race(deal: int) -> tuple[RaceHub, list[str]]:
    """A started race of 8 players on a memory broker."""
    broker = MemoryBroker()
    meta = RaceMeta(
        f"r{deal}", str(GameCode(deal, 4)), now_ms(), secret_hash("key"), countdown_ms=0
    )
    if len(inspect.signature(broker.create_race).parameters) == 1:  # the store takes RaceMeta
        await broker.create_race(meta)
    else:  # an older tree's: the id and a dict
        await broker.create_race(meta.race_id, meta.to_dict())
    hub = RaceHub(broker, meta)
    await hub.open()
    players = []
    for i in range(PLAYERS):
        player_id, join = f"p{i}", p.Join(name=f"player {i}", host_key="key" if i == 0 else None)
        await hub.submit(
            lambda join=join, player_id=player_id: hub.race.decide_join(
                join, now_ms(), player_id, f"token {player_id}"
            )
        )
        hub.attach(StandIn(player_id))  # what the hub uses of a Connection
        players.append(player_id)
    await hub.submit(lambda: hub.race.decide_start(players[0], now_ms()))
    await asyncio.sleep(0)
    return hub, players


async def one_run(actions: int, deal: int, seed: int) -> float:
    """Microseconds of CPU per accepted action (the hub's work and the ack)."""
    hub, players = await race(deal)
    rng = random.Random(seed)
    spent = 0.0
    done = 0
    number = 0
    while done < actions:
        number += 1
        player_id = players[number % PLAYERS]
        player = hub.race.players[player_id]
        if player.done:
            if all(hub.race.players[other].done for other in players):
                hub, players = await race(deal + number)  # a new race, as the suite's
            continue
        game = player.game
        legal = game.legal_moves()
        action: Any
        if game.can_undo and (not legal or rng.random() < 0.1):
            action = p.Undo(action_id=f"a{number}")
        elif legal:
            move = rng.choice(legal)
            action = p.MoveAction(f"a{number}", move.src, move.dst, move.count)
        else:
            continue
        start = time.process_time()
        await hub.submit(
            lambda current=hub.race, player_id=player_id, action=action: current.decide_action(
                player_id, action, now_ms()
            ),
            player_id,
        )
        answer = hub.race.players[player_id].applied[action.action_id]
        codec.encode(answer.ack(action.action_id, None))
        spent += time.process_time() - start
        done += 1
        if done % PLAYERS == 0:
            await asyncio.sleep(0)  # the broker's copies come back, as between frames
    return spent / actions * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--actions", type=int, default=20_000, help="actions per repetition")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    # The same deal and moves every time: the repetitions differ only by the machine.
    runs = [asyncio.run(one_run(args.actions, 1000, 1)) for _ in range(args.reps)]
    print(f"race work per accepted action: {statistics.median(runs):.1f} us (median)")
    print("  runs: " + ", ".join(f"{run:.1f}" for run in runs))


if __name__ == "__main__":
    main()
