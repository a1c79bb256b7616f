"""The store's limits on every store: hits in a window, leases that expire unless renewed,
and the web's address limits on top of them (their leases renewed while held)."""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from boulanger.broker import Lease, Store, open_store
from boulanger.broker.redis import POOL_MAX
from boulanger.web.limits import AddressLimits
from support.servers import RedisProcess

from .conftest import started


async def test_hits_are_counted_up_to_the_limit_in_the_window(backend: Store) -> None:
    limits = backend.limits
    key = f"t:{{hits-{time.monotonic_ns()}}}"
    assert [await limits.hit(key, 3, 60) for _ in range(5)] == [True, True, True, False, False]
    assert await limits.hit(f"{key}x", 3, 60)  # another key counts apart


async def test_hits_leave_the_window_as_it_slides(backend: Store) -> None:
    limits = backend.limits
    key = f"t:{{slide-{time.monotonic_ns()}}}"
    assert await limits.hit(key, 1, 0.2)
    assert not await limits.hit(key, 1, 0.2)
    async with asyncio.timeout(5):  # the first hit leaves the window within 0.2 s
        while not await limits.hit(key, 1, 0.2):
            await asyncio.sleep(0.02)


async def test_leases_are_held_up_to_the_limit_and_given_back(backend: Store) -> None:
    limits = backend.limits
    key = f"t:{{leases-{time.monotonic_ns()}}}"
    first = await limits.enter(key, 2, 60, "a")
    assert first == Lease(key, "a")
    assert await limits.enter(key, 2, 60, "b") is not None
    assert await limits.enter(key, 2, 60, "c") is None
    await limits.leave(first)
    assert await limits.enter(key, 2, 60, "c") is not None
    await limits.renew([first], 60)  # given back: renewing does not bring it back
    assert await limits.enter(key, 2, 60, "d") is None


async def test_a_lease_expires_unless_renewed(backend: Store) -> None:
    limits = backend.limits
    lease = 0.6

    async def kept_by_renewals() -> str | None:
        """A lease renewed for over three of its lengths, refusing another all along;
        None when a renewal came later than a lease (a loaded machine): no verdict."""
        key = f"t:{{expiry-{time.monotonic_ns()}}}"
        since = time.monotonic()  # the lease holds a lease's length from here
        held = await limits.enter(key, 1, lease, "kept")
        assert held is not None
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            renewed = time.monotonic()
            await limits.renew([held], lease)
            refused = await limits.enter(key, 1, lease, "other") is None
            if time.monotonic() - since >= lease:
                return None  # it may have lapsed before this renewal reached the store
            since = renewed
            assert refused  # within a lease of its renewal, it is held
            await asyncio.sleep(0.05)
        return key

    for _ in range(5):
        key = await kept_by_renewals()
        if key is not None:
            break
    assert key is not None, "every renewal round ran later than a lease"
    # No longer renewed (its process died, say): it expires by itself.
    async with asyncio.timeout(5):
        while await limits.enter(key, 1, lease, "other") is None:
            await asyncio.sleep(0.02)


async def test_a_process_s_connections_keep_counting_while_open(backend: Store) -> None:
    """The address limits renew their leases (on Redis the renewal was once queued and
    never awaited: a connection older than a lease stopped counting)."""
    addresses = AddressLimits(backend.limits, max_connections=1, races_per_minute=5, lease_s=0.3)
    host = f"192.0.2.{time.monotonic_ns() % 250}"
    await addresses.start()
    try:
        held = await addresses.enter(host)
        assert held is not None and not held.local
        end = time.monotonic() + 1.2  # four lease lengths, renewed every 0.1 s
        while time.monotonic() < end:
            assert await addresses.enter(host) is None
            await asyncio.sleep(0.05)
        await addresses.leave(held)
        assert await addresses.enter(host) is not None
    finally:
        await addresses.close()


async def test_a_burst_of_commands_opens_no_more_connections_than_the_pool_holds(
    own_redis: RedisProcess,
) -> None:
    """redis-py's pool is capped: a burst waits for connections instead of opening one
    per command (which stayed open, idle, after the burst)."""
    async with started(open_store(own_redis.url)) as store:
        await asyncio.gather(
            *(store.limits.hit(f"t:{{burst-{n % 50}}}", 1000, 60) for n in range(400))
        )
        await asyncio.gather(*(store.kv.get(f"bk:t:{{b{n}}}") for n in range(400)))
        probe = aioredis.Redis.from_url(own_redis.url)
        try:
            clients = (await probe.info("clients"))["connected_clients"]
        finally:
            await probe.aclose()
    # The pool's, the appender's and the subscriber's connections, and the probe's.
    assert clients <= POOL_MAX + 3
