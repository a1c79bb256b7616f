"""Per-address limits: connections open at once, races created per minute.

An address is counted by the network its owner controls: an IPv4 address
alone, an IPv6 address by its /64 (one host is usually given a whole /64,
so counting full addresses would multiply every quota by 2^64).

With the memory broker the counters live in the process and expire. With the
Redis broker they live in Redis, so that the limits hold across replicas:
one round trip per race created and one per connection opened (and one when
it closes), never per message. A connection holds a *lease* in Redis that
its process renews while it is open: a process that dies without closing its
connections stops renewing, and their leases expire on their own. When Redis
does not answer quickly, the process falls back to its own counters (the
limit then holds per process) rather than turn everyone away.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .logs import RateLimit

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger(__name__)

WINDOW_S = 60.0  # races are counted over the last minute
REDIS_PATIENCE_S = 1.0  # longer than this, and the local counters decide


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


@dataclass(slots=True)
class Lease:
    """One open connection's place in its address's count."""

    key: str
    member: str
    local: bool  # counted by this process (Redis did not answer in time)


class MemoryLimits:
    """The counters of one process; every entry goes once it no longer counts."""

    def __init__(
        self,
        max_connections: int,
        races_per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_connections = max_connections
        self.races_per_minute = races_per_minute
        self.clock = clock
        self.open: dict[str, int] = {}
        self.created: dict[str, deque[float]] = {}

    def enter(self, key: str) -> bool:
        """Count a connection from ``key``; False when it has as many as allowed."""
        count = self.open.get(key, 0)
        if count >= self.max_connections:
            return False
        self.open[key] = count + 1
        return True

    def leave(self, key: str) -> None:
        """A connection from ``key`` ended."""
        count = self.open.get(key, 0) - 1
        if count > 0:
            self.open[key] = count
        else:
            self.open.pop(key, None)

    def may_create(self, key: str) -> bool:
        """Whether ``key`` may create a race now (a sliding minute's budget); counts it if so."""
        now = self.clock()
        stamps = self.created.get(key)
        if stamps is None:
            stamps = self.created[key] = deque()
        while stamps and stamps[0] <= now - WINDOW_S:
            stamps.popleft()
        if len(stamps) >= self.races_per_minute:
            return False
        stamps.append(now)
        return True

    def expire(self) -> None:
        """Forget the addresses that created no race within the window."""
        cutoff = self.clock() - WINDOW_S
        # A new dict rather than deletions: a dict never shrinks its table.
        self.created = {k: s for k, s in self.created.items() if s and s[-1] > cutoff}


class AddressLimits:
    """The limits as the server applies them; counters in Redis or in memory."""

    def __init__(
        self, broker: Broker, max_connections: int, races_per_minute: int, lease_s: float = 90.0
    ) -> None:
        self.local = MemoryLimits(max_connections, races_per_minute)
        # A connection's lease in Redis lives this long unless renewed; it is
        # renewed three times as often.
        self.lease_ms = int(lease_s * 1000)
        self.redis: Any = broker.shared_client()
        self._leases: dict[str, Lease] = {}  # this process's leases in Redis, to renew
        self._prefix = f"{secrets.token_hex(6)}:"  # names this process's leases
        self._ids = itertools.count(1)
        self._renewer: asyncio.Task[None] | None = None
        self._scripts: dict[str, Any] = {}
        self._warnings = RateLimit(lines=1, window=10.0)  # one line per outage, not per client
        if self.redis is not None:
            for name, body in _SCRIPTS.items():
                self._scripts[name] = self.redis.register_script(body)

    @property
    def max_connections(self) -> int:
        return self.local.max_connections

    async def start(self) -> None:
        """Start renewing this process's leases (shared limits only)."""
        if self.redis is not None:
            self._renewer = asyncio.create_task(self._renew_loop())

    async def close(self) -> None:
        """Stop renewing and give back every lease held."""
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        leases, self._leases = list(self._leases.values()), {}
        if leases and self.redis is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(REDIS_PATIENCE_S):
                    pipe = self.redis.pipeline(transaction=False)
                    for lease in leases:
                        pipe.zrem(lease.key, lease.member)
                    await pipe.execute()

    def sweep(self) -> None:
        """Drop the local counters that expired (called by the server's sweeper)."""
        self.local.expire()

    async def enter(self, host: str) -> Lease | None:
        """A lease for one more connection from ``host``, or None when it holds too many."""
        key = address_key(host)
        if self.redis is not None:
            member = f"{self._prefix}{next(self._ids)}"
            redis_key = f"bk:conns:{{{key}}}"
            admitted = await self._ask(
                "enter", [redis_key], [self.local.max_connections, self.lease_ms, member]
            )
            if admitted is not None:
                if not admitted:
                    return None
                lease = Lease(redis_key, member, local=False)
                self._leases[member] = lease
                return lease
        if not self.local.enter(key):
            return None
        return Lease(key, "", local=True)

    async def leave(self, lease: Lease) -> None:
        """Give a lease back (a shared one expires by itself if this fails)."""
        if lease.local:
            self.local.leave(lease.key)
            return
        self._leases.pop(lease.member, None)
        # Not answered: the lease expires by itself.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(REDIS_PATIENCE_S):
                await self.redis.zrem(lease.key, lease.member)

    async def may_create(self, host: str) -> bool:
        """Count one race created from ``host``; False when it has created too many."""
        key = address_key(host)
        if self.redis is not None:
            member = f"{self._prefix}{next(self._ids)}"
            allowed = await self._ask(
                "create",
                [f"bk:created:{{{key}}}"],
                [self.local.races_per_minute, int(WINDOW_S * 1000), member],
            )
            if allowed is not None:
                return bool(allowed)
        return self.local.may_create(key)

    async def _ask(self, script: str, keys: list[str], args: list[Any]) -> int | None:
        """Run one of the scripts: its answer, or None when Redis did not answer in time."""
        try:
            async with asyncio.timeout(REDIS_PATIENCE_S):
                return int(await self._scripts[script](keys=keys, args=args))
        except Exception as error:  # unreachable, slow or restarting: count locally
            admitted, dropped = self._warnings.admit()
            if admitted:
                log.warning(
                    "address limits: Redis did not answer (%r); counting locally%s",
                    error,
                    f" ({dropped} more times before)" if dropped else "",
                )
            return None

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            leases = list(self._leases.values())
            if not leases:
                continue
            try:
                async with asyncio.timeout(5 * REDIS_PATIENCE_S):
                    pipe = self.redis.pipeline(transaction=False)
                    for lease in leases:
                        self._scripts["renew"](
                            keys=[lease.key], args=[self.lease_ms, lease.member], client=pipe
                        )
                    await pipe.execute()
            except Exception as error:
                log.warning("address limits: leases not renewed (%s)", error)


# The time is Redis's own (TIME), so that the replicas' clocks do not matter.
_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

_SCRIPTS = {
    # KEYS: the address's leases (member -> expiry). ARGV: limit, lease ms, member.
    "enter": _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
""",
    # KEYS: the address's leases. ARGV: lease ms, member (renewed only if still there).
    "renew": _NOW
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
""",
    # KEYS: the address's races (member -> when). ARGV: limit, window ms, member.
    "create": _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
""",
}
