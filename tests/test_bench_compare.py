"""bench/compare.py loads an older commit's Redis broker beside today's, whatever its shape:
the module ``broker/redis.py`` of before, or the package ``broker/redis/`` of now."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from boulanger.broker.redis import RedisBroker

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import compare  # noqa: E402

MODULE_SHAPE = "1f85dbb"  # broker/redis.py, its own RESP reader, events as dicts


def _has(rev: str) -> bool:
    found = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=REPO, check=False)
    return found.returncode == 0


@pytest.mark.skipif(not _has(MODULE_SHAPE), reason="a checkout without that history")
@pytest.mark.parametrize("rev", [MODULE_SHAPE, "HEAD"])
def test_an_old_redis_broker_loads_from_either_shape(rev: str) -> None:
    shown, old = compare.old_redis_broker(rev, [], "", "")
    assert old.__name__ == "RedisBroker" and old is not RedisBroker
    # Its modules are its own commit's, under a name of their own.
    assert old.__module__.startswith(f"boulanger_{shown}.broker.redis")
    assert "redis" in compare.broker_source(shown)
    event = compare.appended(old("redis://127.0.0.1:1/0"), {"kind": "x"})
    expects_text = inspect.signature(old.append).parameters["event"].annotation in ("str", str)
    assert isinstance(event, str) == expects_text
    assert expects_text == (rev == "HEAD")  # the module's broker encoded events itself
