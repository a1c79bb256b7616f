"""The memory store's limits: this process's counters (a process of its own is all it has)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from ..contracts import Lease, Limits

SWEEP_INTERVAL_S = 30.0  # between drops of the keys that no longer count


class MemoryLimits(Limits):
    """Hits and leases in dictionaries; every key goes once nothing of it counts."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.hits: dict[str, deque[float]] = {}  # key -> when each hit was counted
        self.leases: dict[str, dict[str, float]] = {}  # key -> member -> expires at
        self._next_sweep = clock() + SWEEP_INTERVAL_S
        self._longest_window = 0.0  # a key's hits count this long, at most

    async def hit(self, key: str, limit: int, window_s: float) -> bool:
        return self.hit_now(key, limit, window_s)

    def hit_now(self, key: str, limit: int, window_s: float) -> bool:
        """:meth:`hit`, without a turn of the event loop (no await inside)."""
        now = self._sweep_if_due()
        self._longest_window = max(self._longest_window, window_s)
        stamps = self.hits.get(key)
        if stamps is None:
            stamps = self.hits[key] = deque()
        while stamps and stamps[0] <= now - window_s:
            stamps.popleft()
        if len(stamps) >= limit:
            return False
        stamps.append(now)
        return True

    async def enter(self, key: str, limit: int, lease_s: float, member: str) -> Lease | None:
        return self.enter_now(key, limit, lease_s, member)

    def enter_now(self, key: str, limit: int, lease_s: float, member: str) -> Lease | None:
        """:meth:`enter`, without a turn of the event loop."""
        now = self._sweep_if_due()
        held = self.leases.get(key)
        if held is None:
            held = self.leases[key] = {}
        for gone in [m for m, expires in held.items() if expires <= now]:
            del held[gone]
        if len(held) >= limit:
            return None
        held[member] = now + lease_s
        return Lease(key, member)

    async def leave(self, lease: Lease) -> None:
        self.leave_now(lease)

    def leave_now(self, lease: Lease) -> None:
        """:meth:`leave`, without a turn of the event loop."""
        held = self.leases.get(lease.key)
        if held is not None:
            held.pop(lease.member, None)
            if not held:
                del self.leases[lease.key]

    async def renew(self, leases: list[Lease], lease_s: float) -> None:
        expires = self.clock() + lease_s
        for lease in leases:
            held = self.leases.get(lease.key)
            if held is not None and lease.member in held:
                held[lease.member] = expires

    def _sweep_if_due(self) -> float:
        """The time now; every so often, first drop the keys that count nothing."""
        now = self.clock()
        if now >= self._next_sweep:
            self.sweep(now)
        return now

    def sweep(self, now: float | None = None) -> None:
        """Forget the keys with no hit in the longest window asked for, and no lease held."""
        now = self.clock() if now is None else now
        self._next_sweep = now + SWEEP_INTERVAL_S
        cutoff = now - self._longest_window
        # New dicts rather than deletions: a dict never shrinks its table.
        self.hits = {k: s for k, s in self.hits.items() if s and s[-1] > cutoff}
        self.leases = {
            k: live
            for k, held in self.leases.items()
            if (live := {m: e for m, e in held.items() if e > now})
        }
