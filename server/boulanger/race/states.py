"""The named states of a race, its players and its connections; each value is its wire form."""

from __future__ import annotations

import enum


class RaceState(enum.StrEnum):
    """Where a race stands (``race_state`` and ``state`` on the wire)."""

    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHED = "finished"


class PlayerStatus(enum.StrEnum):
    """Where a player stands: their game's status (:class:`~boulanger.engine.Status`), or resigned."""

    PLAYING = "playing"
    WON = "won"
    STUCK = "stuck"
    DEAD_END = "dead_end"
    RESIGNED = "resigned"


class EndReason(enum.StrEnum):
    """Why a race ended (``reason`` of ``race_over``)."""

    ALL_DONE = "all_done"
    TIME_LIMIT = "time_limit"


class Role(enum.StrEnum):
    """What a connection joined a race as."""

    PLAYER = "player"
    SPECTATOR = "spectator"
