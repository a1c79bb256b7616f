"""Typed refusals with stable codes, as listed in docs/protocol.md."""

from __future__ import annotations


class ProtocolError(Exception):
    """A client message refused with a stable ``code`` and a human ``reason``.

    ``ref`` and ``action_id`` are the refused message's own, when they could be
    read from it: the answer echoes them, so that a client can tell which of
    its messages was refused.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.ref: str | None = None
        self.action_id: str | None = None


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
    "daily_deal",
    "not_yet",
    "try_again",
    "internal",
)
