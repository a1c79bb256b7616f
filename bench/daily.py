"""Daily challenge at scale: a day with 100,000 entries in a real Redis.

    .venv/bin/python bench/daily.py [--entries 100000] [--samples 500] [--load-seconds 5]

Starts a throwaway redis-server on a free loopback port (``RedisProcess`` of
``tests/support/servers.py``: AOF on, ``appendfsync always`` as the tests run
it, or ``--appendfsync everysec``), fills one day's leaderboard with
``--entries`` results through the daily store (each with a real game record:
the solver's win of today's deal), prints Redis's memory use, then the median
(and 99th percentile) time, one request at a time from one client, to

- record a result (the Lua script: first write wins, rank, publish),
- read the top page (20 entries) and a page deep in the list (offset 90%),
- look up one player's rank,

the same for the in-memory store, and finally, with a real ``boulanger
serve`` process on that Redis and one live leaderboard watcher connected to
it, the entries per second recorded (by this process, 32 at a time) against
the messages per second the watcher receives: the server coalesces them to
at most two a second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from websockets.asyncio.client import connect

from boulanger.broker import DailyStore, Store, open_store
from boulanger.race.daily import DailyEntry, game_code, today
from boulanger.solver import solve
from support.servers import RedisProcess, ServerProcess

PAGE = 20
DAY = today(int(time.time() * 1000))
RECORD = {"code": str(game_code(DAY)), "actions": solve(str(game_code(DAY)), budget=60).actions}


class BenchRedis(RedisProcess):
    """The tests' throwaway redis-server, with a choice of ``appendfsync``."""

    def __init__(self, appendfsync: str) -> None:
        super().__init__()
        self.appendfsync = appendfsync

    def start(self) -> None:
        super().start()
        if self.appendfsync != "always":
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                command = f"CONFIG SET appendfsync {self.appendfsync}\r\n".encode()
                sock.sendall(command)
                assert sock.recv(16).startswith(b"+OK")


def random_entry(rng: random.Random, i: int) -> DailyEntry:
    if rng.random() < 0.6:
        return DailyEntry(f"p{i}", "won", rng.randrange(60_000, 1_800_000), rng.randrange(80, 300),
                          rng.randrange(400, 700), 52)  # fmt: skip
    result = rng.choice(["resigned", "time_limit"])
    return DailyEntry(f"p{i}", result, rng.randrange(10_000, 1_800_000), rng.randrange(0, 400),
                      rng.randrange(0, 500), rng.randrange(0, 52))  # fmt: skip


async def fill(store: DailyStore, day: date, count: int, rng: random.Random) -> float:
    started = time.perf_counter()
    batch = 64
    for first in range(0, count, batch):
        await asyncio.gather(
            *(
                store.record(day, f"fill-{i}", random_entry(rng, i), RECORD)
                for i in range(first, min(first + batch, count))
            )
        )
    return time.perf_counter() - started


async def timed(samples: int, call: Callable[[int], Awaitable[object]]) -> tuple[float, float]:
    """Median and 99th percentile, in milliseconds, of ``samples`` calls one at a time."""
    times = []
    for i in range(samples):
        started = time.perf_counter()
        await call(i)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


async def measure(name: str, store: DailyStore, day: date, args: argparse.Namespace) -> None:
    rng = random.Random(1)
    redis = getattr(store, "redis", None)
    before = 0 if redis is None else (await redis.info("memory"))["used_memory"]
    seconds = await fill(store, day, args.entries, rng)
    total = (await store.page(day, 0, 0)).total
    rate = total / seconds
    print(f"{name}: filled {total:,} entries in {seconds:.1f} s ({rate:,.0f}/s, 64 at a time)")
    if redis is not None:
        used = (await redis.info("memory"))["used_memory"] - before
        print(
            f"  redis memory for the day: {used / 2**20:,.0f} MiB ({used / total:,.0f} bytes an entry)"
        )
    deep = int(total * 0.9)
    rows = [
        ("record a result", lambda i: store.record(day, f"new-{i}", random_entry(rng, i), RECORD)),
        ("read the top page", lambda i: store.page(day, 0, PAGE)),
        (f"read a deep page (offset {deep:,})", lambda i: store.page(day, deep, PAGE)),
        ("look up a player's rank", lambda i: store.player(day, f"fill-{rng.randrange(total)}")),
    ]
    for label, call in rows:
        median, p99 = await timed(args.samples, call)
        print(f"  {label:<36} median {median:7.3f} ms   p99 {p99:7.3f} ms")


async def watch_under_load(redis_url: str, day: date, seconds: float) -> None:
    server = ServerProcess(redis_url)
    server.start()
    opened = open_store(redis_url, retention_days=90)
    await opened.start()
    try:
        store = opened.daily
        received: list[float] = []
        async with connect(f"{server.ws_base}/ws/daily/{day}") as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "daily_leaderboard"

            async def read() -> None:
                async for frame in ws:
                    if json.loads(frame)["type"] == "daily_leaderboard":
                        received.append(time.perf_counter())

            reader = asyncio.create_task(read())
            rng = random.Random(2)
            recorded = 0
            started = time.perf_counter()
            while time.perf_counter() - started < seconds:
                await asyncio.gather(
                    *(
                        store.record(day, f"load-{recorded + i}", random_entry(rng, i), RECORD)
                        for i in range(32)
                    )
                )
                recorded += 32
            elapsed = time.perf_counter() - started
            await asyncio.sleep(1.0)  # the last coalesced message
            reader.cancel()
        during = [t for t in received if t <= started + elapsed]
        print(
            f"live watcher (1 server process, entries recorded by another process): "
            f"{recorded / elapsed:,.0f} entries/s for {elapsed:.1f} s -> "
            f"{len(during) / elapsed:.2f} messages/s received ({len(received)} messages in all)"
        )
    finally:
        await opened.close()
        server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--load-seconds", type=float, default=5.0)
    parser.add_argument("--appendfsync", choices=["always", "everysec", "no"], default="always")
    args = parser.parse_args()
    day = DAY

    redis = BenchRedis(args.appendfsync)
    redis.start()
    try:
        shared: Store = open_store(redis.url, retention_days=90)
        await shared.start()
        print(
            f"redis-server on {redis.url} (AOF on, appendfsync {args.appendfsync},"
            f" data in {redis.dir}); game records of {len(RECORD['actions'])} actions"
        )
        await measure("redis", shared.daily, day, args)
        await shared.close()

        memory = open_store("memory://", retention_days=90)
        await measure("memory", memory.daily, day, args)

        await watch_under_load(redis.url, day, args.load_seconds)
    finally:
        redis.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
