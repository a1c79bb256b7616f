"""Attacks on the edges of a server, measured: run on two snapshots to compare.

Each scenario starts real processes on loopback (servers of the snapshot
given by ``--tree``, a throwaway redis-server, and nginx with the
snapshot's deploy/nginx.conf), attacks them a bounded number of times, and
prints what the attacker got:

- ``forged``: the docker-compose topology (nginx, two replicas, one Redis,
  the replicas trusting what the snapshot's Dockerfile or compose file
  says). 30 race creations and 80 connections from one client forging
  X-Forwarded-For and X-Real-IP (limits: 20 a minute, 64 open).
- ``ipv6``: 3 addresses of one /64 each creating 30 races (limit 20).
- ``body``: a 96 MB body with Content-Length, then 48 MB chunked: the
  server's resident memory before, at most during, and after; the ack
  latency of a player racing meanwhile.
- ``resync``: 60 spectators sending ``resync`` within their message budget
  for 8 s, from 0 and from 32 events back: messages and bytes they receive.
- ``rematch``: the host of a finished race sends 30 ``rematch``: races opened.
- ``utf8``: 200 text frames with invalid UTF-8: tracebacks and lines logged.
- ``counters``: memory the per-address counters keep for 20,000 addresses,
  and after their minute (in a child process of the snapshot).

    git archive <commit> server client deploy Dockerfile docker-compose.yml | tar -x -C DIR
    .venv/bin/python bench/hardening.py --tree DIR [--only forged,body]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import yaml
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.proxy import NginxProcess  # noqa: E402
from support.racer import Racer  # noqa: E402
from support.servers import RedisProcess, ServerProcess  # noqa: E402

CODE = "BK1-C4-AAAAAAB"
JSON = {"Content-Type": "application/json"}
SCENARIOS = ("forged", "ipv6", "body", "resync", "rematch", "utf8", "counters")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Tree:
    """A snapshot: its server code and its deployment files."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def env(self, **extra: str) -> dict[str, str]:
        return {"PYTHONPATH": str(self.path / "server"), **extra}

    def trusted_proxies(self) -> str:
        """What the snapshot's replicas trust, with the proxy at 127.0.0.1."""
        cmd = (self.path / "Dockerfile").read_text().split("CMD")[-1]
        found = re.search(r'"--forwarded-allow-ips",\s*"([^"]*)"', cmd)
        if found:
            return found.group(1)
        compose = yaml.safe_load((self.path / "docker-compose.yml").read_text())
        value = compose["services"]["app1"]["environment"].get("BOULANGER_FORWARDED_ALLOW_IPS")
        return "*" if value == "*" else "127.0.0.1"  # the proxy's address here


def server(tree: Tree, broker: str = "memory://", **env: str) -> ServerProcess:
    proc = ServerProcess(broker, env=tree.env(**env))
    proc.start()
    return proc


async def post_race(http: httpx.AsyncClient, headers: dict[str, str]) -> int:
    return (await http.post("/api/races", json={"code": CODE}, headers=headers)).status_code


# -- scenarios -------------------------------------------------------------------------


async def forged(tree: Tree) -> dict[str, Any]:
    trust = tree.trusted_proxies()
    with RedisProcess() as redis:
        env = {"BOULANGER_FORWARDED_ALLOW_IPS": trust}
        apps = [server(tree, redis.url, **env) for _ in range(2)]
        # The snapshot's own trust setting on the command line, as its Dockerfile had it.
        proxy = NginxProcess([a.port for a in apps], conf=tree.path / "deploy" / "nginx.conf")
        proxy.start()
        try:
            transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
            async with httpx.AsyncClient(base_url=proxy.base, transport=transport) as http:
                codes = [
                    await post_race(
                        http,
                        {"X-Forwarded-For": f"10.9.0.{n}, 192.0.2.1", "X-Real-IP": f"10.9.1.{n}"},
                    )
                    for n in range(30)
                ]
            day = time.strftime("%Y-%m-%d", time.gmtime())
            held, refused = [], 0
            for n in range(80):
                ws = await connect(
                    f"{proxy.ws_base}/ws/daily/{day}",
                    local_addr=("127.0.0.2", 0),
                    additional_headers={"X-Forwarded-For": f"10.9.2.{n}, 192.0.2.1"},
                )
                try:
                    await asyncio.wait_for(ws.recv(), 5)
                    held.append(ws)
                except ConnectionClosed:
                    refused += 1
            for ws in held:
                await ws.close()
        finally:
            proxy.stop()
            for app in apps:
                app.stop()
    return {
        "trusted": trust,
        "races created (of 30, limit 20)": codes.count(201),
        "connections open (of 80, limit 64)": len(held),
    }


