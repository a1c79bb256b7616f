"""Solver abuse: what one address's burst costs everybody else, and what free accounts
get from the daily challenge, through a real server process.

    .venv/bin/python bench/solver_abuse.py [--part hints,reviews,daily] [--burst 64]
        [--daily-seconds 60]

Starts ``boulanger serve`` (memory broker) and plays three parts:

- *hints*: one address (127.0.0.2) opens ``--burst`` practice games, one
  connection each, and asks a hint on every one at the same moment; another
  user (127.0.0.3) then asks a hint in their own practice game, creates a
  race on a catalog deal, and creates a race on a code of their own (whose
  winnability the solver judges). Their times are printed beside the same
  requests made before the burst, on a quiet server.
- *reviews*: the same address plays a few moves in each of its games,
  resigns, and asks the review of all of them at the same moment; the other
  user measures the same three requests.
- *daily* (its own server, default settings): one address takes today's
  deal as a guest, then for ``--daily-seconds`` makes fresh accounts and asks
  a ranked attempt with each, as fast as the server answers; then another
  address does the same without a guest attempt first. The rate reached is
  extrapolated to ten minutes (said so in the output).

The other user's three requests are made once before the quiet figures
(the solver's processes start on first use). Run an older tree's server
with ``PYTHONPATH=DIR/server`` (``git archive <rev> server | tar -x -C DIR``).

The hints and reviews server raises the address's race quota
(``BOULANGER_RACES_PER_MINUTE_PER_ADDRESS``, 1000) so that the burst's
games are made in seconds: the quota on races is not what is measured.
Addresses are told apart by binding the client's end to 127.0.0.2 and
127.0.0.3 (any 127/8 address reaches the server on 127.0.0.1). Figures,
not a test; about two minutes with the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import use_tests, use_tree

use_tree()
use_tests()

import httpx  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from boulanger.engine import Game, GameCode  # noqa: E402
from boulanger.solver import catalog  # noqa: E402
from support.servers import ServerProcess  # noqa: E402

ATTACKER = "127.0.0.2"
VICTIM = "127.0.0.3"
TIMEOUT_S = 300.0


def http(base: str, address: str) -> httpx.AsyncClient:
    """An HTTP client whose requests come from ``address``."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    return httpx.AsyncClient(base_url=base, transport=transport, timeout=TIMEOUT_S, limits=limits)


class Player:
    """One practice game's player: one WebSocket from ``address``."""

    def __init__(self, ws_base: str, address: str, race_id: str, host_key: str) -> None:
        self.url = f"{ws_base}/ws/races/{race_id}"
        self.address = address
        self.host_key = host_key
        self.ws: ClientConnection | None = None
        self.code: str | None = None
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.reader: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.started = asyncio.Event()

    async def open(self) -> None:
        self.ws = await connect(self.url, local_addr=(self.address, 0), max_size=2**22)
        self.reader = asyncio.create_task(self._read())
        welcome = await self.request({"type": "join", "role": "player", "name": "P",
                                      "host_key": self.host_key}, "welcome")  # fmt: skip
        assert welcome["type"] == "welcome", welcome
        await self.ws.send(json.dumps({"type": "start"}))
        await asyncio.wait_for(self.started.wait(), 30)

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for frame in self.ws:
                message = json.loads(frame)
                kind = message["type"]
                if kind == "race_starting":
                    self.code = message["code"]
                    self.started.set()
                key = message.get("ref") or message.get("action_id") or kind
                future = self.waiting.pop(key, None)
                if future is None and kind in ("welcome", "error"):
                    future = self.waiting.pop("welcome", None)
                if future is not None and not future.done():
                    future.set_result(message)
        except Exception:
            pass
        finally:
            self.closed.set()
            for future in self.waiting.values():
                if not future.done():
                    future.set_result({"type": "_closed"})

    async def request(self, message: dict[str, Any], key: str) -> dict[str, Any]:
        assert self.ws is not None
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        await self.ws.send(json.dumps(message))
        return await asyncio.wait_for(future, TIMEOUT_S)

    async def hint(self) -> tuple[float, dict[str, Any]]:
        ref = secrets.token_hex(4)
        began = time.perf_counter()
        answer = await self.request({"type": "hint", "ref": ref}, ref)
        return time.perf_counter() - began, answer

    async def act(self, kind: str, **fields: Any) -> dict[str, Any]:
        action_id = secrets.token_hex(4)
        return await self.request({"type": kind, "action_id": action_id, **fields}, action_id)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


