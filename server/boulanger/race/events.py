"""The events of a race's log: one frozen type per kind of change.

A process decides on a request against its replica (``Race.decide_*``) and
gets one of these; the log numbers it (its ``seq``) and every process applies
it in that order (``Race.apply``). An event holds only what was decided, so
that applying it needs no second look at the request. Their JSON is
:mod:`boulanger.codec`'s business; ``kind`` is the name the log gives each type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..engine import Move
from .review import LineSignal
from .states import EndReason, PlayerStatus


@dataclass(frozen=True, slots=True)
class Joined:
    """A new player joined (a returning player needs no event)."""

    kind: ClassVar[str] = "join"
    at: int
    player_id: str
    name: str
    host: bool
    token_hash: str
    # A signed-in player's (an account's): their rating for the race's cell count
    # when they joined. Logged only for them, so a guest's join reads as before.
    signed_in: bool = False
    rating: int | None = None


@dataclass(frozen=True, slots=True)
class Left:
    """A player left the lobby before the start: they are no longer in the race."""

    kind: ClassVar[str] = "leave"
    at: int
    player_id: str


@dataclass(frozen=True, slots=True)
class Started:
    """The race starts at ``start_at`` (after the countdown)."""

    kind: ClassVar[str] = "start"
    at: int
    start_at: int


@dataclass(frozen=True, slots=True)
class Acted:
    """A player's action: ``move`` played, or (``move`` None) their last move taken back."""

    kind: ClassVar[str] = "action"
    at: int
    player_id: str
    action_id: str
    move: Move | None


@dataclass(frozen=True, slots=True)
class Resigned:
    """A player resigned."""

    kind: ClassVar[str] = "resign"
    at: int
    player_id: str
    action_id: str


@dataclass(frozen=True, slots=True)
class Judged:
    """A player's position judged after a pause: ``status`` is their game's (stuck,
    dead end, or playing again).

    An action's event says only whether the game is won: the search that
    tells a dead end runs once the player has paused, not on every action
    (see ``RaceHub.judge_later``), and its verdict is logged so that no
    replica searches again.
    """

    kind: ClassVar[str] = "status"
    at: int
    player_id: str
    status: PlayerStatus


@dataclass(frozen=True, slots=True)
class LineMeasured:
    """A won game's line, measured by the solver once the win was final (``line``
    None: it could not be measured). Logged so that every replica judges the
    same figures (``race.review.review_line``) and no replica searches again.
    """

    kind: ClassVar[str] = "line"
    at: int
    player_id: str
    line: LineSignal | None


@dataclass(frozen=True, slots=True)
class Ended:
    """The race is over, for ``reason``."""

    kind: ClassVar[str] = "over"
    at: int
    reason: EndReason


@dataclass(frozen=True, slots=True)
class RematchOpened:
    """The race's rematch: a new race at ``url`` (one per race)."""

    kind: ClassVar[str] = "rematch"
    at: int
    race_id: str
    code: str | None
    url: str


Event = Joined | Left | Started | Acted | Resigned | Judged | LineMeasured | Ended | RematchOpened
# A player's own events: the ones whose append depends on that player's events only.
PlayerEvent = Acted | Resigned | Judged
EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        Joined,
        Left,
        Started,
        Acted,
        Resigned,
        Judged,
        LineMeasured,
        Ended,
        RematchOpened,
    )
}


@dataclass(frozen=True, slots=True)
class Logged:
    """An event with its place in the log."""

    seq: int
    event: Event
