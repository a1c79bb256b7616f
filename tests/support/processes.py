"""Which processes a test started and whether they are gone (Linux: /proc).

A process is named by its pid and its start time, so that a pid the kernel
hands out again later is never taken for the process it used to name.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    started: int  # clock ticks after boot: with the pid, names one process

    def describe(self) -> str:
        try:
            command = (PROC / str(self.pid) / "cmdline").read_bytes()
        except OSError:
            return f"{self.pid} (gone)"
        text = command.replace(b"\0", b" ").decode(errors="replace")
        return f"{self.pid} {text[:200]}"


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when there is none."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold anything: read after its end.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def children(pid: int) -> list[Proc]:
    """The running (not yet exited) processes whose parent is ``pid``."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        if stat is not None and stat[1] == pid and stat[0] != "Z":
            found.append(Proc(int(entry.name), stat[2]))
    return found


def descendants(pid: int) -> list[Proc]:
    """Every running process below ``pid``: children, their children, and so on."""
    found: list[Proc] = []
    todo = [pid]
    while todo:
        below = children(todo.pop())
        found.extend(below)
        todo.extend(p.pid for p in below)
    return found


def running(proc: Proc) -> bool:
    """Whether the process still runs (an exited one waiting to be reaped does not)."""
    stat = _stat(proc.pid)
    return stat is not None and stat[2] == proc.started and stat[0] != "Z"


def wait_gone(procs: list[Proc], timeout: float) -> list[Proc]:
    """Wait until none of ``procs`` runs, at most ``timeout`` seconds; those still running."""
    deadline = time.monotonic() + timeout
    left = [p for p in procs if running(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if running(p)]
    return left


def adopt_orphans() -> bool:
    """Make this process the one that inherits its descendants' orphans (Linux).

    Without it, a process that outlives its parent is adopted by init and
    nobody notices it is left; with it, :func:`children` of this process
    lists it. False where the kernel does not offer it.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap_exited_children() -> None:
    """Collect the exit status of adopted children that have exited (no zombies left)."""
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is not None and stat[1] == os.getpid() and stat[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def kill(procs: list[Proc]) -> None:
    for proc in procs:
        if running(proc):
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
