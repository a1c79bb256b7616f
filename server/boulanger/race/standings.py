"""One player's standing and the leaderboard order."""

from __future__ import annotations

from dataclasses import dataclass

from .review import LineSignal, review_wire
from .states import PlayerStatus
from .wire import StandingWire


@dataclass(slots=True)
class Standing:
    """One player's place in a race, as the wire shows it (``to_wire``)."""

    player_id: str
    name: str
    host: bool
    foundation_cards: int
    score: int
    actions: int
    status: PlayerStatus
    elapsed_ms: int
    rank: int | None
    time_ms: int | None
    # Why the result is held for review (boulanger.race.review), or None.
    review: str | None = None
    # Tie-break of last resort: who joined first.
    order: int = 0
    # Signed in (an account's player), and then their rating when they joined.
    signed_in: bool = False
    rating: int | None = None
    # A win's measured line, and why it holds the win: for moderators, never on the wire.
    line: LineSignal | None = None
    line_held: str | None = None

    def seen(self) -> tuple[object, ...]:
        """What the race's other clients show of it: all but ``actions`` and ``elapsed_ms``
        (which a ``progress`` of this player's next change carries up to date)."""
        return (
            self.foundation_cards,
            self.score,
            self.status,
            self.rank,
            self.time_ms,
            self.review,
        )

    def to_wire(self) -> StandingWire:
        """The standing as the race's messages carry it (docs/protocol.md)."""
        wire: StandingWire = {
            "player_id": self.player_id,
            "name": self.name,
            "host": self.host,
            "foundation_cards": self.foundation_cards,
            "score": self.score,
            "actions": self.actions,
            "status": self.status,
            "elapsed_ms": self.elapsed_ms,
            "rank": self.rank,
            "time_ms": self.time_ms,
            "review": review_wire(self.review),
        }
        if self.signed_in:  # only then: a guest's standing reads as it always did
            wire["signed_in"] = True
            wire["rating"] = self.rating
        return wire


def leaderboard_key(
    time_ms: int | None, foundation_cards: int, score: int, actions: int, order: int
) -> tuple[int, int, int, int, int]:
    """Winners by time; then cards on foundations, score (more first), actions (fewer first)."""
    if time_ms is not None:
        return (0, time_ms, 0, 0, order)
    return (1, -foundation_cards, -score, actions, order)


def sort_key(standing: Standing) -> tuple[int, int, int, int, int]:
    """A standing's place in the race's leaderboard (see :func:`leaderboard_key`)."""
    return leaderboard_key(
        standing.time_ms,
        standing.foundation_cards,
        standing.score,
        standing.actions,
        standing.order,
    )


def rank(standings: list[Standing], final: bool = False) -> list[Standing]:
    """Sort into leaderboard order and number the ranks: winners only, or everyone when final."""
    ordered = sorted(standings, key=sort_key)
    for position, standing in enumerate(ordered, start=1):
        if final or standing.time_ms is not None:
            standing.rank = position
    return ordered
