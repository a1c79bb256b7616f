"""What a player sees of a race, as the wire carries it: typed shapes of the JSON.

Each shape is a ``TypedDict``: a plain dict at run time (encoded as it is),
a checked one for the type checker, so a field added to what a player sees
is added here and found wherever it is built or read. docs/protocol.md
describes each field (``tests/race/test_protocol.py`` holds the two together).
"""

# No "from __future__ import annotations" here: a TypedDict then sees NotRequired
# (its __required_keys__ are right at run time, which the tests read).
from typing import NotRequired, TypedDict


class FoundationsWire(TypedDict):
    """How many cards each suit's foundation holds."""

    S: int
    H: int
    D: int
    C: int


class BoardWire(TypedDict):
    """A board: each column's cards from the bottom, each cell's card (None: empty)."""

    columns: list[list[str]]
    cells: list[str | None]
    foundations: FoundationsWire


class GameView(TypedDict):
    """A player's game: the board and its numbers ("Game" in docs/protocol.md)."""

    board: BoardWire
    score: int
    actions: int
    foundation_cards: int
    status: str
    can_undo: int  # the count of actions that can be undone


class ReviewWire(TypedDict):
    """A result held for review: ``status`` "held", and why."""

    status: str
    reason: str


class StandingWire(TypedDict):
    """One player's standing ("Standing" in docs/protocol.md)."""

    player_id: str
    name: str
    host: bool
    foundation_cards: int
    score: int
    actions: int
    status: str
    elapsed_ms: int
    rank: int | None
    time_ms: int | None
    review: ReviewWire | None
    # Only for an account's player: a guest's standing reads as it always did.
    signed_in: NotRequired[bool]
    rating: NotRequired[int | None]


class RematchWire(TypedDict):
    """The race's rematch, once the host opened it."""

    race_id: str
    code: str | None
    url: str


class SnapshotWire(TypedDict):
    """The whole race now: ``race`` of welcome and snapshot ("Race" in docs/protocol.md)."""

    race_id: str
    code: str | None
    cells: int
    par: int | None
    winnable: bool | None
    practice: bool
    daily: str | None
    open_boards: bool
    state: str
    host_id: str | None
    start_at: int | None
    ends_at: int | None
    now: int
    seq: int
    players: list[StandingWire]
    leaderboard: list[str]
    rematch: RematchWire | None
