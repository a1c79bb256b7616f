"""What a client shows of a race, built from the messages it is sent, as docs/protocol.md
says a client keeps it ("Events, sequence numbers and resync", "Who is sent a progress")."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

EVENT_TYPES = {"player_joined", "race_starting", "progress", "race_over", "rematch"}


def seen(standing: dict[str, Any]) -> tuple[Any, ...]:
    """What the other clients show of a player's standing: all but ``actions`` and ``elapsed_ms``."""
    return (
        standing["foundation_cards"],
        standing["score"],
        standing["status"],
        standing["rank"],
        standing["time_ms"],
        standing["review"],
    )


class Screen:
    """A client's picture of a race: each player's standing as shown, the order, the state.

    ``receive`` takes every message in the order the connection got it; an
    event beyond a gap (its ``prev_seq`` above the last ``seq`` seen) is not
    applied but counted in ``gaps``: the client must resync.
    """

    def __init__(self) -> None:
        self.players: dict[str, tuple[Any, ...]] = {}
        self.order: list[str] = []
        self.state: str | None = None
        self.last_seq: int | None = None
        self.gaps = 0
        self.events: list[dict[str, Any]] = []  # the events applied, in order

    def take_race(self, race: dict[str, Any]) -> None:
        """The ``race`` of a ``welcome`` or ``snapshot``: the whole picture at once."""
        self.players = {s["player_id"]: seen(s) for s in race["players"]}
        self.order = list(race["leaderboard"])
        self.state = race["state"]
        self.last_seq = race["seq"]

    def receive(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind in ("welcome", "snapshot"):
            self.take_race(message["race"])
            return
        if kind not in EVENT_TYPES:
            return
        if self.last_seq is not None:
            if message["seq"] <= self.last_seq:
                return  # seen already (a resync's answer may repeat one)
            if message["prev_seq"] > self.last_seq:
                self.gaps += 1
                return
        self.last_seq = message["seq"]
        self.state = message["race_state"]
        self.events.append(message)
        if kind in ("player_joined", "progress"):
            self.players[message["player"]["player_id"]] = seen(message["player"])
        if kind == "progress":
            self.order = list(message["leaderboard"])
        elif kind == "player_joined":
            self.order.append(message["player"]["player_id"])
        elif kind == "race_over":
            self.players.update({s["player_id"]: seen(s) for s in message["standings"]})
            self.order = [s["player_id"] for s in message["standings"]]

    def picture(self) -> tuple[dict[str, tuple[Any, ...]], list[str], str | None]:
        """What the client shows: every player's standing as seen, the order, the state."""
        return dict(self.players), list(self.order), self.state


def in_order(events: list[dict[str, Any]]) -> bool:
    """Whether a connection's events came in order with none sent to everyone missed:
    each after the one before, and naming (``prev_seq``) none beyond it."""
    return all(
        later["seq"] > earlier["seq"] and later["prev_seq"] <= earlier["seq"]
        for earlier, later in itertools.pairwise(events)
    )


async def barrier(racer: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every message the server sent ``racer`` before this call (a pong leaves after
    everything sent before its ping, held ones included), and the pong, in order.
    For one process: another's events come by pub/sub, on their own time."""
    await racer.send(type="ping", t=1)
    received: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while not received or received[-1]["type"] != "pong":
            received.append(await racer.inbox.get())
            if received[-1]["type"] == "_closed":
                raise ConnectionError(f"connection closed with {received[-1]['code']}")
    return received
