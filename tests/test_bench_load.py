"""bench/load.py stops every process it started, whatever ends a run.

A run is started for real (a server, redis-server, a load generator
process), then ended the hard way: the load generator killed, bench/load.py
sent SIGTERM, or bench/load.py killed outright (SIGKILL). Whatever it
started, and their children, must be gone within a bound.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, session id) of a live process, None if gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[3])


def processes() -> dict[int, tuple[int, int]]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := stat(int(entry.name))) is not None:
            found[int(entry.name)] = info
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def children_of(pid: int) -> list[int]:
    return [child for child, (ppid, _) in processes().items() if ppid == pid]


def started_run(target: str) -> tuple[subprocess.Popen[str], list[int]]:
    """bench/load.py running (every bot joined, the races under way); its child pids."""
    run = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "bench" / "load.py"),
            "run",
            "--target",
            target,
            "--players",
            "16",
            "--duration",
            "120",
            "--warmup",
            "1",
            "--deals",
            "2",
            "--countdown-ms",
            "300",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert run.stdout is not None
    deadline = time.monotonic() + 90
    for line in run.stdout:  # the first line comes once every bot has joined
        if "players joined" in line:
            break
        assert time.monotonic() < deadline, "no bot joined in 90 s"
    else:
        pytest.fail(f"bench/load.py ended first with {run.wait()}")
    return run, children_of(run.pid)


def assert_all_gone(children: list[int], timeout: float = 30) -> None:
    """The children and everything in their sessions (a server's solver pool) end."""
    deadline = time.monotonic() + timeout
    while True:
        left = [
            pid
            for pid, (_, session) in processes().items()
            if pid in children or (session in children and session != os.getsid(0))
        ]
        if not left:
            return
        assert time.monotonic() < deadline, f"left running: {[cmdline(p) for p in left]}"
        time.sleep(0.1)


def test_a_dead_load_generator_ends_the_run_and_everything_it_started() -> None:
    run, children = started_run("redis")
    commands = [cmdline(pid) for pid in children]
    assert any("redis-server" in c for c in commands)
    assert any("boulanger serve" in c for c in commands)
    worker = next(pid for pid in children if "spawn_main" in cmdline(pid))
    os.kill(worker, signal.SIGKILL)
    output, _ = run.communicate(timeout=60)
    assert run.returncode != 0
    assert "load generator process exited" in output
    assert_all_gone(children)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_bench_load_stopped_or_killed_leaves_nothing_running(sig: signal.Signals) -> None:
    run, children = started_run("memory")
    assert any("boulanger serve" in cmdline(pid) for pid in children)
    run.send_signal(sig)
    run.communicate(timeout=60)
    assert_all_gone(children)


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_bench_load_killed_while_measuring_leaves_nothing_running() -> None:
    """In the measured window perf counts the server's system calls: it goes too."""
    run, _ = started_run("memory")
    deadline = time.monotonic() + 60
    while not any("perf" in cmdline(pid) for pid in children_of(run.pid)):
        assert run.poll() is None, "bench/load.py ended before its window"
        assert time.monotonic() < deadline, "no perf in the measured window within 60 s"
        time.sleep(0.1)
    children = children_of(run.pid)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    assert_all_gone(children)
