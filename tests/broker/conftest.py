"""Every broker, for tests that must hold on each: in memory, on SQLite, in a real Redis,
on a real Redis Cluster."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from boulanger.broker import Broker, open_broker

B = TypeVar("B", bound=Broker)


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
async def broker(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Broker]:
    url = "memory://"
    if request.param == "redis":
        url = request.getfixturevalue("redis_proc").url
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    elif request.param == "cluster":
        url = request.getfixturevalue("redis_cluster").url
    opened = open_broker(url)
    await opened.start()
    mapped = getattr(opened, "mapped", None)
    if mapped is not None:  # the cluster's slot map, asked for on start
        await asyncio.wait_for(mapped.wait(), 10)
    yield opened
    await opened.close()


@contextlib.asynccontextmanager
async def started(broker: B) -> AsyncIterator[B]:
    """``broker`` started, and closed on the way out."""
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
