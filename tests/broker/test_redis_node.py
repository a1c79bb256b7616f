"""The per-node connections of the Redis brokers, on their own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from boulanger.broker import BrokerUnavailable
from boulanger.broker.redis.appender import Appends
from boulanger.broker.redis.endpoint import Endpoint
from boulanger.broker.redis.resp import encode_command


@asynccontextmanager
async def connecting() -> AsyncIterator[tuple[Appends, asyncio.Event]]:
    """Appends to a server that accepts and never answers: the connect's setup
    (a PING) stays unanswered, so every caller of ``ready`` waits on it."""
    accepted = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await reader.read()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    appends = Appends(
        Endpoint(f"redis://127.0.0.1:{port}"), [encode_command("PING")], lambda _: None
    )
    try:
        yield appends, accepted
    finally:
        await appends.close()
        server.close()
        await server.wait_closed()


async def test_a_connect_called_off_by_close_is_unavailable_to_its_waiters() -> None:
    """A shard dropped (a new slot map, a failover) while callers wait for its
    connection: they hear that the store is unavailable, as for any failed
    connect, not a cancellation they never asked for."""
    async with connecting() as (appends, accepted):
        waiters = [asyncio.create_task(appends.ready()) for _ in range(3)]
        async with asyncio.timeout(10):
            await accepted.wait()
        await appends.close()
        for waiter in waiters:
            with pytest.raises(BrokerUnavailable):
                await waiter


async def test_a_waiter_cancelled_itself_is_still_cancelled() -> None:
    """The other way round: a caller that goes away is cancelled, and the
    connect it shared with others goes on."""
    async with connecting() as (appends, accepted):
        leaving, staying = (asyncio.create_task(appends.ready()) for _ in range(2))
        async with asyncio.timeout(10):
            await accepted.wait()
        leaving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leaving
        assert not staying.done()
        await appends.close()
        with pytest.raises(BrokerUnavailable):
            await staying
