"""Review of a result against the limits of human play (docs/fair-play.md).

Two signals. The *pace*: the server knows when it accepted each action
(``t``, ms from the race's start), so it can tell a result no human could
have played: actions faster than a hand can make them, or a win faster than
the par line could be played by hand. The *line* of a win: how closely its
moves follow a solver's winning line (measured by the solver,
``boulanger.solver.line``, and logged as a :class:`LineSignal`), which tells
a solver's line replayed at a human pace from a human's play. A result
beyond a limit is *held*: it keeps its place in the race's standings,
marked, and stays off the daily leaderboard. The limits are settings
(``BOULANGER_REVIEW_*``), fixed in each race when it is created, so every
server process judges a race the same way. Pure: stdlib only, no clock.

Players see the pace's reason with its figures (no hand plays faster), but
of the line only :data:`LINE_REASON`: its figures would tell a copier how
far to stray. The figures and the limits passed are kept for moderators
(:func:`review_line`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from .wire import ReviewWire

HELD = "held"
# A moderator's decision on a result (boulanger.web.desk): it counts, or it does not.
CONFIRMED, DISQUALIFIED = "confirmed", "disqualified"
VERDICTS = (CONFIRMED, DISQUALIFIED)
NOTE_MAX = 280  # characters of a decision's note
# What players are told of a win held for its line (no figures, no limits).
LINE_REASON = "line of play under review"


class DecisionDict(TypedDict):
    """A moderator's decision as the store keeps it (see :class:`Decision`)."""

    status: str
    note: str
    by: str
    at: int


@dataclass(frozen=True, slots=True)
class Decision:
    """A moderator's decision on a result: ``status`` confirmed or disqualified, the
    ``note`` its player is shown, who made it (the account's name) and when (ms)."""

    status: str
    note: str
    by: str
    at: int

    def to_dict(self) -> DecisionDict:
        return {"status": self.status, "note": self.note, "by": self.by, "at": self.at}

    @classmethod
    def from_dict(cls, data: DecisionDict) -> Decision:
        return cls(str(data["status"]), str(data["note"]), str(data["by"]), int(data["at"]))


def counts(review: str | None, decision: Decision | None) -> bool:
    """Whether a result counts (leaderboard, streak, rating): as decided, else unless held."""
    if decision is not None:
        return decision.status == CONFIRMED
    return review is None


def status_of(review: str | None, decision: Decision | None) -> str:
    """A result's review status: ``held``, ``confirmed``, ``disqualified``, or ``counted``."""
    if decision is not None:
        return decision.status
    return "counted" if review is None else HELD


class ReviewLimitsDict(TypedDict):
    """The review limits as a race's settings store them."""

    min_actions: int
    median_ms: int
    fast_ms: int
    fast_share: float
    par_ms: int
    line_min_decisions: int
    line_share: float
    line_run: int


class LineSignalDict(TypedDict):
    """A win's line as the race's log and the daily store keep it (see :class:`LineSignal`)."""

    actions: int
    undos: int
    par: int | None
    decisions: int
    on_line: int
    longest_run: int
    unmeasured: int
    hard: int
    easy: int
    hard_pause_ms: int | None
    easy_pause_ms: int | None
    positions: int
    seconds: float


@dataclass(frozen=True, slots=True)
class ReviewLimits:
    """What a human result stays within; a limit of 0 is not checked."""

    # Results with fewer actions are not judged (pace nor line): too few to tell anything.
    min_actions: int = 10
    # The median time between consecutive actions (the first from the start).
    median_ms: int = 250
    # Actions that follow the previous one by less than fast_ms...
    fast_ms: int = 100
    # ...may be at most this share of all actions (network bursts deliver a
    # few of a human's actions together).
    fast_share: float = 0.3
    # A win takes at least par x par_ms (par: the solver's line, in actions).
    par_ms: int = 250
    # The line of a win (LineSignal): wins with fewer decisions are not judged...
    line_min_decisions: int = 12
    # ...and a win is held when at least this share of its decisions lie on a
    # solver's winning line...
    line_share: float = 0.75
    # ...or when this many decisions in a row do.
    line_run: int = 25

    @property
    def judges_lines(self) -> bool:
        """Whether wins are judged by their line (a limit of the line is set)."""
        return bool(self.line_share or self.line_run)

    def to_dict(self) -> ReviewLimitsDict:
        """The limits as stored with the race's settings."""
        return {
            "min_actions": self.min_actions,
            "median_ms": self.median_ms,
            "fast_ms": self.fast_ms,
            "fast_share": self.fast_share,
            "par_ms": self.par_ms,
            "line_min_decisions": self.line_min_decisions,
            "line_share": self.line_share,
            "line_run": self.line_run,
        }

    @classmethod
    def from_dict(cls, data: ReviewLimitsDict) -> ReviewLimits:
        """Limits as :meth:`to_dict` stored them (one stored before a limit was added: its default)."""
        default = cls()
        return cls(
            min_actions=data.get("min_actions", default.min_actions),
            median_ms=data.get("median_ms", default.median_ms),
            fast_ms=data.get("fast_ms", default.fast_ms),
            fast_share=data.get("fast_share", default.fast_share),
            par_ms=data.get("par_ms", default.par_ms),
            line_min_decisions=data.get("line_min_decisions", default.line_min_decisions),
            line_share=data.get("line_share", default.line_share),
            line_run=data.get("line_run", default.line_run),
        )


