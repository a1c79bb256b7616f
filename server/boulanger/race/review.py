"""Review of a result's pace against the limits of human play (docs/fair-play.md).

The server knows when it accepted each action (``t``, ms from the race's
start), so it can tell a result no human could have played: actions faster
than a hand can make them, or a win faster than the par line could be
played by hand. Such a result is *held*: it keeps its place in the race's
standings, marked, and stays off the daily leaderboard. The limits are
settings (``BOULANGER_REVIEW_*``), fixed in each race when it is created, so
every server process judges a race the same way. Pure: stdlib only, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from .wire import ReviewWire

HELD = "held"


class ReviewLimitsDict(TypedDict):
    """The review limits as a race's settings store them."""

    min_actions: int
    median_ms: int
    fast_ms: int
    fast_share: float
    par_ms: int


@dataclass(frozen=True, slots=True)
class ReviewLimits:
    """What a human result stays within; a limit of 0 is not checked."""

    # Results with fewer actions are not judged: too few to tell anything.
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

    def to_dict(self) -> ReviewLimitsDict:
        """The limits as stored with the race's settings."""
        return {
            "min_actions": self.min_actions,
            "median_ms": self.median_ms,
            "fast_ms": self.fast_ms,
            "fast_share": self.fast_share,
            "par_ms": self.par_ms,
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


def review_wire(reason: str | None) -> ReviewWire | None:
    """A result's ``review`` as the wire shows it: null, or held with its reason."""
    return None if reason is None else {"status": HELD, "reason": reason}
