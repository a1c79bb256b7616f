"""Quick races: a public queue that puts whoever is waiting into one race.

Pure logic, no I/O: the web layer (boulanger.web.quick) asks where a
newcomer goes, tells how many players have joined, and starts the race when
this module says so. A quick race takes players until it has ``players`` of
them (8) or has started; it starts by itself once ``players`` have joined,
or ``wait_ms`` (20 s) after its second player joined. A race nobody else
came to stops taking newcomers after ``expire_ms``, so that a forgotten tab
does not hold the queue.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import Started
from .race import Race

DEFAULT_PLAYERS = 8
DEFAULT_WAIT_MS = 20_000
DEFAULT_EXPIRE_MS = 10 * 60_000


@dataclass(slots=True)
class QuickRace:
    """One race of the queue, as the queue sees it."""

    race_id: str
    cells: int
    created_at: int
    handed_out: int = 0  # newcomers sent to it
    second_at: int | None = None  # when its second player was seen joined
    started: bool = False

    def start_by(self, wait_ms: int) -> int | None:
        """When it starts at the latest (None until a second player joined)."""
        return None if self.second_at is None else self.second_at + wait_ms


class QuickQueue:
    """The open quick race of each cell count, and when each race starts."""

    def __init__(
        self,
        players: int = DEFAULT_PLAYERS,
        wait_ms: int = DEFAULT_WAIT_MS,
        expire_ms: int = DEFAULT_EXPIRE_MS,
    ) -> None:
        if not 2 <= players <= 8:
            raise ValueError(f"a quick race starts with 2 to 8 players, not {players}")
        self.players = players
        self.wait_ms = wait_ms
        self.expire_ms = expire_ms
        self.open: dict[int, QuickRace] = {}  # cells -> the race taking newcomers
        self.watched: dict[str, QuickRace] = {}  # race_id -> a race not started yet

    def waiting(self, cells: int, now: int) -> QuickRace | None:
        """The race a newcomer with this cell count joins, if one takes newcomers."""
        race = self.open.get(cells)
        if race is None:
            return None
        stale = race.second_at is None and now - race.created_at > self.expire_ms
        if race.started or race.handed_out >= self.players or stale:
            del self.open[cells]
            if stale:
                self.watched.pop(race.race_id, None)
            return None
        return race

    def add(self, race_id: str, cells: int, now: int) -> QuickRace:
        """A new race for this cell count (the caller created it)."""
        race = QuickRace(race_id=race_id, cells=cells, created_at=now)
        self.open[cells] = race
        self.watched[race_id] = race
        return race

    def hand_out(self, race: QuickRace) -> None:
        """A newcomer is sent to ``race``; a full race takes no more."""
        race.handed_out += 1
        if race.handed_out >= self.players and self.open.get(race.cells) is race:
            del self.open[race.cells]

    def should_start(self, race: QuickRace, joined: int, now: int) -> bool:
        """Whether ``race``, with ``joined`` players in it now, starts now."""
        if race.started:
            return False
        if joined >= 2 and race.second_at is None:
            race.second_at = now
        due = race.second_at is not None and now >= race.second_at + self.wait_ms
        return joined >= self.players or due

    def started(self, race: QuickRace) -> None:
        """``race`` has started (or can no longer start): it leaves the queue."""
        race.started = True
        self.watched.pop(race.race_id, None)
        if self.open.get(race.cells) is race:
            del self.open[race.cells]


def start_event(race: Race, now: int) -> Started | None:
    """The start event of a quick race, which has no host: the queue starts it."""
    if race.start_at is not None or race.over_reason is not None:
        return None
    return Started(now, now + race.meta.countdown_ms)
