"""Fair play, the line: copiers of a solver's line and human-like players against a real server.

    .venv/bin/python bench/copier.py [--deals 1,3,7,4995] [--seed 31] [--spread SEEDS]

Starts ``redis-server`` and ``boulanger serve`` on it (the default message
budget and review limits, a 1 s countdown; the bench reads the races' logs
from Redis for the figures the server logged) and, for each named deal,
plays through the real protocol one race of eight players who all know the
deal (a race on a chosen code):

- *copier, 600-900 ms*: ``boulanger solve``'s line at one action every 600 to
  900 ms, jittered; *copier, 260 ms*: the same, one action every 260 ms;
- *detours 10% / 25% / 50%*: the same line at 600-900 ms, with a random move
  before that share of its decisions, then an undo (one time in two) or a
  fresh solve from there;
- *fc-solve line*: Freecell Solver's line at 600-900 ms (when installed);
- *planner* and *far planner*: human-like play (tests/support/players.py)
  at a human pace: they look ahead, in their heads, for a few moves that put
  another card home (up to 400 or 3,000 positions), and undo a plan that
  leads nowhere;

and a second race of two: a short-sighted planner who asks for hints where
it would undo (refused: hints are for practice; it undoes), and a greedy
player who looks one move ahead. The same hint user then plays the deal in
practice, where hints are answered (practice is not reviewed: its line is
measured here, for comparison). Last, a copier at 600-900 ms takes today's
ranked daily attempt.

For each player it prints the result, the median time between actions, the
line (decisions on a solver's line out of all, the longest run, undos,
actions against par, the median pauses before hard and easy decisions, as
the server logged them) and the review: held or not, and why (the reason
players see; for a line, the moderators' detail). Then the measure's cost:
the processor seconds and positions each game's measure took in the
server. Figures, not a test; about 15 minutes on a busy two-core machine
(the human-like players play at a human pace, and give up after 700
actions, the greedy one after 200).

``--spread N`` plays no server: it measures, here, the same strategies on the
deals with N seeds each (from ``--seed``), and prints the spread of the
line's figures (the limits of docs/fair-play.md come from it); eleven deals
with three seeds take about 25 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import httpx

from boulanger import codec
from boulanger.broker import open_broker
from boulanger.engine import Game, GameCode
from boulanger.race.events import LineMeasured
from boulanger.race.review import LineSignal, ReviewLimits, review_line
from boulanger.solver.line import LineMeasure, measure_line
from support.players import (
    Copier,
    Greedy,
    HintUser,
    HumanPace,
    Jitter,
    LineCopier,
    Planner,
    Steady,
    fc_solve_line,
    play_offline,
)
from support.racer import Racer, create_race
from support.servers import RedisProcess, ServerProcess

LIMITS = ReviewLimits()
# Actions a player makes at most before giving up (resigning); the greedy
# player, who wins almost nothing, gives up sooner.
GIVE_UP = 700
GREEDY_GIVES_UP = 200


def strategies(code: str, seed: int) -> dict[str, Callable[[], Any]]:
    """The players of the first race, by name: each a maker of a fresh player."""
    made: dict[str, Callable[[], Any]] = {
        "copier, 600-900 ms": lambda: Copier(Jitter(600, 900, seed), seed),
        "copier, 260 ms": lambda: Copier(Steady(260), seed),
        "detours 10%": lambda: Copier(Jitter(600, 900, seed), seed, detours=0.10),
        "detours 25%": lambda: Copier(Jitter(600, 900, seed), seed, detours=0.25),
        "detours 50%": lambda: Copier(Jitter(600, 900, seed), seed, detours=0.50),
    }
    line = fc_solve_line(code)
    if line is not None:
        made["fc-solve line"] = lambda: LineCopier(line, Jitter(600, 900, seed))
    made["planner"] = lambda: Planner(HumanPace(seed + 1), seed + 1)
    made["far planner"] = lambda: Planner(HumanPace(seed + 2), seed + 2, look=3000, noise=1.0)
    return made


def others(seed: int) -> dict[str, Callable[[], Any]]:
    """The players of the second race (and of practice)."""
    return {
        "hint user": lambda: HintUser(HumanPace(seed + 3), seed + 3),
        "greedy": lambda: Greedy(HumanPace(seed + 4), seed + 4),
    }


# -- playing through the real protocol ------------------------------------------


def _gives_up(player: Any) -> int:
    return GREEDY_GIVES_UP if isinstance(player, Greedy) else GIVE_UP


async def play(racer: Racer, player: Any, code: str) -> dict[str, Any]:
    """Play ``player``'s game live: think, send, apply the acknowledged action here."""
    game = Game(code)
    give_up = _gives_up(player)
    hints = asked = 0
    await racer.until_started()
    loop = asyncio.get_running_loop()
    # The pauses run from one action sent to the next (the answer's round trip
    # is part of them, as it is of a person's).
    sent = loop.time()
    answer: dict[str, Any] = {}
    while not game.board.won:
        step = player.next(game) if game.actions < give_up else None
        if step is None:
            answer = await racer.act("resign")
            break
        await asyncio.sleep(max(0.0, sent + step.think_ms / 1000 - loop.time()))
        sent = loop.time()
        if step.action is None:
            asked += 1
            await racer.send(type="hint")
            found = await racer.expect("hint_result", "error", timeout=60)
            move = found.get("move") if found["type"] == "hint_result" else None
            hints += move is not None
            player.hinted(move)
            continue
        if "undo" in step.action:
            answer = await racer.act("undo")
        else:
            a = step.action
            answer = await racer.move(a["src"], a["dst"], a["count"])
        assert answer["type"] == "ack", answer
        game.apply_action(step.action)
    detours = getattr(player, "detours_made", 0)
    return {"status": answer.get("status"), "hints": hints, "asked": asked, "detours": detours}


