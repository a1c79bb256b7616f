"""Shared by bench/pubsub.py and bench/appends.py: the Redis broker's client code, old against new.

Both load ``RedisBroker`` as an older commit had it (with the whole package
of that commit, under another name: a module ``broker/redis.py`` or the
package ``broker/redis/``), run each variant in turn (interleaved, so drifts
in machine load hit all alike) and print medians per operation.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import io
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from boulanger.broker import Broker

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "server/boulanger"
# The Redis broker: a module until broker/redis/ became a package.
BROKER_MODULE = f"{PACKAGE}/broker/redis.py"
BROKER_PACKAGE = f"{PACKAGE}/broker/redis/"

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


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, check=True).stdout


def broker_source(rev: str) -> str:
    """The Redis broker's source at ``rev``: its module, or every module of its package."""
    try:
        return _git("show", f"{rev}:{BROKER_MODULE}").decode()
    except subprocess.CalledProcessError:
        names = _git("ls-tree", "--name-only", f"{rev}:{BROKER_PACKAGE}").decode().split()
        parts = [_git("show", f"{rev}:{BROKER_PACKAGE}{name}").decode() for name in names]
        return "\n".join(
            part for name, part in zip(names, parts, strict=True) if name.endswith(".py")
        )


def load_package(rev: str) -> str:
    """The ``boulanger`` package of ``rev``, importable beside today's under another name;
    returns that name.

    The whole package is taken from git, so that the old broker imports the
    modules of its own time (whatever moved or was renamed since: the broker
    as a module or a package, its RESP parser, its codec); its imports are
    relative, so they stay inside it.
    """
    name = "boulanger_" + re.sub(r"\W", "_", rev)
    if name in sys.modules:
        return name
    root = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    atexit.register(shutil.rmtree, root, True)
    with tarfile.open(fileobj=io.BytesIO(_git("archive", rev, PACKAGE))) as tar:
        tar.extractall(root, filter="data")
    where = root / PACKAGE
    spec = importlib.util.spec_from_file_location(
        name, where / "__init__.py", submodule_search_locations=[str(where)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return name


def old_redis_broker(
    rev: str | None, introduced_by: list[str], marker: str, what: str
) -> tuple[str, Callable[[str], Broker]]:
    """``RedisBroker`` of ``rev``, loaded from git with the package of its time.

    Without ``rev``: the parent of the oldest commit ``git log
    <introduced_by>`` lists, whose source must hold ``marker`` (``what``
    names that version in the error otherwise). A ``rev`` given is taken as
    it is (any version with a ``RedisBroker``, a module or a package).
    """
    check = rev is None
    if rev is None:
        added = _git("log", "--format=%H", *introduced_by).decode().split()
        rev = f"{added[-1]}^" if added else "HEAD"
    rev = _git("rev-parse", "--short", rev).decode().strip()
    if check and marker not in broker_source(rev):
        sys.exit(f"the Redis broker of {rev} is not {what}")
    package = load_package(rev)
    module = importlib.import_module(f"{package}.broker.redis")
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
