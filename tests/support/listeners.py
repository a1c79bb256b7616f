"""A broker listener for tests: it keeps every text it hears, in order."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

_marks = itertools.count(1)


class Collector:
    """Every text of the channels it listens to, as the broker delivers them, and how
    many times the broker said it may have missed some (``on_resync``)."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.resyncs = 0

    def on_message(self, data: str) -> None:
        self.messages.append(data)

    def on_resync(self) -> None:
        self.resyncs += 1


async def barrier(
    broker: Any, channel: str, listener: Collector, timeout: float = 10.0
) -> list[str]:
    """What ``listener`` heard before a marker, published on ``channel`` now, came back to it.

    Whatever was published on the channel before the marker reached every
    listener of it before the marker did: an absence checked on these (or on
    another listener of the channel) is proven, not waited for.
    """
    marker = f"barrier-{next(_marks)}"
    await broker.publish(channel, marker)
    async with asyncio.timeout(timeout):
        while marker not in listener.messages:
            await asyncio.sleep(0.01)
    return listener.messages[: listener.messages.index(marker)]