async def race(
    server: ServerProcess, code: str, players: dict[str, Any], practice: bool = False
) -> tuple[str, dict[str, dict[str, Any]]]:
    """One race of ``players`` on ``code``: its id, and how each game went by name."""
    created = await create_race(server.base, code=code, practice=practice)
    racers: dict[str, Racer] = {}
    for i, name in enumerate(players):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        extra = {"host_key": created["host_key"]} if i == 0 else {}
        welcome = await racer.join(name, **extra)
        assert welcome["type"] == "welcome", welcome
        racers[name] = racer
    await next(iter(racers.values())).send(type="start")  # practice: no countdown
    games = await asyncio.gather(*(play(racers[n], p, code) for n, p in players.items()))
    for racer in racers.values():
        await racer.close()
    return created["race_id"], dict(zip(players, games, strict=True))


async def daily(server: ServerProcess, seed: int) -> tuple[str, str, dict[str, Any]]:
    """A copier at 600-900 ms on today's ranked daily: the race id, the day and the game."""
    key = secrets.token_urlsafe(24)
    async with httpx.AsyncClient(base_url=server.base) as http:
        today = (await http.get("/api/daily")).json()["date"]
        attempt = (
            await http.post(
                f"/api/daily/{today}/attempts", json={"player_key": key, "name": "copier"}
            )
        ).json()
    assert attempt["ranked"], attempt
    racer = await Racer(server.ws_base, attempt["race_id"]).connect()
    await racer.join("copier", host_key=attempt["host_key"])
    await racer.send(type="start")
    starting = await racer.wait_event("race_starting", timeout=30)
    game = await play(racer, Copier(Jitter(600, 900, seed), seed), starting["code"])
    await racer.close()
    game["key"] = key
    return attempt["race_id"], today, game


# -- what the server said ---------------------------------------------------------


async def lines_logged(store_url: str, race_id: str, winners: int) -> dict[str, LineMeasured]:
    """The race's LineMeasured events, read from its log once every winner has one."""
    broker = open_broker(store_url)
    await broker.start()
    try:
        async with asyncio.timeout(300):
            while True:
                texts = await broker.read(race_id, 0)
                found = {}
                for text in texts:
                    event = codec.decode_logged(text).event
                    if isinstance(event, LineMeasured):
                        found[event.player_id] = event
                if len(found) >= winners:
                    return found
                await asyncio.sleep(0.2)
    finally:
        await broker.close()


def _gaps(record: dict[str, Any]) -> list[int]:
    times = [a["t"] for a in record["actions"]]
    return [b - a for a, b in zip([0, *times[:-1]], times, strict=True)]


