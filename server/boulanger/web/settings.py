"""Server settings, from arguments or ``BOULANGER_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..race.race import DEFAULT_COUNTDOWN_MS, DEFAULT_TIME_LIMIT_S
from ..race.review import ReviewLimits

_REVIEW = ReviewLimits()


def _default_client_dir() -> Path:
    # server/boulanger/web/settings.py -> the repository's client/ folder
    return Path(__file__).resolve().parents[3] / "client"


@dataclass(slots=True)
class Settings:
    """One server process's settings, read from the environment (``BOULANGER_*``)."""

    broker_url: str = "memory://"
    # Replicas an append must reach before it is acknowledged (Redis brokers:
    # WAIT; 0: the primary's log is enough). See README, "Brokers".
    replica_wait: int = 0
    client_dir: Path = field(default_factory=_default_client_dir)
    time_limit_s: int = DEFAULT_TIME_LIMIT_S
    countdown_ms: int = DEFAULT_COUNTDOWN_MS
    # WebSocket limits (see docs/protocol.md, "Connection").
    max_frame_bytes: int = 16 * 1024
    ping_interval_s: float = 15.0
    idle_timeout_s: float = 45.0
    # How long a player's progress may wait to leave with the next frames to the
    # same socket (one write for several events; web.frames.Ticker); 0: never.
    event_tick_ms: float = 20.0
    # A client further behind than this is closed with 1013.
    outbound_buffer_bytes: int = 256 * 1024
    message_burst: int = 40
    messages_per_second: float = 5.0
    # Events sent in answer to resync (a snapshot counts as 8), per connection.
    resync_burst: int = 128
    resync_events_per_second: float = 16.0
    # Per client address.
    max_connections_per_address: int = 64
    races_per_minute_per_address: int = 20
    # With Redis: how long a connection's place in its address's count
    # outlives a process that stopped renewing it (boulanger.web.limits).
    address_lease_s: float = 90.0
    # Budget for telling whether an explicit game code is winnable.
    solve_budget_s: float = 1.0
    # Budget for a practice game's hint (no answer within it: "unknown").
    hint_budget_s: float = 1.0
    # The solver's processes for what players wait for (hints, reviews); 0: one per
    # core this process may run on. Race creation's checks have one of their own.
    solver_workers: int = 0
    # Requests waiting for a solver process beyond those it is running; 0: two per
    # process. Past it (or with one of theirs already waiting or running), an
    # address or account is refused at once (boulanger.web.solving, docs/protocol.md).
    solver_queue: int = 0
    # Reviews of games the solver computes for one address a day (cached ones are free).
    reviews_per_day_per_address: int = 100
    # When set, races created without a code get their catalog deals in a
    # sequence fixed by this text instead of at random: the same seed and the
    # same order of races give the same deals (tests, demonstrations).
    catalog_seed: str = ""
    # How long a finished race's replica stays in a process's memory.
    idle_race_s: float = 600.0
    # How long a player pauses before their position is judged (stuck, dead
    # end: a search that an action alone does not pay for; RaceHub.judge_later).
    judge_after_s: float = 1.0
    # Daily challenge: days a day's leaderboard is kept after it ends (boulanger.web.daily).
    daily_retention_days: int = 90
    # Orders the daily deals so that nobody can work out a future day's deal
    # (boulanger.race.daily); the same in every process. Empty: the public schedule.
    daily_secret: str = ""
    # Results held for review beyond these limits of human play (boulanger.race.review,
    # docs/fair-play.md); 0 turns a limit off.
    review_min_actions: int = _REVIEW.min_actions
    review_median_ms: int = _REVIEW.median_ms
    review_fast_ms: int = _REVIEW.fast_ms
    review_fast_share: float = _REVIEW.fast_share
    review_par_ms: int = _REVIEW.par_ms
    review_line_min_decisions: int = _REVIEW.line_min_decisions
    review_line_share: float = _REVIEW.line_share
    review_line_run: int = _REVIEW.line_run
    # Quick races (boulanger.web.quick): one starts with this many players, or
    # this long after its second player joined.
    quick_race_players: int = 8
    quick_race_wait_s: float = 20.0
    # A place handed out is held this long for its player to connect, and one
    # address holds this many at once (boulanger.race.quick).
    quick_place_s: float = 15.0
    quick_places_per_address: int = 2
    # Accounts (boulanger.web.accounts): argon2id's cost per password hashed or checked.
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 64 * 1024
    argon2_parallelism: int = 1
    # Hashes in flight per process (each takes argon2_memory_kib); a request waits for
    # one at most argon2_wait_s, behind at most argon2_waiting_max others
    # (boulanger.web.passwords), else it is answered 429 try_again.
    argon2_slots: int = 1
    argon2_wait_s: float = 3.0
    argon2_waiting_max: int = 32
    # Sign-in attempts, right or wrong, per account name (or per device that signed in
    # to the account before) and per address, per 15 minutes; counted before any work.
    signin_attempts_per_account: int = 10
    signin_attempts_per_address: int = 30
    # Accounts made per address per hour; passkey ceremonies begun per address per
    # 15 minutes.
    signups_per_address: int = 5
    ceremonies_per_address: int = 30
    # The session cookie is Secure (sent over HTTPS only): set when served over HTTPS.
    cookie_secure: bool = False
    # The site's origin as browsers see it ("https://example.org"): what Origin headers
    # and passkeys are checked against. Empty: the scheme and Host of each request.
    public_origin: str = ""
    # Whether a guest's first daily attempt of the day is ranked (a server without
    # accounts in use). Off: a ranked attempt needs a signed-in account.
    daily_guests_ranked: bool = False
    # Ranked dailies one address has a day from accounts made that day (0: no
    # limit), and whether an address a guest was dealt today's deal from has no
    # ranked daily that day (docs/fair-play.md, "Free accounts").
    daily_new_accounts_per_address: int = 1
    daily_guest_seen_unranks: bool = True

    def review_limits(self) -> ReviewLimits:
        """The review limits new races are created with."""
        return ReviewLimits(
            min_actions=self.review_min_actions,
            median_ms=self.review_median_ms,
            fast_ms=self.review_fast_ms,
            fast_share=self.review_fast_share,
            par_ms=self.review_par_ms,
            line_min_decisions=self.review_line_min_decisions,
            line_share=self.review_line_share,
            line_run=self.review_line_run,
        )

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
                if kind is bool:
                    setattr(settings, name, text.strip().lower() in ("1", "true", "yes", "on"))
                    continue
                setattr(settings, name, Path(text) if issubclass(kind, Path) else kind(text))
        for name, value in overrides.items():
            if value is not None:
                setattr(settings, name, value)
        return settings
