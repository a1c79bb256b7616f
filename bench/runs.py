"""One measured load run: a target started afresh, bots joined, a window measured.

A run starts the target, creates the races, joins every bot (in worker
processes on core 1), starts the races, waits the countdown and a warm-up,
then measures for ``duration`` seconds: only actions sent in that window
count. Besides what the bots measure (``bench/bots.py``), it reads the CPU
and memory of the server processes, redis-server and the bots from /proc,
what other processes took of each core meanwhile, and (with perf) the
system calls the servers made on their sockets.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

from bench import procs
from bench.bots import (
    PER_ADDRESS,
    RACE_SIZE,
    RACES_PER_ADDRESS,
    solutions,
    source_address,
    worker_main,
)
from bench.common import TREE, percentile
from bench.procs import (
    LOAD_CORE,
    READS,
    STARTED,
    WORKERS,
    WRITES,
    SyscallCount,
    core_busy,
    cpu_seconds,
    cpu_split,
    die_with_parent,
    pin,
    rss_kb,
)
from bench.targets import Target, server_env


async def create_races(
    target: Target, count: int, deals: list[tuple[str, list[dict[str, Any]]]]
) -> list[dict[str, Any]]:
    """Create ``count`` races (through the HTTP API, or by name on the baseline)."""
    races = []
    if target.kind.startswith("baseline"):
        for n in range(count):
            code, sol = deals[n % len(deals)]
            races.append({"race_id": f"r{n}", "code": code, "host_key": "-", "solution": sol})
        return races
    import httpx

    base = target.http_bases[0]
    clients: dict[int, httpx.AsyncClient] = {}
    try:
        for n in range(count):
            group = n // RACES_PER_ADDRESS
            if group not in clients:
                transport = httpx.AsyncHTTPTransport(local_address=f"127.0.200.{1 + group}")
                clients[group] = httpx.AsyncClient(base_url=base, transport=transport, timeout=30)
            code, sol = deals[n % len(deals)]
            answer = await clients[group].post("/api/races", json={"code": code})
            if answer.status_code != 201:
                raise RuntimeError(f"creating a race: {answer.status_code} {answer.text}")
            body = answer.json()
            races.append(
                {
                    "race_id": body["race_id"],
                    "code": code,
                    "host_key": body["host_key"],
                    "solution": sol,
                }
            )
    finally:
        for client in clients.values():
            await client.aclose()
    return races


def assign(
    races: list[dict[str, Any]], target: Target, players: int, split: bool
) -> list[dict[str, Any]]:
    """Each race's bots' servers: split across the processes, or one process per race."""
    bases = target.ws_bases
    n = 0
    for number, race in enumerate(races):
        race["bases"], race["addresses"] = [], []
        for index in range(RACE_SIZE):
            if n >= players:
                break
            race["bases"].append(bases[(index if split else number) % len(bases)])
            race["addresses"].append(source_address(n // PER_ADDRESS))
            n += 1
    return races


def run(args: argparse.Namespace, idle: bool = False) -> dict[str, Any]:
    """One measured run against a freshly started target; returns the figures."""
    procs.NICE = args.nice
    pin(LOAD_CORE)
    deals = solutions(args.deals)
    countdown_ms = args.countdown_ms
    target = Target(
        args.target,
        server_env(args.pace, countdown_ms),
        args.redis_fsync,
        getattr(args, "sqlite_synchronous", "full"),
        getattr(args, "sqlite_window_ms", 0.0),
    )
    result: dict[str, Any] = {
        "target": args.target,
        "pace": "idle" if idle else args.pace,
        "players": args.players,
        "compression": args.compression,
        "client": args.client,
        "nice": args.nice,
        "tree": str(TREE),
        "commit": (TREE / "COMMIT").read_text().strip() if (TREE / "COMMIT").exists() else None,
    }
    workers: list[mp.Process] = []
    try:
        target.start()
        time.sleep(1.0)
        rss_start = [rss_kb(pid) for pid in target.pids]
        redis_rss_start = sum(rss_kb(pid) for pid in target.redis_pids)
        race_count = -(-args.players // RACE_SIZE)
        races = asyncio.run(create_races(target, race_count, deals))
        races = assign(races, target, args.players, split=args.target == "redis2")
        processes = max(1, min(args.workers, race_count))
        ctx = mp.get_context("spawn")
        pipes = []
        t_connect = time.time()
        for w in range(processes):
            cfg = {
                "target": args.target,
                "races": races[w::processes],
                "seed": args.seed + w,
                "pace_s": args.interval_ms / 1000 if args.pace == "human" else 0.0,
                "finish": args.finish,
                "illegal": args.illegal,
                "detour": args.detour,
                "compression": None if args.compression == "none" else "deflate",
                "client": args.client,
                "connect_concurrency": 8,
                "drain_s": 3.0,
                "nice": procs.NICE,
            }
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=worker_main, args=(child, cfg), daemon=True)
            proc.start()
            child.close()  # the worker's end: its exit then ends our recv() with EOFError
            WORKERS.append(proc)
            workers.append(proc)
            pipes.append(parent)
        joined = total = 0
        for pipe, proc in zip(pipes, workers, strict=True):
            _, j, t = receive(pipe, proc, args.join_timeout)
            joined, total = joined + j, total + t
        result["joined"] = joined
        result["join_s"] = round(time.time() - t_connect, 1)
        print(f"  {joined}/{total} players joined in {result['join_s']} s", flush=True)
        if idle:
            watch(workers, time.time() + args.settle_s)
            rss_idle = [rss_kb(pid) for pid in target.pids]
            result["rss_start_kb"] = rss_start
            result["rss_idle_kb"] = rss_idle
            grown = sum(rss_idle) - sum(rss_start)
            result["kb_per_idle_player"] = round(grown / max(1, joined), 1)
            if target.redis:
                redis_now = sum(rss_kb(pid) for pid in target.redis_pids)
                result["redis_rss_kb"] = [redis_rss_start, redis_now]
            for pipe in pipes:
                pipe.send(("stop",))
        else:
            now = time.time()
            start_wall = now + 0.2
            measure_from = start_wall + countdown_ms / 1000 + args.warmup
            measure_to = measure_from + args.duration
            for pipe in pipes:
                pipe.send(("go", start_wall, measure_from, measure_to, measure_to + 0.5))
            watch(workers, measure_from)
            pids = target.pids + target.redis_pids
            load_pids = [proc.pid for proc in workers if proc.pid is not None]
            cpu0 = [cpu_seconds(pid) for pid in pids]
            sys0 = sum(cpu_split(pid)[1] for pid in target.pids)
            load0 = [cpu_seconds(pid) for pid in load_pids]
            wall0 = time.monotonic()
            cores0 = core_busy()
            if args.profile:
                profile_servers(target, args)
            calls = SyscallCount(target.pids if args.count_calls else [], measure_to - time.time())
            watch(workers, measure_to)
            wall = time.monotonic() - wall0
            cores1 = core_busy()
            cpu1 = [cpu_seconds(pid) for pid in pids]
            # The kernel's share of the servers' CPU: mostly the sockets' system calls.
            result["server_sys_pct"] = round(
                100 * (sum(cpu_split(pid)[1] for pid in target.pids) - sys0) / wall, 1
            )
            load1 = [cpu_seconds(pid) for pid in load_pids]
            cpu = [round(100 * (b - a) / wall, 1) for a, b in zip(cpu0, cpu1, strict=False)]
            n = len(target.pids)
            result["server_cpu_pct"] = cpu[:n]
            result["redis_cpu_pct"] = round(sum(cpu[n:]), 1) if target.redis else None
            if len(target.redises) > 1:  # a cluster: each node's share
                result["redis_nodes_cpu_pct"] = cpu[n:]
            result["loadgen_cpu_pct"] = round(
                100 * sum(b - a for a, b in zip(load0, load1, strict=False)) / wall, 1
            )
            result["server_rss_kb"] = [rss_kb(pid) for pid in target.pids]
            result["duration_s"] = args.duration
            busy = [
                round(100 * (b[0] - a[0]) / max(1, b[1] - a[1]), 1)
                for a, b in zip(cores0, cores1, strict=False)
            ]
            ours = [sum(cpu), result["loadgen_cpu_pct"]]
            result["core_busy_pct"] = busy
            # What other people's processes used of each core meanwhile (noise).
            result["others_pct"] = [
                round(max(0.0, b - o), 1) for b, o in zip(busy, ours, strict=False)
            ]
            result["loadavg"] = Path("/proc/loadavg").read_text().split()[0]
            calls.wait()
            result["server_writes"] = calls.total(WRITES)
            result["server_reads"] = calls.total(READS)
            if target.kind == "sqlite":
                result["db_bytes"] = target.db_bytes()
                result["races"] = race_count
        merged = merge(
            [receive(pipe, proc, 60)[1] for pipe, proc in zip(pipes, workers, strict=True)]
        )
        summarize(result, merged, args.duration)
        for proc in workers:
            proc.join(30)
        alive = [proc.poll() for proc in target.servers]
        if any(code is not None for code in alive):
            result["server_exited"] = alive
    finally:
        for proc in workers:
            if proc.is_alive():
                proc.kill()
        if getattr(args, "keep_logs", False):
            print(target.log_tail())
        target.stop()
        result.update(target.figures)
    return result


def watch(workers: list[mp.Process], until: float) -> None:
    """Sleep until ``until`` (wall clock); RuntimeError as soon as a worker has exited."""
    while (left := until - time.time()) > 0:
        time.sleep(min(left, 0.25))
        for proc in workers:
            if not proc.is_alive():
                raise RuntimeError(f"a load generator process exited with {proc.exitcode}")


def receive(pipe: Any, proc: mp.Process, timeout: float) -> Any:
    """The worker's next message; RuntimeError if it exits or says nothing for ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not pipe.poll(1.0):
        if not proc.is_alive():
            raise RuntimeError(f"a load generator process exited with {proc.exitcode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"a load generator process said nothing for {timeout:g} s")
    try:
        return pipe.recv()
    except EOFError:
        raise RuntimeError(f"a load generator process exited with {proc.exitcode}") from None


def profile_servers(target: Target, args: argparse.Namespace) -> None:
    """py-spy on the (first) server process for part of the window, in the background."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out = Path(args.profile)
    seconds = max(5, int(args.duration * 0.6))
    spying = subprocess.Popen(
        [
            spy,
            "record",
            "--pid",
            str(target.pids[0]),
            "--duration",
            str(seconds),
            "--rate",
            str(args.profile_rate),
            "--format",
            "raw",
            "--output",
            str(out),
            # Native frames need the process stopped at each sample.
            *(["--native"] if args.profile_native else ["--nonblocking"]),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: (die_with_parent(), pin(LOAD_CORE)),
    )
    STARTED.append(spying)


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ack_ms": [],
        "rival_ms": [],
        "stale_ms": [],
        "errors": {},
        "close_codes": {},
        "retries": {},
    }
    for part in parts:
        for key in ("ack_ms", "rival_ms", "stale_ms"):
            values = array("d")
            values.frombytes(part[key])
            out[key].extend(values)
        for key in ("errors", "close_codes", "retries"):
            for k, v in part[key].items():
                out[key][k] = out[key].get(k, 0) + v
        for key in (
            "accepted", "rejected", "sent", "disconnects", "lost", "disorder",
            "missing_at_end", "connect_failures", "unchanged", "order_only",
        ):  # fmt: skip
            out[key] = out.get(key, 0) + part[key]
    return out


def summarize(result: dict[str, Any], merged: dict[str, Any], duration: float) -> None:
    ack = sorted(merged["ack_ms"])
    rival = sorted(merged["rival_ms"])
    stale = sorted(merged["stale_ms"])
    accepted = merged["accepted"]

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)

    result.update(
        {
            "ack_p50_ms": r(percentile(ack, 50)),
            "ack_p95_ms": r(percentile(ack, 95)),
            "ack_p99_ms": r(percentile(ack, 99)),
            "ack_max_ms": r(ack[-1] if ack else None),
            "rival_p50_ms": r(percentile(rival, 50)),
            "rival_p99_ms": r(percentile(rival, 99)),
            "rival_samples": len(rival),
            # Staleness: from an action that changes what rivals show to each
            # rival being told of it (the deliveries that changed their screen).
            "stale_p50_ms": r(percentile(stale, 50)),
            "stale_p99_ms": r(percentile(stale, 99)),
            "stale_max_ms": r(stale[-1] if stale else None),
            # What a rival is sent per accepted action, and how much of it is news.
            "rival_told_per_action": round(len(rival) / accepted, 2) if accepted else None,
            "unchanged_deliveries": merged["unchanged"],
            "order_only_deliveries": merged["order_only"],
            "answers": len(ack),
            "accepted_per_s": round(accepted / duration, 1) if duration else None,
            "rejected_per_s": round(merged["rejected"] / duration, 1) if duration else None,
            "deliveries_per_s": round(len(rival) / duration, 1) if duration else None,
            "errors": merged["errors"],
            "disconnects": merged["disconnects"],
            "close_codes": merged["close_codes"],
            "lost_events": merged["lost"],
            "disordered_events": merged["disorder"],
            "missing_at_end": merged["missing_at_end"],
            "connect_failures": merged["connect_failures"],
            "retries": merged["retries"],
        }
    )
