"""Fair play: what a solving bot and a fast human line get from a real server.

    .venv/bin/python bench/fair_play.py [--seed 18] [--skip-human]

Starts ``boulanger serve`` (memory broker, the default message budget and
the default review limits, a 1 s countdown) and plays, through the real
protocol, one race on a deal the server picks (secret until the start) with
three players who all learn the deal from ``race_starting``:

- *Bot*: solves it there and then, and sends the solution as fast as the
  message budget allows (a burst of 40, then 5 a second);
- *Paced bot*: the same line at one action every 260 ms, just slower than
  the review's median limit (what the review cannot tell from a human);
- *Human line*: the same line at one action every 600 to 900 ms, jittered
  (seeded), as a fast human who knew the line would play it.

Then the Bot takes today's ranked daily attempt the same way. For each it
prints the time to the win, the actions, the median time between actions,
the share of actions under 100 ms after the previous one, and the review's
verdict (``held`` with the reason, or ``ok``). Figures, not a test; about
80 seconds (10 with ``--skip-human``, which also skips the paced bot).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import httpx

from boulanger.solver import solve
from boulanger.web.connection import TokenBucket
from boulanger.web.settings import Settings
from support.racer import Racer, create_race
from support.servers import ServerProcess


class Budget:
    """The server's message budget as a client keeps it: as fast as allowed, never closed."""

    def __init__(self, sent: int) -> None:
        settings = Settings()
        self.bucket = TokenBucket(settings.message_burst, settings.messages_per_second * 0.98)
        for _ in range(sent):
            self.bucket.take()

    async def wait(self) -> None:
        while not self.bucket.take():
            await asyncio.sleep(0.005)


async def _deal(racer: Racer) -> tuple[list[dict[str, Any]], float]:
    """The deal from race_starting, solved: the line and the seconds the solver took."""
    starting = await racer.wait_event("race_starting", timeout=30)
    began = time.perf_counter()
    solution = solve(starting["code"], budget=30)
    assert solution.result == "won", solution.result
    return solution.actions, time.perf_counter() - began


async def _play(
    racer: Racer, line: list[dict], gaps_ms: list[int] | None, budget: Budget | None
) -> None:
    await racer.until_started()
    for i, move in enumerate(line):
        if gaps_ms is not None:
            await asyncio.sleep(gaps_ms[i] / 1000)
        if budget is not None:
            await budget.wait()
        answer = await racer.move(move["src"], move["dst"], move["count"])
        assert answer["type"] == "ack", answer


def _pace(record: dict[str, Any]) -> tuple[float, float]:
    """Median ms between actions (the first from the start) and the share under 100 ms."""
    times = [action["t"] for action in record["actions"]]
    gaps = [b - a for a, b in zip([0, *times[:-1]], times, strict=True)]
    return statistics.median(gaps), sum(g < 100 for g in gaps) / len(gaps)


def _line(name: str, standing: dict[str, Any], record: dict[str, Any] | None) -> str:
    review = standing["review"]
    verdict = "ok" if review is None else f"held: {review['reason']}"
    won = (
        f"won in {standing['time_ms'] / 1000:.1f} s" if standing["time_ms"] else standing["status"]
    )
    pace = ""
    if record is not None:
        median, fast = _pace(record)
        pace = f", median {median:.0f} ms between actions, {fast:.0%} under 100 ms"
    return f"{name:<11} {won}, {standing['actions']} actions{pace}; review {verdict}"


async def race(server: ServerProcess, seed: int, human: bool) -> None:
    created = await create_race(server.base, cells=4)
    names = ["Bot", "Paced bot", "Human line"] if human else ["Bot"]
    racers = []
    for i, name in enumerate(names):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        welcome = await racer.join(name, **({"host_key": created["host_key"]} if i == 0 else {}))
        assert welcome["type"] == "welcome", welcome
        racers.append(racer)
    print(f"race {created['race_id']}: code in the lobby {created['code']!r}, par {created['par']}")
    budget = Budget(sent=2)  # the bot's join and start
    await racers[0].send(type="start")
    line, solving = await _deal(racers[0])
    print(f"deal told at race_starting; solved in {solving * 1000:.0f} ms: {len(line)} actions")
    rng = random.Random(seed)
    plays = [_play(racers[0], line, None, budget)]
    if human:
        plays.append(_play(racers[1], line, [260] * len(line), None))
        plays.append(_play(racers[2], line, [rng.randint(600, 900) for _ in line], None))
    await asyncio.gather(*plays)
    # The last to finish hears it (the others, silent since, may be closed for idling).
    over = await racers[-1].wait_event("race_over", timeout=60)
    async with httpx.AsyncClient(base_url=server.base) as http:
        for standing in over["standings"]:
            path = f"/api/races/{created['race_id']}/records/{standing['player_id']}"
            record = (await http.get(path)).json()
            print(_line(standing["name"], standing, record))
    for racer in racers:
        await racer.close()


async def daily(server: ServerProcess) -> None:
    key = secrets.token_urlsafe(24)
    async with httpx.AsyncClient(base_url=server.base) as http:
        today = (await http.get("/api/daily")).json()
        attempt = (
            await http.post(
                f"/api/daily/{today['date']}/attempts", json={"player_key": key, "name": "Bot"}
            )
        ).json()
    print(f"daily {today['date']}: code before the attempt {today['code']!r}, par {today['par']}")
    bot = await Racer(server.ws_base, attempt["race_id"]).connect()
    await bot.join("Bot", host_key=attempt["host_key"])
    budget = Budget(sent=2)
    await bot.send(type="start")
    line, solving = await _deal(bot)
    print(f"deal told at race_starting; solved in {solving * 1000:.0f} ms: {len(line)} actions")
    await _play(bot, line, None, budget)
    over = await bot.wait_event("race_over", timeout=30)
    await bot.close()
    print(_line("Bot", over["standings"][0], None))
    async with httpx.AsyncClient(base_url=server.base) as http:
        me = (
            await http.get(f"/api/daily/{today['date']}/me", headers={"X-Player-Key": key})
        ).json()
        board = (await http.get(f"/api/daily/{today['date']}/leaderboard")).json()
    print(f"daily: rank {me['rank']}, leaderboard total {board['total']}, share {me['share']!r}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=18, help="the human line's jitter")
    parser.add_argument("--skip-human", action="store_true", help="only the bot (10 s)")
    args = parser.parse_args()
    server = ServerProcess("memory://", env={"BOULANGER_COUNTDOWN_MS": "1000"})
    server.start()
    try:
        await race(server, args.seed, not args.skip_human)
        await daily(server)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