def _median(values: Sequence[int]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2


def _clock(ms: int) -> str:
    seconds, millis = divmod(max(0, ms), 1000)
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02d}.{millis // 100}"


def review(
    times: Sequence[int], limits: ReviewLimits, *, won_ms: int | None, par: int | None
) -> str | None:
    """Why the result is held (every limit it passes, in one line), or None.

    ``times`` are the actions' ``t`` in order (ms from the start, never
    decreasing); ``won_ms`` the time of the win (None unless won); ``par``
    the deal's par when known.
    """
    if len(times) < max(1, limits.min_actions):
        return None
    gaps = [b - a for a, b in zip([0, *times[:-1]], times, strict=True)]
    reasons = []
    median = _median(gaps)
    if median < limits.median_ms:
        reasons.append(
            f"median time between actions {median:.0f} ms (a human needs {limits.median_ms} ms)"
        )
    fast = sum(1 for gap in gaps if gap < limits.fast_ms)
    if fast > limits.fast_share * len(gaps):
        reasons.append(
            f"{fast} of {len(gaps)} actions under {limits.fast_ms} ms after the previous one"
            f" (at most {limits.fast_share:.0%})"
        )
    if won_ms is not None and par is not None and won_ms < par * limits.par_ms:
        reasons.append(
            f"won in {_clock(won_ms)}: par {par} takes a human at least {_clock(par * limits.par_ms)}"
        )
    return "; ".join(reasons) or None


@dataclass(frozen=True, slots=True)
class LineSignal:
    """How a won game was played against a solver's lines (``boulanger.solver.line``).

    A *decision* is a move that is neither to a foundation nor an undo. It is
    *on the line* when a solver's winning line from the position where it was
    made plays it; *hard* when the solver's first guess there is not its
    line's move. ``unmeasured`` decisions were beyond the measure's budget
    (counted off the line). Pauses are the medians of the ms before hard and
    before easy decisions. ``positions`` and ``seconds`` (processor time) are
    what the measure cost.
    """

    actions: int
    undos: int
    par: int | None
    decisions: int
    on_line: int
    longest_run: int
    unmeasured: int
    hard: int
    easy: int
    hard_pause_ms: int | None
    easy_pause_ms: int | None
    positions: int
    seconds: float

    @property
    def share(self) -> float:
        """The share of decisions on the line (0 without decisions)."""
        return self.on_line / self.decisions if self.decisions else 0.0

    def to_dict(self) -> LineSignalDict:
        """The signal as the race's log and the daily store keep it."""
        return {
            "actions": self.actions,
            "undos": self.undos,
            "par": self.par,
            "decisions": self.decisions,
            "on_line": self.on_line,
            "longest_run": self.longest_run,
            "unmeasured": self.unmeasured,
            "hard": self.hard,
            "easy": self.easy,
            "hard_pause_ms": self.hard_pause_ms,
            "easy_pause_ms": self.easy_pause_ms,
            "positions": self.positions,
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: LineSignalDict) -> LineSignal:
        """A signal as :meth:`to_dict` (or the solver's ``LineMeasure.to_dict``) wrote it."""
        return cls(
            actions=data["actions"],
            undos=data["undos"],
            par=data["par"],
            decisions=data["decisions"],
            on_line=data["on_line"],
            longest_run=data["longest_run"],
            unmeasured=data["unmeasured"],
            hard=data["hard"],
            easy=data["easy"],
            hard_pause_ms=data["hard_pause_ms"],
            easy_pause_ms=data["easy_pause_ms"],
            positions=data["positions"],
            seconds=data["seconds"],
        )


def review_line(signal: LineSignal, limits: ReviewLimits) -> str | None:
    """Why a win is held for its line, for moderators (every limit passed), or None."""
    if signal.decisions < max(1, limits.line_min_decisions) or signal.actions < limits.min_actions:
        return None
    reasons = []
    if limits.line_share and signal.share >= limits.line_share:
        reasons.append(
            f"{signal.on_line} of {signal.decisions} decisions on a solver's line"
            f" ({signal.share:.0%}; held from {limits.line_share:.0%})"
        )
    if limits.line_run and signal.longest_run >= limits.line_run:
        reasons.append(
            f"{signal.longest_run} decisions in a row on a solver's line"
            f" (held from {limits.line_run})"
        )
    return "; ".join(reasons) or None


def review_wire(reason: str | None, decision: Decision | None = None) -> ReviewWire | None:
    """A result's ``review`` as the wire shows it: null, held with its reason, or a
    moderator's decision with its note (the reason its player is shown)."""
    if decision is not None:
        return {"status": decision.status, "reason": decision.note}
    return None if reason is None else {"status": HELD, "reason": reason}
