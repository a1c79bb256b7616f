"""Server settings, from arguments or ``BOULANGER_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..race.race import DEFAULT_COUNTDOWN_MS, DEFAULT_TIME_LIMIT_S


def _default_client_dir() -> Path:
    # server/boulanger/web/settings.py -> the repository's client/ folder
    return Path(__file__).resolve().parents[3] / "client"


@dataclass(slots=True)
class Settings:
    broker_url: str = "memory://"
    client_dir: Path = field(default_factory=_default_client_dir)
    time_limit_s: int = DEFAULT_TIME_LIMIT_S
    countdown_ms: int = DEFAULT_COUNTDOWN_MS
    # WebSocket limits (see docs/protocol.md, "Connection").
    max_frame_bytes: int = 16 * 1024
    ping_interval_s: float = 15.0
    idle_timeout_s: float = 45.0
    # A client further behind than this is closed with 1013.
    outbound_buffer_bytes: int = 256 * 1024
    message_burst: int = 40
    messages_per_second: float = 5.0
    # Per client address.
    max_connections_per_address: int = 64
    races_per_minute_per_address: int = 20
    # Budget for telling whether an explicit game code is winnable.
    solve_budget_s: float = 1.0
    # How long a finished race's replica stays in a process's memory.
    idle_race_s: float = 600.0
    # Daily challenge: days a day's leaderboard is kept after it ends (boulanger.web.daily).
    daily_retention_days: int = 90
    # Quick races (boulanger.web.quick): one starts with this many players, or
    # this long after its second player joined.
    quick_race_players: int = 8
    quick_race_wait_s: float = 20.0

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, then ``BOULANGER_<FIELD>`` variables, then ``overrides`` that are not None.

        Every field can be set from the environment, for example
        ``BOULANGER_BROKER_URL`` or ``BOULANGER_MESSAGES_PER_SECOND``.
        """
        settings = cls()
        for name in (f.name for f in fields(cls)):
            text = os.environ.get(f"BOULANGER_{name.upper()}")
            if text is not None:
                kind = type(getattr(settings, name))
                setattr(settings, name, Path(text) if issubclass(kind, Path) else kind(text))
        for name, value in overrides.items():
            if value is not None:
                setattr(settings, name, value)
        return settings