def _line_text(line: Any) -> str:
    if line is None:
        return "-"
    pauses = f"{line.hard_pause_ms or '-'}/{line.easy_pause_ms or '-'}"
    par = f"{line.actions}/{line.par}" if line.par else str(line.actions)
    return (
        f"{line.on_line}/{line.decisions} ({line.share:.0%}), run {line.longest_run},"
        f" undos {line.undos}, actions/par {par}, pauses hard/easy {pauses} ms"
    )


def _verdict(review: dict[str, Any] | None, line: Any) -> str:
    if review is None:
        return "not held"
    detail = review_line(line, LIMITS) if line is not None else None
    return f"held: {review['reason']}" + (f" [{detail}]" if detail else "")


async def report(
    server: ServerProcess,
    store: str,
    code: str,
    race_id: str,
    games: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    practice: bool = False,
) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        snapshot = (await http.get(f"/api/races/{race_id}")).json()
        winners = sum(1 for p in snapshot["players"] if p["status"] == "won")
        lines = {} if practice else await lines_logged(store, race_id, winners)
        snapshot = (await http.get(f"/api/races/{race_id}")).json()
        for standing in snapshot["players"]:
            name, pid = standing["name"], standing["player_id"]
            answer = await http.get(f"/api/races/{race_id}/records/{pid}")
            # Today's daily records are nobody's until the day ends.
            record = answer.json() if answer.status_code == 200 else None
            event = lines.get(pid)
            line = None if event is None else event.line
            if practice and record is not None and standing["status"] == "won":
                # Not reviewed: measured here.
                line = LineSignal.from_dict(measure_line(record, budget=None).to_dict())
            rows.append(
                {
                    "deal": GameCode.parse(code).deal,
                    "player": name + (" (practice)" if practice else ""),
                    "result": standing["status"],
                    "actions": standing["actions"],
                    "seconds": (standing["time_ms"] or standing["elapsed_ms"]) / 1000,
                    "median_ms": statistics.median(_gaps(record)) if record else None,
                    "hints": games[name]["hints"],
                    "detours": games[name]["detours"],
                    "line": line,
                    "review": "practice: not reviewed" if practice else None,
                    "verdict": None if practice else _verdict(standing["review"], line),
                }
            )


