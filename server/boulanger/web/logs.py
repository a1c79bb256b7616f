"""What clients do wrong goes in the log as one short line, a limited number of times.

A traceback in the server's log means a bug of ours. Malformed frames,
invalid UTF-8, broken HTTP requests and the like are the client's doing:
each is logged as one line without a stack trace, and at most
:data:`LINES_PER_WINDOW` such lines per :data:`WINDOW_S` seconds are
written (then one line counting those left out), so that no client can fill
the log. :class:`ClientFaults` does this for what uvicorn itself logs
(``boulanger serve`` installs it on the ``uvicorn.error`` logger);
:func:`client_fault` for what the server refuses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

WINDOW_S = 10.0
LINES_PER_WINDOW = 10

log = logging.getLogger("boulanger.client")

# What uvicorn (and the websockets library, through uvicorn's logger) says
# about a request or a frame the client got wrong.
CLIENT_MESSAGES = (
    "Invalid UTF-8 sequence received from client",
    "Invalid HTTP request received",
    "Unsupported upgrade request",
)


class RateLimit:
    """At most ``lines`` a ``window``; says how many were left out when it lets one through."""

    def __init__(
        self,
        lines: int = LINES_PER_WINDOW,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lines = lines
        self.window = window
        self.clock = clock
        self.started = clock()
        self.written = 0
        self.dropped = 0

    def admit(self) -> tuple[bool, int]:
        """Whether to write this line, and how many lines were dropped before it."""
        now = self.clock()
        if now - self.started >= self.window:
            self.started, self.written = now, 0
        if self.written >= self.lines:
            self.dropped += 1
            return False, 0
        self.written += 1
        dropped, self.dropped = self.dropped, 0
        return True, dropped


_limit = RateLimit()


def _suffix(dropped: int) -> str:
    return f" ({dropped} similar lines left out before this one)" if dropped else ""


def client_fault(who: str, code: str, reason: str) -> None:
    """Log a client's protocol error as one line, within the rate limit."""
    admitted, dropped = _limit.admit()
    if admitted:
        log.info("client error: %s: %s (%s)%s", who, code, reason, _suffix(dropped))


class ClientFaults(logging.Filter):
    """A filter for ``uvicorn.error``: client-caused errors become one rate-limited line.

    Anything else, an exception in the application above all, passes as it
    is, with its traceback.
    """

    def __init__(self, limit: RateLimit | None = None) -> None:
        super().__init__()
        self.limit = limit or _limit

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if not message.startswith(CLIENT_MESSAGES):
            return True
        admitted, dropped = self.limit.admit()
        if not admitted:
            return False
        error = record.exc_info[1] if record.exc_info else None
        detail = f" ({type(error).__name__}: {error})" if error is not None else ""
        record.msg = f"client error: {record.getMessage().rstrip('.')}{detail}{_suffix(dropped)}"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def install() -> None:
    """Put :class:`ClientFaults` on uvicorn's error logger (after uvicorn set up logging)."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, ClientFaults) for f in logger.filters):
        logger.addFilter(ClientFaults())
