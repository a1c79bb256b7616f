"""The condition under which an event decided in one process joins a race's log."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Condition:
    """When an append may go through (the optimistic check between processes).

    A race-wide event (a join, the start, the end) needs the whole log as the
    deciding process saw it: ``log_length``. A player's action needs only that
    player's own events as seen (``player_id`` and ``player_events``) and a
    race not yet over, so players on different processes never hold each
    other up. ``ends_race`` marks the event after which no player event is
    accepted.
    """

    log_length: int | None = None
    player_id: str | None = None
    player_events: int = 0
    ends_race: bool = False
