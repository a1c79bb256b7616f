"""Shared by bench/pubsub.py and bench/appends.py: the Redis broker's client code, old against new.

Both load ``RedisBroker`` as an older commit had it, run each variant in
turn (interleaved, so drifts in machine load hit all alike) and print
medians per operation.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from boulanger.broker.base import Broker

REPO = Path(__file__).resolve().parents[1]
BROKER = "server/boulanger/broker/redis.py"  # a module until broker/redis/ became a package
# Names of today's modules that an older broker imports under another name.
RENAMED = (("ProtocolError", "UnexpectedReply"),)  # broker/resp.py's error

Timing = tuple[float, float]  # CPU seconds, wall seconds


def appended(broker: Broker, event: dict[str, object]) -> object:
    """``event`` in the form ``broker.append`` takes: its JSON text (brokers that take
    opaque text), or the dict itself (older brokers, which encoded it themselves)."""
    import inspect
    import json

    annotation = inspect.signature(type(broker).append).parameters["event"].annotation
    if annotation in ("str", str):
        return json.dumps(event, separators=(",", ":"))
    return event


def old_redis_broker(
    rev: str | None, introduced_by: list[str], marker: str, what: str
) -> tuple[str, Callable[[str], Broker]]:
    """``RedisBroker`` of ``rev``, loaded from git.

    Without ``rev``: the parent of the oldest commit ``git log
    <introduced_by>`` lists, whose source must hold ``marker`` (``what``
    names that version in the error otherwise). A ``rev`` given is taken as
    it is (any version with a ``RedisBroker``).
    """
    check = rev is None
    if rev is None:
        added = subprocess.run(
            ["git", "log", "--format=%H", *introduced_by],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        rev = f"{added[-1]}^" if added else "HEAD"
    source = subprocess.run(
        ["git", "show", f"{rev}:{BROKER}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    if check and marker not in source:
        sys.exit(f"{rev}:{BROKER} is not {what}")
    for before, now in RENAMED:
        source = re.sub(rf"\b{before}\b", now, source)
    name = f"boulanger.broker._redis_{rev.replace('^', '_parent')}"
    module = types.ModuleType(name)
    module.__package__ = "boulanger.broker"  # its relative imports resolve to today's base
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{BROKER}", "exec"), module.__dict__)
    return rev, module.RedisBroker


async def interleaved(
    names: list[str], runs: int, one_run: Callable[[str, int], Awaitable[Timing]]
) -> dict[str, list[Timing]]:
    """``runs`` rounds, each running every variant once: ``one_run(name, round)``."""
    results: dict[str, list[Timing]] = {name: [] for name in names}
    for run in range(runs):
        for name in names:
            results[name].append(await one_run(name, run))
    return results


def print_medians(results: dict[str, list[Timing]], count: int, unit: str) -> None:
    """Per variant: median µs of CPU per ``unit``, per CPU second, per wall second, each run."""
    print(
        f"{'variant':<8} {f'µs/{unit} (CPU)':>16} {f'{unit}s/CPU s':>14} "
        f"{f'{unit}s/s wall':>14}  runs µs/{unit}"
    )
    for name, timings in results.items():
        cpus = [cpu for cpu, _ in timings]
        cpu = statistics.median(cpus)
        wall = statistics.median(wall for _, wall in timings)
        each = " ".join(f"{c / count * 1e6:.2f}" for c in cpus)
        print(
            f"{name:<8} {cpu / count * 1e6:>16.2f} {count / cpu:>14,.0f} "
            f"{count / wall:>14,.0f}  {each}"
        )
