"""Quick races: a public queue that puts whoever is waiting into one race.

Pure logic, no I/O: the web layer (boulanger.web.quick) asks where a
newcomer goes, tells how many players have joined, and starts the race when
this module says so. A quick race takes players until it has ``players`` of
them (8) or has started; it starts by itself once ``players`` have joined,
or ``wait_ms`` (20 s) after its second player joined (counted again from
the next second player when all but one have left). A race nobody else
came to stops taking newcomers after ``expire_ms``, so that a forgotten tab
does not hold the queue.

A race is full when its players connected, and the places handed out that
are still on their way, make ``players``: a place handed out is held for
``place_ms`` (15 s) or until a player joins (who takes the oldest place
held), and one address holds at most ``places_per_address`` (2) at once; an
address asking for more is sent to the same race without holding another.
Places asked for and never used therefore cannot fill a race, nor split
the players who do come into races that never start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .events import Started
from .race import Race

DEFAULT_PLAYERS = 8
DEFAULT_WAIT_MS = 20_000
DEFAULT_EXPIRE_MS = 10 * 60_000
DEFAULT_PLACE_MS = 15_000
DEFAULT_PLACES_PER_ADDRESS = 2


@dataclass(slots=True)
class QuickRace:
    """One race of the queue, as the queue sees it."""

    race_id: str
    cells: int
    created_at: int
    handed_out: int = 0  # newcomers sent to it
    second_at: int | None = None  # when its second player was seen joined
    started: bool = False
    joined: int = 0  # its players connected, when last seen
    # Places handed out and on their way: (when, to which address), oldest first.
    places: list[tuple[int, str]] = field(default_factory=list)

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
        place_ms: int = DEFAULT_PLACE_MS,
        places_per_address: int = DEFAULT_PLACES_PER_ADDRESS,
    ) -> None:
        if not 2 <= players <= 8:
            raise ValueError(f"a quick race starts with 2 to 8 players, not {players}")
        self.players = players
        self.wait_ms = wait_ms
        self.expire_ms = expire_ms
        self.place_ms = place_ms
        self.places_per_address = places_per_address
        self.open: dict[int, QuickRace] = {}  # cells -> the race taking newcomers
        self.watched: dict[str, QuickRace] = {}  # race_id -> a race not started yet

    def waiting(self, cells: int, now: int) -> QuickRace | None:
        """The race a newcomer with this cell count joins, if one takes newcomers."""
        race = self.open.get(cells)
        if race is None:
            return None
        stale = race.second_at is None and now - race.created_at > self.expire_ms
        if race.started or self.filled(race, now) >= self.players or stale:
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

    def filled(self, race: QuickRace, now: int) -> int:
        """Its players connected and the places still on their way (the others expire)."""
        race.places = [place for place in race.places if now - place[0] < self.place_ms]
        return race.joined + len(race.places)

    def seen(self, race: QuickRace, joined: int) -> None:
        """``race`` has ``joined`` players connected now: each newcomer takes a place."""
        if joined > race.joined:
            del race.places[: joined - race.joined]
        race.joined = joined

    def hand_out(self, race: QuickRace, address: str = "", now: int = 0) -> bool:
        """A newcomer from ``address`` is sent to ``race``: a place is held for them
        unless their address holds its share already (False). A full race takes no more."""
        race.handed_out += 1
        held = sum(1 for _, holder in race.places if holder == address)
        reserved = held < self.places_per_address
        if reserved:
            race.places.append((now, address))
        if self.filled(race, now) >= self.players and self.open.get(race.cells) is race:
            del self.open[race.cells]
        return reserved

    def should_start(self, race: QuickRace, joined: int, now: int) -> bool:
        """Whether ``race``, with ``joined`` players connected now, starts now."""
        self.seen(race, joined)
        if race.started:
            return False
        if joined >= 2 and race.second_at is None:
            race.second_at = now
        elif joined < 2:
            race.second_at = None  # back to one (the other left): wait for a second again
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
