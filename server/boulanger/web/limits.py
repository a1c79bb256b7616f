"""Per-address limits: connections open at once, races created per minute; the counts
of the accounts' routes (sign-ins, sign-ups, passkey ceremonies: :mod:`.accounts`).

An address is counted by the network its owner controls: an IPv4 address
alone, an IPv6 address by its /64 (one host is usually given a whole /64,
so counting full addresses would multiply every quota by 2^64).

The counts are the store's (:class:`~boulanger.broker.Limits`), so that
they hold across every process on it: one round trip per race created and
one per connection opened (and one when it closes), never per message. A
connection holds a *lease* that its process renews while it is open: a
process that dies without closing its connections stops renewing, and their
leases expire on their own. When the store does not answer quickly, the
process falls back to its own counters (the limit then holds per process)
rather than turn everyone away.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import secrets
from dataclasses import dataclass
from datetime import date

from starlette.requests import HTTPConnection

from ..broker import Lease, Limits
from ..broker.memory import MemoryLimits
from .logs import RateLimit

log = logging.getLogger(__name__)

WINDOW_S = 60.0  # races are counted over the last minute
DAY_S = 86_400.0  # reviews are counted over the last day
STORE_PATIENCE_S = 1.0  # longer than this, and the local counters decide


def requester(conn: HTTPConnection) -> str:
    """Who asks, as the solver's queue counts them (an address, by :func:`address_key`)."""
    return f"address:{address_key(conn.client.host if conn.client else '?')}"


def address_key(host: str) -> str:
    """The unit a limit counts: an IPv4 address, or an IPv6 address's /64."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]  # not an address (a test client, a Unix socket): counted as given
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


@dataclass(frozen=True, slots=True)
class Held:
    """One open connection's place in its address's count."""

    lease: Lease
    local: bool  # counted by this process (the store did not answer in time)


class AddressLimits:
    """The limits as the server applies them: the store's counts, or this process's."""

    def __init__(
        self,
        limits: Limits,
        max_connections: int,
        races_per_minute: int,
        lease_s: float = 90.0,
        reviews_per_day: int = 100,
    ) -> None:
        self.limits = limits
        self.local = MemoryLimits()
        self.max_connections = max_connections
        self.races_per_minute = races_per_minute
        self.reviews_per_day = reviews_per_day
        # A lease lives this long unless renewed; it is renewed three times as often.
        self.lease_s = lease_s
        self._leases: dict[str, Lease] = {}  # this process's leases in the store, to renew
        self._prefix = f"{secrets.token_hex(6)}:"  # names this process's leases
        self._ids = itertools.count(1)
        self._renewer: asyncio.Task[None] | None = None
        self._warnings = RateLimit(lines=1, window=10.0)  # one line per outage, not per client

    async def start(self) -> None:
        """Start renewing this process's leases."""
        self._renewer = asyncio.create_task(self._renew_loop())

    async def close(self) -> None:
        """Stop renewing and give back every lease held."""
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        leases, self._leases = list(self._leases.values()), {}
        with contextlib.suppress(Exception):
            async with asyncio.timeout(STORE_PATIENCE_S):
                await asyncio.gather(*(self.limits.leave(lease) for lease in leases))

    def sweep(self) -> None:
        """Drop the local counters that expired (called by the server's sweeper)."""
        self.local.sweep()

    async def enter(self, host: str) -> Held | None:
        """A place for one more connection from ``host``, or None when it holds too many."""
        key = f"conns:{{{address_key(host)}}}"
        member = f"{self._prefix}{next(self._ids)}"
        try:
            async with asyncio.timeout(STORE_PATIENCE_S):
                lease = await self.limits.enter(key, self.max_connections, self.lease_s, member)
        except Exception as error:  # unreachable, slow or restarting: count locally
            self._warn(error)
            local = self.local.enter_now(key, self.max_connections, 1e9, member)
            return None if local is None else Held(local, local=True)
        if lease is None:
            return None
        self._leases[member] = lease
        return Held(lease, local=False)

    async def leave(self, held: Held) -> None:
        """Give a place back (one in the store expires by itself if this fails)."""
        if held.local:
            self.local.leave_now(held.lease)
            return
        self._leases.pop(held.lease.member, None)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(STORE_PATIENCE_S):
                await self.limits.leave(held.lease)

    async def may_create(self, host: str) -> bool:
        """Count one race created from ``host``; False when it has created too many."""
        return await self.hit(f"created:{{{address_key(host)}}}", self.races_per_minute, WINDOW_S)

    async def may_review(self, host: str) -> bool:
        """Count one review computed for ``host``; False when it had its day's share."""
        return await self.hit(f"reviews:{{{address_key(host)}}}", self.reviews_per_day, DAY_S)

    async def may_rank_new_account(self, host: str, day: date, limit: int) -> bool:
        """Count a ranked daily of ``day`` from an account made that day, from ``host``;
        False when it had ``limit`` of them."""
        key = f"new-ranked:{{{address_key(host)}}}:{day.isoformat()}"
        return await self.hit(key, limit, DAY_S)

    async def hit(self, key: str, limit: int, window_s: float) -> bool:
        """Count one hit of ``key`` in the store, atomically (every process sees it), if
        it had fewer than ``limit`` in the last ``window_s``; False (nothing counted)
        when it had. This process counts it when the store does not answer in time."""
        try:
            async with asyncio.timeout(STORE_PATIENCE_S):
                return await self.limits.hit(key, limit, window_s)
        except Exception as error:
            self._warn(error)
            return self.local.hit_now(key, limit, window_s)

    def _warn(self, error: BaseException) -> None:
        admitted, dropped = self._warnings.admit()
        if admitted:
            log.warning(
                "address limits: the store did not answer (%r); counting locally%s",
                error,
                f" ({dropped} more times before)" if dropped else "",
            )

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            await self.renew()

    async def renew(self) -> None:
        """Renew every lease this process holds in the store (one round trip per batch)."""
        leases = list(self._leases.values())
        if not leases:
            return
        try:
            async with asyncio.timeout(5 * STORE_PATIENCE_S):
                await self.limits.renew(leases, self.lease_s)
        except Exception as error:
            log.warning("address limits: leases not renewed (%s)", error)
