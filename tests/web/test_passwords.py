"""The password pool: a slot stays taken until its thread is done, even when the
request that took it is gone; waiters wait a moment, then are refused."""

from __future__ import annotations

import asyncio
import threading

import pytest

from boulanger.race.errors import Refused
from boulanger.web.passwords import PasswordWork


async def test_a_cancelled_request_holds_its_slot_until_its_hash_is_done() -> None:
    work = PasswordWork(slots=1, wait_s=0.2, waiting_max=4)
    go = threading.Event()
    try:
        first = asyncio.create_task(work.run(lambda: go.wait(30)))
        async with asyncio.timeout(10):
            while work.busy < 1:
                await asyncio.sleep(0.01)
        first.cancel()  # the client left: the thread still hashes
        with pytest.raises(asyncio.CancelledError):
            await first
        assert work.busy == 1
        with pytest.raises(Refused) as refused:
            await work.run(lambda: True)  # waits 0.2 s for the slot, in vain
        assert refused.value.code == "try_again"
        go.set()
        async with asyncio.timeout(10):
            while work.busy:
                await asyncio.sleep(0.01)
        assert await work.run(lambda: "checked") == "checked"
        assert work.refused == 1
    finally:
        go.set()
        work.close()


async def test_past_the_waiting_room_a_request_is_refused_at_once() -> None:
    work = PasswordWork(slots=1, wait_s=30, waiting_max=1)
    go = threading.Event()
    try:
        held = asyncio.create_task(work.run(lambda: go.wait(30)))
        async with asyncio.timeout(10):
            while work.busy < 1:
                await asyncio.sleep(0.01)
        waiting = asyncio.create_task(work.run(lambda: "second"))
        async with asyncio.timeout(10):
            while work.waiting < 1:
                await asyncio.sleep(0.01)
        with pytest.raises(Refused):  # no wait at all: the one place is taken
            await work.run(lambda: "third")
        go.set()
        assert await held is True
        assert await waiting == "second"
    finally:
        go.set()
        work.close()