def print_rows(rows: list[dict[str, Any]]) -> None:
    print()
    print(
        "| deal | player | result | median between actions | line: on a solver's line,"
        " longest run, undos, actions/par, pauses | review |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        result = f"{row['result']}, {row['actions']} actions, {row['seconds']:.0f} s"
        if row["hints"]:
            result += f", {row['hints']} hints"
        if row["detours"]:
            result += f", {row['detours']} detours"
        verdict = row["review"] or row["verdict"]
        median = "-" if row["median_ms"] is None else f"{row['median_ms']:.0f} ms"
        print(
            f"| {row['deal']} | {row['player']} | {result} | {median} |"
            f" {_line_text(row['line'])} | {verdict} |"
        )
    measured = [r["line"] for r in rows if r["line"] is not None and r["review"] is None]
    if measured:
        seconds = sorted(line.seconds for line in measured)
        positions = sorted(line.positions for line in measured)
        print(
            f"\nthe measure in the server, {len(measured)} wins: seconds median"
            f" {statistics.median(seconds):.2f}, max {seconds[-1]:.2f}; positions median"
            f" {statistics.median(positions):.0f}, max {positions[-1]}"
        )


async def live(args: argparse.Namespace) -> None:
    redis = RedisProcess()
    redis.start()
    store = redis.url
    server = ServerProcess(
        store, env={"BOULANGER_COUNTDOWN_MS": "1000", "BOULANGER_DAILY_GUESTS_RANKED": "1"}
    )
    server.start()
    rows: list[dict[str, Any]] = []
    try:
        codes = [str(GameCode(int(deal), 4)) for deal in args.deals.split(",")]

        async def one_deal(code: str) -> list[tuple[str, dict[str, Any], bool]]:
            first = {n: make() for n, make in strategies(code, args.seed).items()}
            second = {n: make() for n, make in others(args.seed).items()}
            practice = {"hint user": others(args.seed)["hint user"]()}
            done = await asyncio.gather(
                race(server, code, first),
                race(server, code, second),
                race(server, code, practice, practice=True),
            )
            return [(rid, games, i == 2) for i, (rid, games) in enumerate(done)]

        played = await asyncio.gather(*(one_deal(code) for code in codes), daily(server, args.seed))
        for code, races in zip(codes, played[:-1], strict=True):
            for race_id, games, practice in races:  # type: ignore[misc]
                await report(server, store, code, race_id, games, rows, practice)
        race_id, today, game = played[-1]  # type: ignore[misc]
        daily_rows: list[dict[str, Any]] = []
        await report(server, store, "BK1-C4-AAAAAAB", race_id, {"copier": game}, daily_rows)
        async with httpx.AsyncClient(base_url=server.base) as http:
            me = (
                await http.get(f"/api/daily/{today}/me", headers={"X-Player-Key": game["key"]})
            ).json()
            board = (await http.get(f"/api/daily/{today}/leaderboard")).json()
        for row in daily_rows:
            row["deal"] = f"daily {today}"  # its code stays secret today
        rows.extend(daily_rows)
        print_rows(rows)
        print(
            f"\ntoday's daily: the copier's entry {json.dumps(me['entry']['review'])},"
            f" rank {me['rank']}, leaderboard total {board['total']}"
        )
    finally:
        server.stop()
        redis.cleanup()


# -- the spread, offline ------------------------------------------------------------


def spread(args: argparse.Namespace) -> None:
    """The line's figures for every strategy on the deals, over ``args.spread`` seeds."""
    found: dict[str, list[tuple[LineMeasure, int]]] = {}
    lost: dict[str, int] = {}
    for deal in args.deals.split(","):
        code = str(GameCode(int(deal), 4))
        for seed in range(args.seed, args.seed + args.spread):
            players = {n: make() for n, make in {**strategies(code, seed), **others(seed)}.items()}
            games = {n: play_offline(p, code, _gives_up(p)) for n, p in players.items()}
            players["hint user (practice)"] = others(seed)["hint user"]()
            games["hint user (practice)"] = play_offline(
                players["hint user (practice)"], code, GIVE_UP, hints=True
            )
            for name, record in games.items():
                if not Game.from_record(record).board.won:
                    lost[name] = lost.get(name, 0) + 1
                    continue
                detours = getattr(players[name], "detours_made", 0)
                found.setdefault(name, []).append((measure_line(record, budget=None), detours))
            print(f"deal {deal} seed {seed} measured", file=sys.stderr, flush=True)
    print(
        "| player | wins (lost) | detours per decision | on a solver's line: min, median, max |"
        " longest run: median, max | held | pauses hard/easy, median | measure's processor s:"
        " median, max |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, measured in found.items():
        measures = [m for m, _ in measured]
        shares = sorted(m.on_line / m.decisions for m in measures if m.decisions)
        runs = sorted(m.longest_run for m in measures)
        seconds = sorted(m.seconds for m in measures)
        strayed = statistics.median(d / m.decisions for m, d in measured if m.decisions)
        ratios = [
            m.hard_pause_ms / m.easy_pause_ms
            for m in measures
            if m.hard_pause_ms and m.easy_pause_ms
        ]
        held = sum(1 for m in measures if review_line(LineSignal.from_dict(m.to_dict()), LIMITS))
        print(
            f"| {name} | {len(measures)} ({lost.get(name, 0)}) | {strayed:.2f} |"
            f" {shares[0]:.2f}, {statistics.median(shares):.2f}, {shares[-1]:.2f} |"
            f" {statistics.median(runs):.0f}, {runs[-1]} | {held} of {len(measures)} |"
            f" {statistics.median(ratios):.2f} | {statistics.median(seconds):.2f},"
            f" {seconds[-1]:.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", default="1,3,7,4995", help="deal numbers (4 cells)")
    parser.add_argument("--seed", type=int, default=31, help="the players' seed")
    parser.add_argument("--spread", type=int, default=0, help="seeds per deal, offline")
    args = parser.parse_args()
    if args.spread:
        spread(args)
    else:
        asyncio.run(live(args))


if __name__ == "__main__":
    main()
