"""The processes of a load run: pinning, stopping everything, and what /proc and perf say.

Every process a run starts (servers, redis-servers, load generator
processes) is stopped whatever fails: in the run's ``finally``, at exit
(atexit, and SIGTERM/SIGHUP turned into SystemExit so that both run), and,
should the run's own process be killed outright, by the kernel: each child
asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG). Servers and
redis-server run in sessions of their own (see :func:`pin`), so each is
stopped with its group (a server's solver pool too).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

SERVER_CORE = 0
LOAD_CORE = 1
CLK_TCK = os.sysconf("SC_CLK_TCK")

# --nice: the scheduler priority of every process of a run (servers, redis, bots).
NICE = 0

STARTED: list[subprocess.Popen[bytes]] = []
WORKERS: list[mp.process.BaseProcess] = []


def pin(core: int, nice: int | None = None) -> None:
    """Pin this process to a core. The kernel shares CPU between sessions
    (autogroups) before processes, so each process of a run is started in a
    session of its own; ``nice`` sets that session's priority."""
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {core})
    nice = NICE if nice is None else nice
    if nice:
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, nice)


def die_with_parent() -> None:
    """In a child: be sent SIGKILL when the parent process dies (Linux)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def stop_group(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process's group, then SIGKILL what is left after ``grace`` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            with contextlib.suppress(OSError):  # its children (a solver pool)
                os.killpg(proc.pid, signal.SIGKILL)
            return
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)


def stop_everything() -> None:
    """Kill every process still running that a run started (the last resort, at exit)."""
    for worker in WORKERS:
        if worker.is_alive():
            worker.kill()
    for proc in STARTED:
        stop_group(proc, grace=0.0)


def exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def core_busy() -> list[tuple[int, int]]:
    """(busy, total) jiffies of each core, from /proc/stat."""
    out = []
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                v = [int(x) for x in line.split()[1:]]
                idle = v[3] + v[4]
                out.append((sum(v) - idle, sum(v)))
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/<pid>/stat."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU time of a process, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def rss_kb(pid: int) -> int:
    """Resident memory of a process (VmRSS), from /proc/<pid>/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not come up")


def wait_healthy(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    import httpx

    wait_port(port, proc, what)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        time.sleep(0.05)
    raise TimeoutError(f"{what} is not healthy")


# -- system calls, counted by perf ---------------------------------------------

# What a server does to its sockets: writes (uvloop writes with write/writev,
# asyncio's own loop with send/sendmsg) and reads.
WRITES = ("write", "writev", "sendto", "sendmsg")
READS = ("read", "readv", "recvfrom", "recvmsg")


class SyscallCount:
    """``perf stat`` counting the socket system calls of some processes for a while.

    Counting (not sampling) tracepoints costs the processes a counter
    increment per call. Needs perf and the right to read tracepoints (root,
    or ``kernel.perf_event_paranoid`` at -1); :attr:`counts` is empty when
    either is missing.
    """

    def __init__(self, pids: list[int], seconds: float) -> None:
        self.counts: dict[str, int] = {}
        self._out = Path(tempfile.mkstemp(prefix="boulanger-perf-", suffix=".csv")[1])
        self._proc: subprocess.Popen[bytes] | None = None
        perf = shutil.which("perf")
        if perf is None or not pids:
            return
        events = ",".join(f"syscalls:sys_enter_{name}" for name in (*WRITES, *READS))
        command = [
            perf, "stat", "-x", ",", "-o", str(self._out), "-e", events,
            "-p", ",".join(map(str, pids)), "--timeout", str(max(10, round(seconds * 1000))),
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=lambda: (die_with_parent(), pin(LOAD_CORE)),
        )
        STARTED.append(self._proc)

    def wait(self) -> dict[str, int]:
        """The counts by system call (``write``, ``read``...), once perf has finished."""
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(30)
            for line in self._out.read_text(errors="replace").splitlines():
                fields = line.split(",")
                if len(fields) > 2 and fields[2].startswith("syscalls:sys_enter_"):
                    with contextlib.suppress(ValueError):
                        self.counts[fields[2].removeprefix("syscalls:sys_enter_")] = int(fields[0])
        self._out.unlink(missing_ok=True)
        return self.counts

    def total(self, names: tuple[str, ...]) -> int | None:
        """The calls of those names, or None when nothing was counted."""
        if not self.counts:
            return None
        return sum(self.counts.get(name, 0) for name in names)
