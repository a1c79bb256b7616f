"""The cost of the replica wait: appends on a Redis Cluster with and without ``WAIT 1``.

    .venv/bin/python bench/replica_wait.py [--appends 20000] [--races 60]
                                           [--workers 1,50,400] [--runs 3]

Starts a throwaway Redis Cluster (3 primaries, 3 replicas, AOF with
``appendfsync everysec``, as docker-compose.yml runs it) on free loopback
ports, and has ``W`` coroutines (for each ``W`` of ``--workers``) append
``--appends`` events of about 300 bytes to ``--races`` races spread over the
shards, each coroutine awaiting its append before the next (as a player's
actions do). For each, in interleaved runs, the broker without the wait
(``wait0``: acknowledged once on the primary) and with it (``wait1``:
``WAIT 1`` after each write of appends, see ``boulanger.broker.redis.appender``).
Printed per variant: medians over the runs of appends per second (wall),
latency of one append (p50 and p99, ms) and this process's CPU per append.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from appends import make_event  # noqa: E402
from boulanger.broker import Condition  # noqa: E402
from boulanger.broker.redis.cluster import RedisClusterBroker  # noqa: E402
from compare import appended  # noqa: E402
from support.servers import RedisCluster  # noqa: E402


async def one_run(
    url: str, wait: int, tag: str, appends: int, races: int, workers: int
) -> tuple[float, float, float, float]:
    """Appends per wall second, p50 and p99 latency (ms), CPU µs per append."""
    broker = RedisClusterBroker(url, replica_wait=wait)
    await broker.start()
    await asyncio.wait_for(broker.mapped.wait(), 10)
    race_ids = [f"wait-{tag}-{n}" for n in range(races)]
    events = [appended(broker, make_event(n, 300)) for n in range(997)]
    condition = Condition()
    try:
        for race_id in race_ids:  # connected, scripts loaded
            await broker.append(race_id, events[0], condition)
        left = [appends]
        latencies: list[float] = []

        async def worker(w: int) -> None:
            n = w
            while left[0] > 0:
                left[0] -= 1
                n += workers
                start = time.perf_counter()
                seq = await broker.append(race_ids[n % races], events[n % len(events)], condition)
                latencies.append(time.perf_counter() - start)
                assert seq > 0

        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(workers)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await broker.close()
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    return appends / wall, p50, p99, cpu / appends * 1e6


async def main_async(args: argparse.Namespace) -> None:
    load = Path("/proc/loadavg").read_text().split()[0]
    with RedisCluster(node_timeout_ms=5000) as cluster:
        print(
            f"{args.appends} appends of ~300 bytes to {args.races} races on a 3-primary, "
            f"3-replica cluster; medians of {args.runs} interleaved runs"
        )
        print(
            f"{'workers':>7} {'variant':<7} {'appends/s':>10} {'p50 ms':>7} {'p99 ms':>7} "
            f"{'µs CPU':>7}  {'x wait0 appends/s':>17}"
        )
        for workers in [int(w) for w in args.workers.split(",")]:
            count = args.appends if workers > 1 else min(args.appends, args.lone)
            results: dict[int, list[tuple[float, float, float, float]]] = {0: [], 1: []}
            for run in range(args.runs):
                for wait in (0, 1):
                    tag = f"{workers}-{wait}-{run}"
                    results[wait].append(
                        await one_run(cluster.url, wait, tag, count, args.races, workers)
                    )
            base = statistics.median(r[0] for r in results[0])
            for wait, runs in results.items():
                rate, p50, p99, cpu = (statistics.median(r[i] for r in runs) for i in range(4))
                print(
                    f"{workers:>7} {'wait' + str(wait):<7} {rate:>10,.0f} {p50:>7.2f} {p99:>7.2f} "
                    f"{cpu:>7.1f}  {rate / base:>17.2f}"
                )
    print(
        f"load average (1 min) before / after: {load} / {Path('/proc/loadavg').read_text().split()[0]}"
    )


def main() -> None:
    # SIGTERM as SystemExit: the cluster's nodes are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=20_000)
    parser.add_argument("--lone", type=int, default=2_000, help="appends with 1 worker")
    parser.add_argument("--races", type=int, default=60)
    parser.add_argument("--workers", default="1,50,400", help="concurrent appenders, each run")
    parser.add_argument("--runs", type=int, default=3)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
