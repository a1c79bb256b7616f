"""The condition under which an event decided in one process joins a race's log,
and the rule that says whether it holds: written once, here, for every store."""

from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass(slots=True)
class LogState:
    """What an append's condition is checked against: a race's log as a store keeps it.

    The memory and SQLite stores keep one per race and call :meth:`append`;
    Redis runs the same rule in its append script, atomically (its tests hold
    it to this one, ``tests/broker/test_brokers.py``).
    """

    length: int = 0
    over: bool = False
    # Each player's number of events (actions, resigns, judgements).
    counts: dict[str, int] = field(default_factory=dict)

    def admits(self, condition: Condition) -> bool:
        """Whether an event appended under ``condition`` may join the log now."""
        if condition.log_length is not None and self.length != condition.log_length:
            return False
        player = condition.player_id
        return player is None or (
            not self.over and self.counts.get(player, 0) == condition.player_events
        )

    def append(self, condition: Condition) -> int:
        """Count an event appended under ``condition``: its seq, or 0 when it is refused
        (nothing changes then)."""
        if not self.admits(condition):
            return 0
        self.length += 1
        player = condition.player_id
        if player is not None:
            self.counts[player] = condition.player_events + 1
        if condition.ends_race:
            self.over = True
        return self.length
