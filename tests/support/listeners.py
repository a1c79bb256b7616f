"""A broker listener for tests: it keeps every text it hears, in order."""

from __future__ import annotations


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
