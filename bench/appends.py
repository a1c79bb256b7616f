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
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "tests"))

from boulanger.broker import Broker, Condition  # noqa: E402
from boulanger.broker.redis import RedisBroker  # noqa: E402
from compare import Timing, appended, interleaved, old_redis_broker, print_medians  # noqa: E402
from support.servers import RedisProcess  # noqa: E402


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
    events = [appended(broker, make_event(n, size)) for n in range(997)]
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
        rev, old_class = old_redis_broker(
            args.old,
            ["-S", "class _Appender", "--", "server/boulanger/broker/redis.py"],
            "_append_loop",
            "the redis-py pipeline version",
        )
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

        async def run(name: str, number: int) -> Timing:
            return await one_run(
                variants[name], f"{name}{number}", args.appends, args.races, args.workers, args.size
            )

        print_medians(await interleaved(chosen, args.runs, run), args.appends, "append")
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
