"""Append cost: client-side CPU time the Redis broker spends per append.

    .venv/bin/python bench/appends.py [--appends 20000] [--races 50] [--workers 400]
                                      [--size 300] [--runs 5] [--old REV]

Starts a throwaway redis-server (no persistence) on a free loopback port and
has ``--workers`` coroutines issue ``--appends`` appends of events of about
``--size`` bytes to ``--races`` races, each coroutine awaiting its append
before the next (as the hub's per-race submit does). Measured: the CPU time
of this process (``time.process_time``) and the wall time, from the first
append to the last reply. Printed: medians of ``--runs`` interleaved runs,
as microseconds of CPU per append and appends per wall second, for

- ``old``: ``RedisBroker.append`` of ``--old`` (default: the parent of the
  commit that added ``_Appender``): a redis-py pipeline of ``EVALSHA`` per
  batch, loaded from git;
- ``new``: ``RedisBroker.append`` of the working tree: one raw connection,
  every append of a loop turn in one write.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "tests"))

from boulanger.broker.base import Broker, Condition  # noqa: E402
from boulanger.broker.redis import RedisBroker  # noqa: E402
from support.servers import RedisProcess  # noqa: E402


def old_broker_class(rev: str | None) -> tuple[str, Callable[[str], Broker]]:
    """``RedisBroker`` as of ``rev`` (default: before ``_Appender``), loaded from git."""
    if rev is None:
        added = subprocess.run(
            ["git", "log", "-S", "class _Appender", "--format=%H", "--",
             "server/boulanger/broker/redis.py"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        rev = f"{added[-1]}^" if added else "HEAD"
    source = subprocess.run(
        ["git", "show", f"{rev}:server/boulanger/broker/redis.py"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    if "_append_loop" not in source:
        sys.exit(f"{rev}:server/boulanger/broker/redis.py is not the redis-py pipeline version")
    name = "boulanger.broker._redis_old_appends"
    module = types.ModuleType(name)
    module.__package__ = "boulanger.broker"  # its relative imports resolve to today's base
    sys.modules[name] = module
    exec(compile(source, f"{rev}:server/boulanger/broker/redis.py", "exec"), module.__dict__)
    return rev, module.RedisBroker


def make_event(n: int, size: int) -> dict[str, object]:
    """An event much like a race's progress event, about ``size`` bytes as JSON."""
    event: dict[str, object] = {
        "kind": "progress",
        "player": f"p{n % 8}",
        "action": f"a{n}",
        "moves": n % 97,
        "pad": "",
    }
    event["pad"] = "x" * max(0, size - len(json.dumps(event, separators=(",", ":"))))
    return event


async def one_run(
    make: Callable[[], Broker], tag: str, appends: int, races: int, workers: int, size: int
) -> tuple[float, float]:
    """CPU seconds and wall seconds the broker takes for ``appends`` appends."""
    broker = make()
    await broker.start()
    race_ids = [f"bench-{tag}-{n}" for n in range(races)]
    events = [make_event(n, size) for n in range(997)]
    condition = Condition()
    try:
        for race_id in race_ids:  # connected, script loaded
            await broker.append(race_id, events[0], condition)
        left = [appends]
        seqs: list[int] = []

        async def worker(w: int) -> None:
            n = w
            while left[0] > 0:
                left[0] -= 1
                n += workers
                seqs.append(
                    await broker.append(race_ids[n % races], events[n % len(events)], condition)
                )

        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(workers)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        assert len(seqs) == appends and all(seqs), "an append failed"
        assert sorted(seqs)[-1] <= appends // races + races + 1
    finally:
        await broker.close()
    return cpu, wall


async def main_async(args: argparse.Namespace) -> None:
    redis_proc = RedisProcess("--appendonly", "no")  # the client's cost is what is measured
    redis_proc.start()
    try:
        rev, old_class = old_broker_class(args.old)
        url = redis_proc.url
        variants: dict[str, Callable[[], Broker]] = {
            "old": lambda: old_class(url),
            "new": lambda: RedisBroker(url),
        }
        chosen = args.variants.split(",")
        print(
            f"{args.appends} appends of ~{args.size} bytes to {args.races} races by "
            f"{args.workers} coroutines, median of {args.runs} runs; old = {rev}"
        )
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in chosen}
        for run in range(args.runs):  # interleaved, so drifts in machine load hit all alike
            for name in chosen:
                results[name].append(
                    await one_run(
                        variants[name],
                        f"{name}{run}",
                        args.appends,
                        args.races,
                        args.workers,
                        args.size,
                    )
                )
        print(f"{'variant':<8} {'µs/append (CPU)':>16} {'appends/s wall':>15}  runs µs/append")
        for name in chosen:
            cpus = [cpu for cpu, _ in results[name]]
            walls = [wall for _, wall in results[name]]
            cpu = statistics.median(cpus)
            wall = statistics.median(walls)
            each = " ".join(f"{c / args.appends * 1e6:.1f}" for c in cpus)
            print(
                f"{name:<8} {cpu / args.appends * 1e6:>16.1f} {args.appends / wall:>15,.0f}  {each}"
            )
    finally:
        redis_proc.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=20_000)
    parser.add_argument("--races", type=int, default=50)
    parser.add_argument("--workers", type=int, default=400)
    parser.add_argument("--size", type=int, default=300, help="bytes per event")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--variants", default="old,new")
    parser.add_argument("--old", help="git revision of the old broker (default: before _Appender)")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
