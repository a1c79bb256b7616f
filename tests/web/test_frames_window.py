"""Frames that may wait wait a window of their socket's own, from the first one held:
what comes meanwhile leaves in the same write (web.frames.Ticker). No server: a
DirectSocket over a transport that records its writes."""

from __future__ import annotations

import asyncio

from websockets.protocol import State

from boulanger.web.frames import DirectSocket, Ticker


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


class _Open:
    state = State.OPEN
    close_sent = False


def _socket(ticker: Ticker) -> tuple[DirectSocket, _Transport]:
    transport = _Transport()
    return DirectSocket(_Open(), _Open(), transport, ticker), transport  # type: ignore[arg-type]


async def _until_written(transport: _Transport) -> float:
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(10):
        while not transport.writes:
            await asyncio.sleep(0.005)
    return loop.time()


async def test_each_socket_waits_its_own_window_from_its_first_frame_held() -> None:
    window = 1.0
    ticker = Ticker(window)
    loop = asyncio.get_running_loop()
    first, first_writes = _socket(ticker)
    second, second_writes = _socket(ticker)
    start = loop.time()
    first.write(b"a1", soon=False)
    await asyncio.sleep(window / 2)
    held_at = loop.time()
    second.write(b"b1", soon=False)
    first.write(b"a2", soon=False)  # within the first socket's window: the same write
    written = await _until_written(first_writes)
    assert written - start >= window * (1 - 1 / Ticker.SLOTS)
    on_time = written - start < window * (1 + 1 / Ticker.SLOTS)  # (a stalled machine is late)
    if on_time:
        # The second socket's window began half a window later: it is not over.
        assert first_writes.writes == [b"a1a2"] and second_writes.writes == []
    second_at = await _until_written(second_writes)
    assert second_at - held_at >= window * (1 - 1 / Ticker.SLOTS)
    assert second_writes.writes == [b"b1"]


async def test_what_waits_leaves_with_a_frame_that_may_not_wait_and_then_within_a_window() -> None:
    window = 1.0
    ticker = Ticker(window)
    loop = asyncio.get_running_loop()
    socket, transport = _socket(ticker)
    socket.write(b"progress", soon=False)
    socket.write(b"ack")  # the player's own answer: what waits goes with it, now
    await asyncio.sleep(0)
    assert transport.writes == [b"progressack"]
    await asyncio.sleep(window / 2)
    held_at = loop.time()
    socket.write(b"later", soon=False)
    await asyncio.sleep(0)
    assert transport.writes == [b"progressack"]  # it waits
    async with asyncio.timeout(10):
        while len(transport.writes) < 2:
            await asyncio.sleep(0.005)
    waited = loop.time() - held_at
    # At the end of the window the ack cut short (the ticker's first entry), or its own.
    assert waited >= window / 2 - window / Ticker.SLOTS
    assert transport.writes == [b"progressack", b"later"]
