"""The SQLite broker alone: the group commit at work, and the file's size per 1,000 races.

    .venv/bin/python bench/sqlite.py groups [--writers 1,8,64,512] [--seconds 4] [--runs 3]
    .venv/bin/python bench/sqlite.py size [--races 1000] [--concurrency 64]

``groups``: ``--writers`` coroutines each append to a race of its own
(as players do: a player condition), awaiting each append before the next,
flat out, on a fresh file in a temporary folder, with ``synchronous=FULL``
and ``NORMAL``. Printed per configuration: appends per second, appends per
transaction (the broker's counters), and the append's latency (p50, p99),
medians of ``--runs`` interleaved runs. One writer gets one transaction per
append: that row is what the disk gives without grouping.

``size``: ``--races`` races of 8 players as the server writes them: the race
created with its metadata, 8 joins, the start, then every player plays the
solver's solution of the race's deal (the first 300 deals of the 4-cell
catalog, solved once and cached, as by bench/load.py) with a legal detour
taken back by ``undo`` on 4 % of moves, decided and applied by
``boulanger.race`` (each event appended with the condition the hub uses),
and the race's end. ``--concurrency`` races are written at once. Printed:
events, the mean event's JSON size, the file's size after a full checkpoint
(bytes per race, per 1,000 races, per event), then the same once every race
is past its time to live and aged out.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO))

from bench.common import percentile  # noqa: E402
from boulanger import codec  # noqa: E402
from boulanger.broker import Condition  # noqa: E402
from boulanger.broker.sqlite import SqliteBroker  # noqa: E402
from boulanger.engine import Move  # noqa: E402
from boulanger.race import protocol as p  # noqa: E402
from boulanger.race.events import Event  # noqa: E402
from boulanger.race.race import Duplicate, Race, RaceMeta  # noqa: E402

RACE_SIZE = 8
DETOUR = 0.04


# -- groups -----------------------------------------------------------------------


async def groups_run(directory: Path, synchronous: str, writers: int, seconds: float) -> dict:
    path = directory / f"groups-{synchronous}-{writers}-{time.monotonic_ns()}.db"
    broker = SqliteBroker(f"sqlite:///{path}?synchronous={synchronous}")
    await broker.start()
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    try:
        await broker.age()  # the start's upkeep, out of the way
        before = broker.stats.transactions, broker.stats.appends

        async def write(n: int) -> None:
            race_id, events = f"race-{n}", 0
            perf = time.perf_counter
            while perf() < stop:
                started = perf()
                condition = Condition(player_id="p", player_events=events)
                assert await broker.append(race_id, {"kind": "action", "n": events}, condition)
                latencies.append((perf() - started) * 1000)
                events += 1

        started = time.perf_counter()
        await asyncio.gather(*(write(n) for n in range(writers)))
        wall = time.perf_counter() - started
        transactions = broker.stats.transactions - before[0]
        appends = broker.stats.appends - before[1]
    finally:
        await broker.close()
    return {
        "appends_per_s": appends / wall,
        "per_transaction": appends / max(1, transactions),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
    }


def groups(args: argparse.Namespace) -> None:
    counts = [int(n) for n in args.writers.split(",")]
    configs = [(sync, n) for sync in ("full", "normal") for n in counts]
    runs: dict[tuple[str, int], list[dict]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="boulanger-bench-sqlite-") as folder:
        for _ in range(args.runs):
            for config in configs:  # interleaved: drifts in the machine's load hit all alike
                runs[config].append(asyncio.run(groups_run(Path(folder), *config, args.seconds)))
    print(f"medians of {args.runs} runs of {args.seconds:g} s, flat out")
    print(
        "| synchronous | writers | appends/s | appends per transaction | ack p50 ms | ack p99 ms |"
    )
    print("|---|---|---|---|---|---|")
    for (sync, n), found in runs.items():

        def median(key: str, found: list[dict] = found) -> float:
            return statistics.median(r[key] for r in found)

        print(
            f"| {sync} | {n} | {median('appends_per_s'):,.0f} | {median('per_transaction'):.1f}"
            f" | {median('p50'):.2f} | {median('p99'):.2f} |"
        )


# -- size -------------------------------------------------------------------------


def solved_deals() -> list[tuple[str, list[dict[str, Any]]]]:
    from bench.bots import solutions

    return solutions()


async def write_race(
    broker: SqliteBroker, n: int, code: str, solution: list[dict[str, Any]], sizes: list[int]
) -> None:
    """One race of 8, event by event, as the hub decides, appends and applies them."""
    rng = random.Random(n)
    race_id = f"bench{n:06d}"
    meta = RaceMeta(race_id, code, int(time.time() * 1000), "h" * 64, par=len(solution))
    await broker.create_race(meta)
    race = Race(meta)
    clock = meta.created_at

    async def add(event: Event) -> None:
        text = codec.encode_event(event)
        seq = await broker.append(race_id, text, race.condition(event))
        assert seq == race.seq + 1, (race_id, seq, race.seq)
        sizes.append(len(text))
        race.apply(seq, event)

    players = []
    for i in range(RACE_SIZE):
        join = p.Join(name=f"player {i}", host_key=None)
        joined = race.decide_join(join, clock, f"p{rng.getrandbits(36):09x}", f"token{n}-{i}")
        joined = dataclasses.replace(joined, host=i == 0)
        await add(joined)
        players.append(joined.player_id)
    await add(race.decide_start(players[0], clock))
    clock = race.start_at or clock
    moves = [Move.from_dict(m) for m in solution]
    done = dict.fromkeys(players, 0)
    detoured: dict[str, bool] = dict.fromkeys(players, False)
    actions = 0
    while any(done[pl] < len(moves) for pl in players):
        for pl in players:
            if done[pl] >= len(moves):
                continue
            clock += rng.randrange(250, 750) // RACE_SIZE
            actions += 1
            game = race.players[pl].game
            if detoured[pl]:
                message: p.Message = p.Undo(action_id=f"a{actions}")
                detoured[pl] = False
            else:
                move = moves[done[pl]]
                options = [m for m in game.legal_moves() if m != move]
                if options and rng.random() < DETOUR:
                    move = rng.choice(options)
                    detoured[pl] = True
                else:
                    done[pl] += 1
                message = p.MoveAction(
                    action_id=f"a{actions}", src=move.src, dst=move.dst, count=move.count
                )
            event = race.decide_action(pl, message, clock)  # type: ignore[arg-type]
            assert not isinstance(event, Duplicate)
            await add(event)
    over = race.decide_over(clock)
    assert over is not None
    await add(over)


async def size_run(args: argparse.Namespace, folder: Path) -> None:
    deals = solved_deals()
    path = folder / "size.db"
    now = [time.time()]
    broker = SqliteBroker(f"sqlite:///{path}", clock=lambda: now[0])
    await broker.start()
    sizes: list[int] = []
    try:
        started = time.perf_counter()
        queue = list(range(args.races))

        async def worker() -> None:
            while queue:
                n = queue.pop()
                code, solution = deals[n % len(deals)]
                await write_race(broker, n, code, solution, sizes)

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        wall = time.perf_counter() - started
        await broker.checkpoint()
        full = path.stat().st_size
        now[0] += broker.race_ttl_s + 1
        aged = time.perf_counter()
        await broker.age()
        aged_s = time.perf_counter() - aged
        await broker.checkpoint()
        emptied = path.stat().st_size
        stats = broker.stats
    finally:
        await broker.close()
    events = len(sizes)
    print(
        f"{args.races} races of {RACE_SIZE}, {events:,} events ({events / args.races:.0f} a race),"
        f" mean event {statistics.mean(sizes):.0f} bytes of JSON; written in {wall:.1f} s"
        f" ({events / wall:,.0f} appends/s, {stats.appends / max(1, stats.transactions):.1f}"
        " appends per transaction)"
    )
    print(
        f"file: {full:,} bytes = {full / args.races * 1000 / 2**20:,.1f} MiB per 1,000 races,"
        f" {full / events:.0f} bytes per event"
    )
    print(f"after every race aged out ({aged_s:.1f} s of upkeep): {emptied:,} bytes")


def size(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="boulanger-bench-sqlite-") as folder:
        asyncio.run(size_run(args, Path(folder)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_groups = sub.add_parser("groups", help="appends per transaction and latency, flat out")
    p_groups.add_argument("--writers", default="1,8,64,512")
    p_groups.add_argument("--seconds", type=float, default=4.0)
    p_groups.add_argument("--runs", type=int, default=3)
    p_size = sub.add_parser("size", help="the file's size per 1,000 races")
    p_size.add_argument("--races", type=int, default=1000)
    p_size.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    {"groups": groups, "size": size}[args.command](args)


if __name__ == "__main__":
    main()