async def practice(base: str, ws_base: str, client: httpx.AsyncClient, address: str) -> Player:
    answer = await client.post("/api/races", json={"cells": 4, "practice": True})
    assert answer.status_code == 201, answer.text
    created = answer.json()
    player = Player(ws_base, address, created["race_id"], created["host_key"])
    await player.open()
    return player


def own_code() -> str:
    """A code outside the catalog: creating a race on it makes the solver judge it."""
    rng = random.Random(27)
    while True:
        code = GameCode(rng.randrange(1, 2**31), 4)
        if catalog.lookup(code) is None:
            return str(code)


async def wander(player: Player, rng: random.Random, moves: int = 6) -> None:
    """Play up to ``moves`` random legal moves in ``player``'s game."""
    assert player.code is not None
    game = Game(player.code)
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            return
        move = rng.choice(legal)
        answer = await player.act("move", **move.to_dict())
        if answer["type"] != "ack":
            return
        game.play(move)


async def victim_requests(victim: Player, client: httpx.AsyncClient) -> dict[str, str]:
    """The other user's three requests, at once: their times (or what went wrong)."""

    async def timed_post(body: dict[str, Any]) -> str:
        began = time.perf_counter()
        answer = await client.post("/api/races", json=body)
        took = time.perf_counter() - began
        return f"{took:.2f} s ({answer.status_code})"

    async def timed_hint() -> str:
        took, answer = await victim.hint()
        return f"{took:.2f} s ({answer['type']} {answer.get('result') or answer.get('code')})"

    hint, catalog_race, code_race = await asyncio.gather(
        timed_hint(), timed_post({"cells": 4}), timed_post({"code": own_code()})
    )
    return {"hint": hint, "race on a catalog deal": catalog_race, "race on own code": code_race}


def show(title: str, figures: dict[str, str]) -> None:
    print(f"  {title}:")
    for name, value in figures.items():
        print(f"    {name:<24} {value}")


def tally(answers: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for answer in answers:
        what = answer["type"]
        if what == "hint_result":
            what = f"hint_result {answer['result']}"
        elif what == "error":
            what = f"error {answer['code']}"
        counts[what] = counts.get(what, 0) + 1
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))