async def ipv6(tree: Tree) -> dict[str, Any]:
    proc = server(tree)
    try:
        async with httpx.AsyncClient(base_url=proc.base) as http:
            created = 0
            for host in ("2001:db8:5:6::1", "2001:db8:5:6::2", "2001:db8:5:6::3"):
                for _ in range(30):
                    created += await post_race(http, {"X-Forwarded-For": host}) == 201
    finally:
        proc.stop()
    return {"races created by one /64 (of 90, limit 20)": created}


def _upload(port: int, head: bytes, chunks: int, chunk: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        sent = 0
        try:
            for _ in range(chunks):
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        try:
            answer = sock.recv(200).split(b"\r\n")[0].decode()
        except OSError as error:
            answer = f"({error})"
    return f"{answer}, {sent / 1e6:.0f} MB sent"


async def body(tree: Tree) -> dict[str, Any]:
    # The player acts every 10 ms: beyond the production message budget.
    proc = server(
        tree,
        BOULANGER_COUNTDOWN_MS="100",
        BOULANGER_MESSAGES_PER_SECOND="100000",
        BOULANGER_MESSAGE_BURST="100000",
    )
    assert proc.proc is not None
    pid = proc.proc.pid
    results: dict[str, Any] = {}
    try:
        async with httpx.AsyncClient(base_url=proc.base) as http:
            created = (await http.post("/api/races", json={"code": CODE})).json()
        player = await Racer(proc.ws_base, created["race_id"]).connect()
        await player.join("Ann", host_key=created["host_key"])
        await player.start()
        piece = b" " * 65536
        uploads = {
            "96 MB, Content-Length": (
                b"POST /api/races HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100663296\r\n\r\n",
                1536,
                piece,
            ),
            "48 MB, chunked": (
                b"POST /api/races HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n",
                768,
                b"%x\r\n" % len(piece) + piece + b"\r\n",
            ),
        }
        for name, (head, count, chunk) in uploads.items():
            before = rss_mb(pid)
            peak = before
            latencies: list[float] = []
            upload = asyncio.create_task(asyncio.to_thread(_upload, proc.port, head, count, chunk))
            i = 0
            while not upload.done():
                started = time.perf_counter()
                await (player.move("col1", "cell1") if i % 2 == 0 else player.act("undo"))
                latencies.append((time.perf_counter() - started) * 1000)
                peak = max(peak, rss_mb(pid))
                i += 1
                await asyncio.sleep(0.01)
            answer = await upload
            await asyncio.sleep(0.5)
            latencies.sort()
            results[name] = (
                f"{answer}; RSS {before:.0f} MB before, +{peak - before:.0f} MB at most,"
                f" +{rss_mb(pid) - before:.0f} MB after; the player's acks meanwhile:"
                f" p50 {statistics.median(latencies):.1f} ms,"
                f" p99 {latencies[int(len(latencies) * 0.99)]:.1f} ms ({len(latencies)})"
            )
        await player.close()
    finally:
        proc.stop()
    return results


async def resync(tree: Tree) -> dict[str, Any]:
    # 68 sockets from one address: the connection limit is not what is measured.
    proc = server(tree, BOULANGER_COUNTDOWN_MS="100", BOULANGER_MAX_CONNECTIONS_PER_ADDRESS="200")
    results: dict[str, Any] = {}
    try:
        async with httpx.AsyncClient(base_url=proc.base) as http:
            created = (await http.post("/api/races", json={"code": CODE})).json()
        race_id = created["race_id"]
        players = []
        for n in range(8):
            racer = await Racer(proc.ws_base, race_id).connect()
            await racer.join(f"P{n}", **({"host_key": created["host_key"]} if n == 0 else {}))
            players.append(racer)
        await players[0].start()
        for racer in players:  # 36 actions each, within the burst of 40: 288 events
            for i in range(36):
                await (racer.move("col1", "cell1") if i % 2 == 0 else racer.act("undo"))
        seq = players[0].last_seq
        for label, last_seq in (("from 0", 0), ("from 32 back", seq - 32)):
            totals = {"messages": 0, "bytes": 0, "closed": 0}

            async def spectator(last_seq: int = last_seq, totals: dict[str, int] = totals) -> None:
                async with connect(f"{proc.ws_base}/ws/races/{race_id}", max_size=2**24) as ws:
                    await ws.send(json.dumps({"type": "join", "role": "spectator"}))
                    await ws.recv()
                    sent, started = 0, time.monotonic()

                    async def read() -> None:
                        async for frame in ws:
                            totals["messages"] += 1
                            totals["bytes"] += len(frame)

                    reader = asyncio.create_task(read())
                    try:
                        while time.monotonic() - started < 8:
                            # Within the message budget: the burst, then 5 a second.
                            allowed = 39 + 5 * (time.monotonic() - started)
                            if sent < allowed:
                                await ws.send(json.dumps({"type": "resync", "last_seq": last_seq}))
                                sent += 1
                            await asyncio.sleep(0.01)
                    except ConnectionClosed:
                        totals["closed"] += 1
                    reader.cancel()

            started = time.monotonic()
            await asyncio.gather(*(spectator() for _ in range(60)))
            took = time.monotonic() - started
            results[f"60 spectators, resync {label}"] = (
                f"{totals['messages']} messages, {totals['bytes'] / 1e6:.1f} MB in {took:.1f} s,"
                f" {totals['closed']} closed"
            )
        for racer in players:
            await racer.close()
    finally:
        proc.stop()
    return results


async def rematch(tree: Tree) -> dict[str, Any]:
    proc = server(tree, BOULANGER_COUNTDOWN_MS="100")
    try:
        async with httpx.AsyncClient(base_url=proc.base) as http:
            created = (await http.post("/api/races", json={"code": CODE})).json()
        host = await Racer(proc.ws_base, created["race_id"]).connect()
        await host.join("Host", host_key=created["host_key"])
        await host.start()
        await host.act("resign")
        await host.wait_event("race_over")
        for _ in range(30):
            await host.send(type="rematch")
            await asyncio.sleep(0.2)  # 5 a second: within the message budget
        await asyncio.sleep(1)
        opened = {e["race_id"] for e in host.events if e["type"] == "rematch"}
        await host.close()
    finally:
        proc.stop()
    return {"races opened by 30 rematch messages": len(opened)}


async def utf8(tree: Tree) -> dict[str, Any]:
    proc = server(tree)
    try:
        async with httpx.AsyncClient(base_url=proc.base) as http:
            created = (await http.post("/api/races", json={"code": CODE})).json()
        for _ in range(200):
            async with connect(f"{proc.ws_base}/ws/races/{created['race_id']}") as ws:
                await ws.send(b'{"type":"ping"}\xff', text=True)
                with contextlib.suppress(ConnectionClosed):
                    await ws.recv()
        await asyncio.sleep(0.5)
        output = proc.output()
    finally:
        proc.stop()
    return {
        "tracebacks logged for 200 frames": output.count("Traceback"),
        "log lines": len(output.splitlines()),
    }


COUNTERS = """
import gc, sys, tracemalloc
sys.path.insert(0, {server!r})
from boulanger.web import app
now = [1000.0]
if hasattr(app, "AddressLimits") and hasattr(app.AddressLimits, "may_create") and not hasattr(
    app.AddressLimits, "sweep"
):
    import time
    time.monotonic = lambda: now[0]
    limits = app.AddressLimits(64, 20)
    expire = lambda: None
elif hasattr(getattr(__import__("boulanger.web.limits").web.limits, "MemoryLimits", None), "may_create"):
    from boulanger.web.limits import MemoryLimits
    limits = MemoryLimits(64, 20, clock=lambda: now[0])
    expire = limits.expire
else:  # the store's limits (boulanger.broker.memory), as the web counts races on them
    from boulanger.broker.memory import MemoryLimits
    store_limits = MemoryLimits(clock=lambda: now[0])
    class limits:
        may_create = staticmethod(lambda key: store_limits.hit_now(f"created:{{{{{{key}}}}}}", 20, 60))
    expire = lambda: store_limits.sweep()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
for n in range(20000):
    limits.may_create(f"10.{{n // 65536}}.{{n // 256 % 256}}.{{n % 256}}")
held = tracemalloc.get_traced_memory()[0] - base
now[0] += 61
expire()
gc.collect()
after = tracemalloc.get_traced_memory()[0] - base
print(f"{{held / 1e6:.1f}} MB for 20,000 addresses, {{after / 1e6:.1f}} MB a minute later")
"""


async def counters(tree: Tree) -> dict[str, Any]:
    code = textwrap.dedent(COUNTERS.format(server=str(tree.path / "server")))
    env = {**os.environ, **tree.env()}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return {"race counters": (out.stdout or out.stderr).strip().splitlines()[-1]}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, required=True, help="a snapshot (see above)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios, comma separated")
    args = parser.parse_args()
    tree = Tree(args.tree.resolve())
    for name in args.only.split(","):
        result = await globals()[name](tree)
        for key, value in result.items():
            print(f"{name}: {key}: {value}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
