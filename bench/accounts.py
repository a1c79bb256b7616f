"""Accounts' costs: a password sign-in (argon2id) and the session lookup of a WebSocket join.

    .venv/bin/python bench/accounts.py [--hashes 15] [--lookups 2000] [--joins 60]

Prints, side by side in one run:

- argon2id: the median time to hash and to verify one password with the
  server's parameters (``Settings``: 3 passes, 64 MiB, 1 lane) and with two
  other sets for comparison (RFC 9106's second recommendation, 3 passes over
  64 MiB in 4 lanes; and 1 pass over 2 GiB would be the first: not run, it
  needs 2 GiB per sign-in). A sign-in with a password costs one verify.
- the session lookup a WebSocket join makes when it carries the session
  cookie (the session's key, then the account's: two reads) on each broker's
  store: memory, SQLite (a file in a temporary folder) and a real Redis
  (a throwaway redis-server on a free loopback port), median and 99th
  percentile, one lookup at a time;
- end to end, a real ``boulanger serve`` on that Redis: the median time from
  opening a race WebSocket to its ``welcome``, as a guest and signed in.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import httpx
from argon2 import PasswordHasher

from boulanger.broker import open_store
from boulanger.broker.accounts import AccountStore
from boulanger.race.ids import secret_hash
from boulanger.web.settings import Settings
from support.racer import Racer, create_race
from support.servers import RedisProcess, ServerProcess


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1000:8.3f} ms   p99 {p99 * 1000:8.3f} ms"


def argon2_figures(rounds: int) -> None:
    s = Settings()
    sets = [
        (
            "server (t=3, 64 MiB, p=1)",
            s.argon2_time_cost,
            s.argon2_memory_kib,
            s.argon2_parallelism,
        ),
        ("RFC 9106 #2 (t=3, 64 MiB, p=4)", 3, 64 * 1024, 4),
        ("lighter (t=2, 19 MiB, p=1)", 2, 19 * 1024, 1),
    ]
    print("argon2id, one password at a time:")
    for label, t, m, p in sets:
        hasher = PasswordHasher(time_cost=t, memory_cost=m, parallelism=p)
        stored = hasher.hash("correct horse battery")
        hashes, verifies = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            hasher.hash("correct horse battery")
            hashes.append(time.perf_counter() - start)
            start = time.perf_counter()
            hasher.verify(stored, "correct horse battery")
            verifies.append(time.perf_counter() - start)
        print(f"  {label:32} hash {_ms(hashes)}   verify (a sign-in) {_ms(verifies)}")


async def lookup_figures(redis_url: str, lookups: int) -> None:
    print("session lookup of a WebSocket join (session key, then account key):")
    with tempfile.TemporaryDirectory() as folder:
        for label, url in (
            ("memory", "memory://"),
            ("sqlite", f"sqlite:///{Path(folder) / 'bench.db'}"),
            ("redis", redis_url),
        ):
            opened = open_store(url)
            await opened.start()
            try:
                store = AccountStore(opened.kv)
                account = {"id": secrets.token_hex(12), "name": "Ann", "passkeys": []}
                await store.save(account)
                session = secrets.token_urlsafe(32)
                await store.open_session(secret_hash(session), account["id"], 3600)
                samples = []
                for _ in range(lookups):
                    start = time.perf_counter()
                    found = await store.session(secret_hash(session))
                    assert found is not None and await store.account(found) is not None
                    samples.append(time.perf_counter() - start)
                print(f"  {label:8} {_ms(samples)}")
            finally:
                await opened.close()


async def join_figures(server: ServerProcess, joins: int) -> None:
    async with httpx.AsyncClient(base_url=server.base, headers={"origin": server.base}) as http:
        answer = await http.post(
            "/api/accounts", json={"name": "bench" + secrets.token_hex(3), "password": "x" * 12}
        )
        assert answer.status_code == 201, answer.text
        cookie = http.cookies["bk_session"]
    headers = {"origin": server.base, "cookie": f"bk_session={cookie}"}
    times: dict[str, list[float]] = {"guest": [], "signed in": []}
    for i in range(joins):
        for label, extra in (("guest", None), ("signed in", headers)):
            race = await create_race(server.base)
            start = time.perf_counter()
            racer = await Racer(server.ws_base, race["race_id"], extra).connect()
            welcome = await racer.join(f"P{i}", host_key=race["host_key"])
            times[label].append(time.perf_counter() - start)
            assert welcome["type"] == "welcome"
            await racer.close()
    print("race WebSocket, open to welcome (a real server on Redis):")
    for label, samples in times.items():
        print(f"  {label:10} {_ms(samples)}")
    extra_ms = (statistics.median(times["signed in"]) - statistics.median(times["guest"])) * 1000
    print(f"  signed in costs {extra_ms:+.3f} ms more per join (median against median)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hashes", type=int, default=15)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--joins", type=int, default=60)
    args = parser.parse_args()
    argon2_figures(args.hashes)
    redis = RedisProcess()
    redis.start()
    try:
        await lookup_figures(redis.url, args.lookups)
        env = {"BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "100000"}
        server = ServerProcess(redis.url, env=env)
        server.start()
        try:
            await join_figures(server, args.joins)
        finally:
            server.stop()
    finally:
        redis.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