async def solver_parts(burst: int, parts: set[str]) -> None:
    server = ServerProcess("memory://", env={"BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "1000"})
    server.start()
    try:
        async with http(server.base, ATTACKER) as bad, http(server.base, VICTIM) as good:
            victim = await practice(server.base, server.ws_base, good, VICTIM)
            await victim_requests(victim, good)  # warm-up: the solver's processes start
            show("quiet server, the other user", await victim_requests(victim, good))
            players = await asyncio.gather(
                *(practice(server.base, server.ws_base, bad, ATTACKER) for _ in range(burst))
            )
            if "hints" in parts:
                print(f"hints: {burst} at once from {ATTACKER}")
                began = time.perf_counter()
                burst_task = asyncio.gather(*(p.hint() for p in players))
                await asyncio.sleep(0.2)  # the burst is in (its frames are tiny)
                show("during the burst, the other user", await victim_requests(victim, good))
                results = await burst_task
                took = time.perf_counter() - began
                answers = [answer for _, answer in results]
                print(f"  the burst: {tally(answers)}; the last answered after {took:.1f} s")
            if "reviews" in parts:
                paths = []
                for index, player in enumerate(players):
                    await wander(player, random.Random(index))  # a game to review
                    over = await player.act("resign")
                    assert over["type"] == "ack", over
                    race_id = player.url.rsplit("/", 1)[1]
                    race = (await bad.get(f"/api/races/{race_id}")).json()
                    pid = race["players"][0]["player_id"]
                    paths.append(f"/api/races/{race_id}/records/{pid}/review")
                print(f"reviews: {len(paths)} at once from {ATTACKER}")

                async def review(path: str) -> int:
                    return (await bad.get(path)).status_code

                began = time.perf_counter()
                burst_task = asyncio.gather(*(review(path) for path in paths))
                await asyncio.sleep(0.2)
                show("during the burst, the other user", await victim_requests(victim, good))
                statuses = await burst_task
                took = time.perf_counter() - began
                counts = {s: statuses.count(s) for s in sorted(set(statuses))}
                print(f"  the burst: statuses {counts}; the last answered after {took:.1f} s")
            for player in players:
                await player.close()
            await victim.close()
    finally:
        server.stop()


async def farm(base: str, address: str, day: str, seconds: float) -> tuple[int, str]:
    """Fresh accounts from ``address``, each asking a ranked attempt, for ``seconds``:
    the ranked attempts taken, and a line of what happened."""
    ranked = unranked = accounts = 0
    refusals: dict[str, int] = {}
    why: dict[str, int] = {}
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        async with http(base, address) as client:
            made = await client.post(
                "/api/accounts",
                json={"name": f"farm{secrets.token_hex(4)}", "password": secrets.token_hex(8)},
                headers={"Origin": base},
            )
            if made.status_code != 201:
                code = made.json()["error"]["code"]
                refusals[code] = refusals.get(code, 0) + 1
                await asyncio.sleep(1)
                continue
            accounts += 1
            attempt = await client.post(
                f"/api/daily/{day}/attempts", json={}, headers={"Origin": base}
            )
            if attempt.status_code != 201:
                code = attempt.json()["error"]["code"]
                refusals[code] = refusals.get(code, 0) + 1
                await asyncio.sleep(1)
            elif attempt.json()["ranked"]:
                ranked += 1
            else:
                unranked += 1
                reason = attempt.json().get("unranked", "?")
                why[reason] = why.get(reason, 0) + 1
    took = time.perf_counter() - began
    line = (
        f"in {took:.0f} s from {address}: {accounts} accounts made, {ranked} ranked "
        f"attempts, {unranked} unranked {why}, refusals {refusals}"
    )
    return ranked, line


async def daily_part(seconds: float) -> None:
    server = ServerProcess("memory://", env={"BOULANGER_DAILY_GUESTS_RANKED": "0"})
    server.start()
    try:
        async with http(server.base, ATTACKER) as guest:
            day = (await guest.get("/api/daily")).json()["date"]
            seen = await guest.post(
                f"/api/daily/{day}/attempts", json={"player_key": secrets.token_urlsafe(24)}
            )
            print(
                f"daily {day}: a guest's attempt from {ATTACKER} {seen.status_code} "
                f"ranked {seen.json().get('ranked')}"
            )
        ranked, line = await farm(server.base, ATTACKER, day, seconds)
        print(f"daily, after the guest saw the deal: {line}")
        print(
            f"  ranked attempts in ten minutes, extrapolated from that rate: "
            f"{ranked * 600 / seconds:.0f}"
        )
        # Another address, no guest attempt first: the accounts alone.
        ranked, line = await farm(server.base, "127.0.0.4", day, seconds)
        print(f"daily, fresh accounts alone: {line}")
        print(
            f"  ranked attempts in ten minutes, extrapolated from that rate: "
            f"{ranked * 600 / seconds:.0f} (a daily cap does not grow with time: see the note)"
        )
    finally:
        server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", default="hints,reviews,daily", help="which parts, by comma")
    parser.add_argument("--burst", type=int, default=64, help="requests in a burst")
    parser.add_argument("--daily-seconds", type=float, default=60, help="the daily part's span")
    args = parser.parse_args()
    parts = set(args.part.split(","))
    if parts & {"hints", "reviews"}:
        await solver_parts(args.burst, parts)
    if "daily" in parts:
        await daily_part(args.daily_seconds)


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    asyncio.run(main())
