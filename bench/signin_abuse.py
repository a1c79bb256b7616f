"""Sign-in abuse against a real server: guesses sent at once, a flood, memory.

    .venv/bin/python bench/signin_abuse.py [--only guesses,names,burst,rss] [--burst 400]

Each scenario starts its own ``boulanger serve`` (memory store, the
server's real argon2id cost: 3 passes over 64 MiB) from the measured tree
(``BOULANGER_BENCH_TREE``, see bench/common.py) and sends its requests from
loopback addresses (``127.0.0.x``: one address, or one per client where the
scenario says so). What the attacker got is read from the answers: a 401
``bad_credentials`` is a password that was checked (argon2 ran), a 429
(``too_many_attempts`` or ``try_again``) was refused before any password work.

- ``guesses``: 60 wrong passwords for one account's name, sent at once from
  one address (limit: 10 failures per name): how many were checked.
- ``names``: 40 made-up names, one wrong password each, sent at once from one
  address (limit: 30 failures per address): how many were checked.
- ``burst``: a racer, in a process of its own, moves and undoes every 10 ms
  while 400 sign-in attempts (wrong passwords for made-up names) are sent at
  once, first from one address, then from 200 addresses (two each): the
  racer's ack p50 and p99 before the burst and during it, the answers, and
  the server's CPU time in the 2 s after the last answer (hashing for
  clients gone).
- ``rss``: 12 accounts sign in at once with their right passwords, from 12
  addresses: the server's resident memory before and at its peak (sampled
  every 5 ms), and the answers.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import multiprocessing as mp
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import percentile, use_tests, use_tree
from bench.procs import cpu_seconds, rss_kb

TREE = use_tree()
use_tests()

from support.racer import Racer, create_race  # noqa: E402
from support.servers import ServerProcess  # noqa: E402

SCENARIOS = ("guesses", "names", "burst", "rss")
PASSWORD = "correct horse battery"


def start_server(**env: str) -> ServerProcess:
    proc = ServerProcess(
        "memory://",
        env={
            "PYTHONPATH": str(TREE / "server"),
            "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "100000",
            **env,
        },
    )
    proc.start()
    return proc


def client(server: ServerProcess, address: str = "127.0.0.1") -> httpx.AsyncClient:
    """An HTTP client whose requests come from ``address`` (any 127.0.0.x is loopback)."""
    return httpx.AsyncClient(
        base_url=server.base,
        headers={"origin": server.base},
        transport=httpx.AsyncHTTPTransport(local_address=address),
        timeout=900,
        limits=httpx.Limits(max_connections=1000, max_keepalive_connections=1000),
    )


def address(i: int) -> str:
    return f"127.0.{2 + i // 250}.{1 + i % 250}"


async def sign_up(server: ServerProcess, name: str, at: str) -> None:
    async with client(server, at) as http:
        answer = await http.post("/api/accounts", json={"name": name, "password": PASSWORD})
        assert answer.status_code == 201, answer.text


def answer_of(response: httpx.Response | BaseException) -> str:
    if isinstance(response, BaseException):
        return type(response).__name__
    try:
        code = response.json()["error"]["code"]
    except Exception:
        code = "ok"
    return f"{response.status_code} {code}"


def tally(answers: list[str]) -> str:
    return ", ".join(f"{n} x {a}" for a, n in sorted(collections.Counter(answers).items()))


def checked(answers: list[str]) -> int:
    return sum(1 for a in answers if a.startswith("401"))


async def at_once(requests: list[tuple[httpx.AsyncClient, str, str]]) -> list[str]:
    """Sign-ins (client, name, password) sent together: their answers."""
    found = await asyncio.gather(
        *(
            http.post("/api/session", json={"name": name, "password": password})
            for http, name, password in requests
        ),
        return_exceptions=True,
    )
    return [answer_of(f) for f in found]


async def guesses() -> dict[str, Any]:
    server = start_server()
    try:
        await sign_up(server, "Victim", "127.0.1.1")
        async with client(server) as http:
            answers = await at_once([(http, "Victim", f"wrong {i:04}") for i in range(60)])
        return {"checked": f"{checked(answers)} of 60", "answers": tally(answers)}
    finally:
        server.stop()


async def names() -> dict[str, Any]:
    server = start_server()
    try:
        async with client(server) as http:
            answers = await at_once(
                [(http, f"nobody{secrets.token_hex(4)}", "wrong password") for _ in range(40)]
            )
        return {"checked": f"{checked(answers)} of 40", "answers": tally(answers)}
    finally:
        server.stop()


def racer_process(ws_base: str, base: str, ready: Any, stop: Any, out: Any) -> None:
    """In a process of its own (so that the bench's own HTTP work never delays the
    acks it measures): a racer acting every 10 ms (a move, then an undo) until
    ``stop``; sends back each answer as (wall-clock time, latency ms, kind), and a
    failure, if any."""

    async def run() -> tuple[list[tuple[float, float, str]], str | None]:
        created = await create_race(base, code="BK1-C4-AAAAAAB")
        racer = await Racer(ws_base, created["race_id"]).connect()
        await racer.join("Ann", host_key=created["host_key"])
        await racer.start()
        ready.set()
        samples: list[tuple[float, float, str]] = []
        failure = None
        i = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                if i % 2 == 0:
                    answer = await racer.move("col1", "cell1")
                else:
                    answer = await racer.act("undo")
            except Exception as error:  # no answer within 15 s, or the connection closed
                failure = f"{type(error).__name__} at {time.time():.1f} after {len(samples)} acks"
                break
            kind = f"{answer['type']} {answer.get('code', '')}".strip()
            samples.append((time.time(), (time.perf_counter() - started) * 1000, kind))
            i += 1
            await asyncio.sleep(0.01)
        await racer.close()
        return samples, failure

    out.put(asyncio.run(run()))


def figures(latencies: list[float]) -> str:
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    if p50 is None or p99 is None:
        return "no acks"
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms ({len(latencies)})"


async def burst(count: int) -> dict[str, Any]:
    server = start_server(
        BOULANGER_COUNTDOWN_MS="100",
        BOULANGER_MESSAGES_PER_SECOND="100000",
        BOULANGER_MESSAGE_BURST="100000",
    )
    assert server.proc is not None
    pid = server.proc.pid
    results: dict[str, Any] = {}
    spawn = mp.get_context("spawn")
    ready, stop, out = spawn.Event(), spawn.Event(), spawn.Queue()
    racer = spawn.Process(
        target=racer_process, args=(server.ws_base, server.base, ready, stop, out), daemon=True
    )
    phases: dict[str, tuple[float, float]] = {}
    try:
        racer.start()
        await asyncio.to_thread(ready.wait, 60)
        quiet = time.time()
        await asyncio.sleep(3)
        phases["racer's acks, quiet"] = (quiet, time.time())
        for label, spread in (("one address", 1), ("200 addresses", 200)):
            clients = [
                client(server, address(i) if spread > 1 else "127.0.0.1") for i in range(spread)
            ]
            try:
                started, wall = time.perf_counter(), time.time()
                answers = await at_once(
                    [
                        (clients[i % spread], f"nobody{secrets.token_hex(4)}", "wrong password")
                        for i in range(count)
                    ]
                )
                took = time.perf_counter() - started
                phases[f"burst of {count}, {label}"] = (wall, time.time())
                cpu = cpu_seconds(pid)
                await asyncio.sleep(2)
                after = cpu_seconds(pid) - cpu
            finally:
                for http in clients:
                    await http.aclose()
            results[f"burst of {count}, {label}"] = {
                "answers": tally(answers),
                "checked": checked(answers),
                "burst answered in": f"{took:.1f} s",
                "server CPU in the 2 s after the last answer": f"{after:.2f} s",
            }
            await asyncio.sleep(2)
        stop.set()
        samples, failure = await asyncio.to_thread(out.get, True, 60)
        await asyncio.to_thread(racer.join, 10)
    finally:
        if racer.is_alive():
            racer.kill()
        server.stop()
    for phase, (begin, end) in phases.items():
        during = [ms for at, ms, _ in samples if begin <= at - ms / 1000 and at <= end]
        text = figures(during)
        if failure is not None and phase != "racer's acks, quiet":
            text += f"; the racer failed: {failure}"
        if phase in results:
            results[phase] = {"racer's acks during the burst": text, **results[phase]}
        else:
            results[phase] = text
    results["racer's answers"] = dict(collections.Counter(kind for _, _, kind in samples))
    return results


async def rss() -> dict[str, Any]:
    server = start_server()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        names = [f"member{i:02}" for i in range(12)]
        for i, name in enumerate(names):
            await sign_up(server, name, address(i))
        await asyncio.sleep(1)
        before = rss_kb(pid)
        peak = before
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_kb(pid))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        clients = [client(server, address(i)) for i in range(12)]
        try:
            answers = await asyncio.gather(
                *(
                    http.post("/api/session", json={"name": name, "password": PASSWORD})
                    for http, name in zip(clients, names, strict=True)
                ),
                return_exceptions=True,
            )
        finally:
            done.set()
            sampler.join()
            for http in clients:
                await http.aclose()
        return {
            "RSS": f"{before / 1024:.0f} MB before, {peak / 1024:.0f} MB at most",
            "answers": tally([answer_of(a) for a in answers]),
        }
    finally:
        server.stop()


def show(results: dict[str, Any], indent: str = "  ") -> None:
    for key, value in results.items():
        if isinstance(value, dict):
            print(f"{indent}{key}:")
            show(value, indent + "  ")
        else:
            print(f"{indent}{key}: {value}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--burst", type=int, default=400)
    args = parser.parse_args()
    print(f"tree: {TREE}")
    for name in args.only.split(","):
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r} (one of {', '.join(SCENARIOS)})")
        print(f"{name}:", flush=True)
        if name == "burst":
            show(await burst(args.burst))
        else:
            show(await {"guesses": guesses, "names": names, "rss": rss}[name]())


if __name__ == "__main__":
    asyncio.run(main())
