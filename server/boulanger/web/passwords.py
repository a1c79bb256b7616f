"""Password work (argon2id) on a bounded pool of threads, off the event loop.

Each hash or check takes ``argon2_memory_kib`` (64 MiB) and tens of
milliseconds of a core, so a process runs at most ``argon2_slots`` at once
(its memory is bounded by slots x 64 MiB, and the event loop keeps the other
cores), in threads of its own rather than the loop's default pool. A request
that finds every slot busy waits at most ``argon2_wait_s``; with
``argon2_waiting_max`` requests waiting already, or once its wait is over, it
is refused ``try_again`` (answered 429 by the accounts' routes): nothing
queues without bound, and nothing is hashed for a client that has given up
long ago.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ..race.errors import Refused

T = TypeVar("T")


class PasswordWork:
    """At most ``slots`` hashes in flight; at most ``waiting_max`` requests waiting for one."""

    def __init__(self, slots: int, wait_s: float, waiting_max: int) -> None:
        self.slots = max(1, slots)
        self.wait_s = wait_s
        self.waiting_max = waiting_max
        self._executor = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="argon2")
        self._free = asyncio.Semaphore(self.slots)
        self.waiting = 0
        self.busy = 0  # hashes running or handed to a thread (for tests and benches)
        self.refused = 0  # requests turned away, since the start

    def _busy(self) -> Refused:
        self.refused += 1
        return Refused("try_again", "the server is checking many passwords; try again shortly")

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in one of the pool's threads, once a slot is free; :class:`Refused`
        ``try_again`` when none frees up in time."""
        if self._free.locked():
            if self.waiting >= self.waiting_max:
                raise self._busy()
            self.waiting += 1
            try:
                async with asyncio.timeout(self.wait_s):
                    await self._free.acquire()
            except TimeoutError:
                raise self._busy() from None
            finally:
                self.waiting -= 1
        else:
            await self._free.acquire()
        loop = asyncio.get_running_loop()
        self.busy += 1

        def done(_: Future[T]) -> None:
            # The slot is free when the thread is done, even if the request was cancelled.
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to free
                loop.call_soon_threadsafe(self._release)

        try:
            future = self._executor.submit(work)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(done)
        return await asyncio.wrap_future(future)

    def _release(self) -> None:
        self.busy -= 1
        self._free.release()

    def close(self) -> None:
        """Stop the threads (the work in flight ends first)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
