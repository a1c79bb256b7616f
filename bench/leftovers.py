"""What closed connections and abandoned races leave in a server's memory, and for how long.

Runs the application in this process under uvicorn (as ``boulanger serve``
does: the same garbage-collector policy, objects allocated before the run
frozen), opens and closes connections and abandons races over loopback,
and reports with tracemalloc the memory still held, then after a full
collection (which ``boulanger serve`` runs every 5 minutes) and after the
sweep of idle races (a race nobody used for ``idle_race_s``, 10 minutes).

    .venv/bin/python bench/leftovers.py [--connections 2000] [--races 500]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import socket
import sys
import tracemalloc
from pathlib import Path

import httpx
import uvicorn
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from boulanger.web.app import create_app  # noqa: E402
from boulanger.web.settings import Settings  # noqa: E402

CODE = "BK1-C4-AAAAAAB"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def held_kb() -> float:
    return tracemalloc.get_traced_memory()[0] / 1024


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--races", type=int, default=500)
    args = parser.parse_args()
    settings = Settings.from_env(
        races_per_minute_per_address=10**6, max_connections_per_address=10**6
    )
    app = create_app(settings)
    server = app.state.server
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, ws="auto", log_level="warning",
        ws_per_message_deflate=False,
    )  # fmt: skip
    runner = uvicorn.Server(config)
    serving = asyncio.create_task(runner.serve())
    while not runner.started:
        await asyncio.sleep(0.05)
    base, ws_base = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base) as http:
        race = (await http.post("/api/races", json={"code": CODE})).json()
        # Warm up every code path once, then the policy of `boulanger serve`.
        async with connect(f"{ws_base}/ws/races/{race['race_id']}") as ws:
            await ws.send(json.dumps({"type": "join", "role": "spectator"}))
            await ws.recv()
        gc.collect()
        gc.freeze()
        gc.set_threshold(700, 10, 1_000_000)
        tracemalloc.start()

        start = held_kb()
        for _ in range(args.connections):
            async with connect(f"{ws_base}/ws/races/{race['race_id']}") as ws:
                await ws.send(json.dumps({"type": "join", "role": "spectator"}))
                await ws.recv()
        await asyncio.sleep(0.5)
        held = held_kb() - start
        gc.collect()
        after = held_kb() - start
        n = args.connections
        print(
            f"{n} connections opened and closed: {held / n:.2f} KB each held,"
            f" {after / n:.2f} KB each after a full collection"
        )

        start = held_kb()
        for i in range(args.races):
            created = (await http.post("/api/races", json={"code": CODE})).json()
            async with connect(f"{ws_base}/ws/races/{created['race_id']}") as ws:
                await ws.send(json.dumps({"type": "join", "name": f"P{i}"}))
                await ws.recv()
        await asyncio.sleep(0.5)
        held = held_kb() - start
        gc.collect()
        collected = held_kb() - start
        server.hubs.idle_s = 0
        await server.hubs.sweep()
        gc.collect()
        swept = held_kb() - start
        r = args.races
        print(
            f"{r} races abandoned after one join: {held / r:.1f} KB each held,"
            f" {collected / r:.1f} KB after a full collection, {swept / r:.1f} KB after the sweep"
            f" (the race's log stays in the broker: {swept * 1024 / r:.0f} bytes each)"
        )
    runner.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
