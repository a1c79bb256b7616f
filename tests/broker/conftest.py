"""Every store, for tests that must hold on each: in memory, on SQLite, in a real Redis,
on a real Redis Cluster (one parameter of the ``backend`` fixture each)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from boulanger.broker import Broker, Store, open_store
from boulanger.race.race import RaceMeta

B = TypeVar("B", bound=Broker | Store)
# Days the daily store keeps, unless a test's mark says (@pytest.mark.retention(90)):
# the test dates lie in the past.
RETENTION = 100_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "retention(days): the daily store's retention")


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A store of each kind, started (a new backend is one more parameter here)."""
    url = "memory://"
    if request.param == "redis":
        url = request.getfixturevalue("redis_proc").url
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    elif request.param == "cluster":
        url = request.getfixturevalue("redis_cluster").url
    mark = request.node.get_closest_marker("retention")
    opened = open_store(url, retention_days=RETENTION if mark is None else mark.args[0])
    await opened.start()
    mapped = getattr(opened.broker, "mapped", None)
    if mapped is not None:  # the cluster's slot map, asked for on start
        await asyncio.wait_for(mapped.wait(), 10)
    yield opened
    await opened.close()


@pytest.fixture
def broker(backend: Store) -> Broker:
    """The log and pub/sub of each kind of store."""
    return backend.broker


@contextlib.asynccontextmanager
async def started(broker: B) -> AsyncIterator[B]:
    """``broker`` (or a whole store) started, and closed on the way out."""
    await broker.start()
    try:
        yield broker
    finally:
        await broker.close()


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait until ``check()`` is true (pub/sub delivery takes a moment)."""
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def subscribed(broker: Broker, channel: str, listener: Any) -> None:
    """Subscribe and wait until the subscription is live (a probe comes back).

    Redis confirms SUBSCRIBE asynchronously; a publish sent right after it on
    another connection can overtake it on a busy machine.
    """
    await broker.subscribe(channel, listener)
    async with asyncio.timeout(10):
        while True:
            await broker.publish(channel, "probe")
            for _ in range(10):
                await asyncio.sleep(0.02)
                if "probe" in listener.messages:
                    listener.messages.clear()
                    return


def text(event: dict[str, Any]) -> str:
    """An event's JSON as the race hub hands it to a broker (the broker does not read it)."""
    return json.dumps(event, separators=(",", ":"))


def parsed(texts: list[str]) -> list[dict[str, Any]]:
    """Logged events, as a broker reads them, parsed."""
    return [json.loads(t) for t in texts]


def meta(race_id: str, code: str = "BK1-C4-AAAAAAB") -> RaceMeta:
    """A race's meta as a test stores it (the store reads none of it but the id)."""
    return RaceMeta(race_id, code, 1_000, "h" * 64)
