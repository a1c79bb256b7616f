"""The one refusal: a request refused with a stable code, as listed in docs/protocol.md."""

from __future__ import annotations


class Refused(Exception):
    """A request refused with a stable ``code`` and a human ``reason``: by the race
    logic (a player's message), by the codec (a frame that is no message) or by
    the web (an HTTP request).

    The web answers it in one place each: an HTTP status by its code
    (``boulanger.web.refusals``), a WebSocket ``error`` or ``reject`` frame
    (``boulanger.web.session``). ``ref`` and ``action_id`` are the refused
    message's own, when they could be read from it: the answer echoes them, so
    that a client can tell which of its messages was refused.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.ref: str | None = None
        self.action_id: str | None = None


# The codes of the WebSocket's refusals (docs/protocol.md, "Error codes").
ERROR_CODES = (
    "bad_json",
    "bad_message",
    "unknown_type",
    "not_joined",
    "already_joined",
    "bad_name",
    "name_taken",
    "name_reserved",
    "bad_token",
    "race_full",
    "not_host",
    "already_started",
    "not_started",
    "race_over",
    "finished",
    "spectator",
    "watch_refused",
    "illegal_move",
    "bad_notation",
    "no_destination",
    "nothing_to_undo",
    "unknown_player",
    "boards_hidden",
    "no_hints",
    "too_many_races",
    "solver_busy",
    "daily_deal",
    "not_yet",
    "try_again",
    "internal",
)
