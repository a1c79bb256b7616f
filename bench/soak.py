"""Soak: a long, bounded load run that watches the servers' memory over time.

Runs ``bench/load.py run`` (bot players racing at human pace through the real
protocol; two server processes on one throwaway redis-server by default) and,
next to it, samples the resident memory of every ``boulanger serve`` process
and of redis-server every ``--sample-s`` seconds. Prints the load run's
figures (latency percentiles, errors, disconnects, lost events), the memory
series, and the growth between the first and the second half of the run.
Only loopback addresses; the run stops by itself after ``--duration``.

    .venv/bin/python bench/soak.py --players 500 --duration 600
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as handle:
                children = [int(c) for c in handle.read().split()]
        except OSError:
            continue
        found.extend(children)
        frontier.extend(children)
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="redis2", help="memory, redis or redis2")
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--duration", type=float, default=600.0, help="measured seconds")
    parser.add_argument("--sample-s", type=float, default=30.0)
    args = parser.parse_args()

    out = Path(tempfile.mkstemp(prefix="boulanger-soak-", suffix=".json")[1])
    command = [
        sys.executable, str(REPO / "bench" / "load.py"), "run",
        "--target", args.target, "--pace", "human",
        "--players", str(args.players), "--duration", str(args.duration),
        "--out", str(out),
    ]  # fmt: skip
    print("$", " ".join(command), flush=True)
    load = subprocess.Popen(command, cwd=REPO)
    samples: list[tuple[float, dict[str, float]]] = []
    started = time.monotonic()
    try:
        while load.poll() is None:
            time.sleep(args.sample_s)
            procs = {pid: cmdline(pid) for pid in descendants(load.pid)}
            memory = {
                f"{'redis' if 'redis-server' in cmd else 'server'}:{pid}": rss_mb(pid)
                for pid, cmd in procs.items()
                # the processes themselves, not the taskset/nice wrappers that start them
                if ("boulanger serve" in cmd and "python" in cmd.split(" ")[0])
                or cmd.startswith(("redis-server", "/usr/bin/redis-server"))
            }
            if memory:
                samples.append((time.monotonic() - started, memory))
                shown = "  ".join(f"{name} {mb:.1f} MB" for name, mb in sorted(memory.items()))
                print(f"t={samples[-1][0]:6.0f}s  {shown}", flush=True)
    finally:
        if load.poll() is None:
            load.terminate()
        load.wait()
    result = json.loads(out.read_text()) if out.stat().st_size else {}
    os.unlink(out)
    print("\nload run figures:")
    for key, value in result.items():
        text = json.dumps(value)
        if len(text) < 200:
            print(f"  {key}: {text}")
    servers = sorted({n for _, mem in samples for n in mem if n.startswith("server")})
    if len(samples) >= 4:
        half = len(samples) // 2
        print("\nserver memory (MB): first sample, end of first half, last sample")
        for name in servers:
            series = [mem.get(name, 0.0) for _, mem in samples]
            print(f"  {name}: {series[0]:.1f}  {series[half - 1]:.1f}  {series[-1]:.1f}")
    sys.exit(load.returncode)


if __name__ == "__main__":
    main()
