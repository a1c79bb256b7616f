"""HTTP refusals: one exception, one way to answer it.

A handler refuses a request by raising :class:`Refused` (an HTTP status, a
stable error code as listed in docs/protocol.md, a reason for people); the
app's exception handlers (:data:`EXCEPTION_HANDLERS`) answer every refusal
the same way: ``{"error": {"code": ..., "reason": ...}}``. A race logic
refusal (:class:`~boulanger.race.errors.ProtocolError`) raised in an HTTP
handler is answered as a 400 with its code; an unreachable store as 503.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..broker import BrokerUnavailable
from ..race.errors import ProtocolError


class Refused(Exception):
    """An HTTP request refused with ``status``, a stable ``code`` and a human ``reason``."""

    def __init__(self, status: int, code: str, reason: str) -> None:
        super().__init__(f"{status} {code}: {reason}")
        self.status = status
        self.code = code
        self.reason = reason


def error(status: int, code: str, reason: str) -> JSONResponse:
    """The answer to a refused request."""
    return JSONResponse({"error": {"code": code, "reason": reason}}, status_code=status)


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    return error(exc.status, exc.code, exc.reason)


async def _protocol_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProtocolError)
    return error(400, exc.code, exc.reason)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, "http", str(exc.detail))


async def _unavailable(request: Request, exc: Exception) -> Response:
    return error(503, "try_again", "the store is unreachable; try again")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    Refused: _refused,
    ProtocolError: _protocol_error,
    HTTPException: _http_error,
    BrokerUnavailable: _unavailable,
}
