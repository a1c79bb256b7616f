"""Load generator: bot players racing through the real WebSocket protocol.

    .venv/bin/python bench/load.py run --target memory --pace human --players 2000
    .venv/bin/python bench/load.py idle --target memory --players 2000
    .venv/bin/python bench/load.py suite --out /tmp/bench.json   # every target, one run
    .venv/bin/python bench/load.py report /tmp/bench.json [--markdown]

Its parts, one job each: ``targets`` (the servers measured, started here on
free loopback ports and pinned to core 0), ``bots`` (the bot players, in
worker processes pinned to core 1, and what they measure), ``lean`` (their
WebSocket client), ``runs`` (one measured run), ``reports`` (lines and
tables, each row beside the baseline of its run), ``procs`` (pinning,
stopping every process a run started whatever fails, /proc and perf).

Paces: ``human`` (one action every 500 ms per player, jittered 250-750 ms)
and ``flat`` (the next action as soon as the previous one is answered).

Measured: action->ack latency; rival staleness (from an action that changes
what the other players see to each of them being told of it: p50, p99,
max) and the latency of every rival delivery; accepted actions per second;
errors, disconnects, lost events (every connected player must get every
event sent to everyone, in order); the CPU and resident memory of the
server process(es) and of redis-server, from /proc; the servers' socket
system calls (perf), so writes per accepted action; CPU per accepted action
against the baseline of the same run.

Only loopback addresses are used. The per-address limits of the server (64
connections, 20 races a minute) are met by spreading clients over source
addresses in 127.0.0.0/8 (50 connections, 15 races per address).
"""

from __future__ import annotations

import argparse
import atexit
import json
import resource
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bots import DEALS
from bench.procs import exit_on_signal, stop_everything
from bench.reports import markdown, report, show
from bench.runs import run
from bench.targets import Target


def suite(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    targets = args.targets.split(",")

    def one(target: str, pace: str, players: int, idle: bool = False, **extra: Any) -> None:
        ns = argparse.Namespace(
            **{**vars(args), "target": target, "pace": pace, "players": players}
        )
        for k, v in extra.items():
            setattr(ns, k, v)
        label = "idle" if idle else pace
        print(f"== {target} {label} {players} players", flush=True)
        try:
            result = run(ns, idle=idle)
        except Exception as error:  # one failed configuration must not lose the others
            result = {"target": target, "pace": label, "players": players, "failed": repr(error)}
        show(result)
        results.append(result)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))

    if "human" in args.parts:
        for players in [int(n) for n in args.human_players.split(",")]:
            for target in targets:
                one(target, "human", players, duration=args.duration, warmup=args.warmup)
    if "flat" in args.parts:
        for target in targets:
            one(target, "flat", args.flat_players, duration=args.flat_duration, warmup=3.0)
    if "idle" in args.parts:
        for target in targets:
            one(target, "human", args.players, idle=True)
    report(results)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--players", type=int, default=2000)
        p.add_argument("--duration", type=float, default=30.0, help="measured seconds")
        p.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
        p.add_argument("--interval-ms", type=float, default=500.0, help="human pace (mean)")
        p.add_argument("--countdown-ms", type=int, default=1000)
        p.add_argument("--workers", type=int, default=1, help="load generator processes")
        p.add_argument("--illegal", type=float, default=0.03, help="share of illegal moves")
        p.add_argument("--detour", type=float, default=0.04, help="share of detours (then undo)")
        p.add_argument("--finish", action="store_true", help="bots win and stop")
        p.add_argument("--compression", choices=["deflate", "none"], default="deflate")
        p.add_argument(
            "--client",
            choices=["lean", "websockets"],
            default="lean",
            help="bots' WebSocket client: a lean RFC 6455 client, or the websockets library",
        )
        p.add_argument("--redis-fsync", choices=["always", "everysec", "off"], default="everysec")
        p.add_argument(
            "--sqlite-synchronous",
            choices=["full", "normal"],
            default="full",
            help="the sqlite target's synchronous setting (full: an fsync per commit)",
        )
        p.add_argument(
            "--sqlite-window-ms",
            type=float,
            default=0.0,
            help="the sqlite target's commit window (the writer waits this long for more)",
        )
        p.add_argument("--settle-s", type=float, default=3.0, help="idle: wait before RSS")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument(
            "--nice",
            type=int,
            default=0,
            help="scheduler priority of the run's processes (-20..19)",
        )
        p.add_argument("--profile", help="py-spy output file (first server, in the window)")
        p.add_argument(
            "--count-calls",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="count the servers' socket system calls in the window with perf",
        )
        p.add_argument("--profile-rate", type=int, default=100, help="py-spy samples a second")
        p.add_argument(
            "--profile-native", action="store_true", help="py-spy --native: C frames too"
        )
        p.add_argument("--out", help="write the results as JSON here")
        p.add_argument("--keep-logs", action="store_true", help="print the servers' log tails")
        p.add_argument("--deals", type=int, default=DEALS, help="catalog deals the races use")
        p.add_argument(
            "--join-timeout", type=float, default=600.0, help="seconds for every bot to join"
        )

    p_run = sub.add_parser("run", help="one configuration")
    p_run.add_argument("--target", choices=Target.KINDS, default="memory")
    p_run.add_argument("--pace", choices=["human", "flat"], default="human")
    common(p_run)
    p_idle = sub.add_parser("idle", help="memory per idle joined player")
    p_idle.add_argument("--target", choices=Target.KINDS, default="memory")
    common(p_idle)
    p_suite = sub.add_parser("suite", help="baseline and every configuration, one after another")
    p_suite.add_argument("--targets", default="baseline_gc,memory,sqlite,redis,redis2r,cluster")
    p_suite.add_argument("--parts", default="human,flat,idle")
    p_suite.add_argument("--human-players", default="2000,1000", help="human pace runs")
    p_suite.add_argument("--flat-players", type=int, default=400)
    p_suite.add_argument("--flat-duration", type=float, default=15.0)
    common(p_suite)
    p_report = sub.add_parser("report", help="print the tables of a suite's JSON file")
    p_report.add_argument("file")
    p_report.add_argument("--markdown", action="store_true", help="markdown tables")
    args = parser.parse_args()
    if args.command == "report":
        data = json.loads(Path(args.file).read_text())
        data = data if isinstance(data, list) else [data]
        if args.markdown:
            markdown(data)
        else:
            report(data)
        return

    atexit.register(stop_everything)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.command == "suite":
        suite(args)
        return
    args.pace = getattr(args, "pace", "human")
    result = run(args, idle=args.command == "idle")
    show(result)
    report([result])
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
