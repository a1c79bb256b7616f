"""Refusals answered over HTTP: the status of each code, and one way to answer.

A handler refuses a request by raising :class:`~boulanger.race.errors.Refused`
(a stable error code as listed in docs/protocol.md, a reason for people), as
the race logic does; the app's exception handlers (:data:`EXCEPTION_HANDLERS`)
answer every refusal the same way, ``{"error": {"code": ..., "reason": ...}}``,
with the status :data:`HTTP_STATUS` gives its code (400 for the rest). An
unreachable store is answered 503 ``try_again``; Starlette's own errors
(405, a 404 under ``/api/``) keep their status, with the code ``http``.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..broker import BrokerUnavailable
from ..race.errors import Refused

# The status of each code an HTTP request may be refused with (docs/protocol.md,
# "HTTP"); any other code (bad_message, bad_name, a race's) is a 400.
HTTP_STATUS: dict[str, int] = {
    "signed_out": 401,
    "bad_credentials": 401,
    "bad_origin": 403,
    "not_moderator": 403,
    "unknown_race": 404,
    "unknown_player": 404,
    "unknown_entry": 404,
    "no_daily": 404,
    "no_client": 404,
    "race_running": 409,
    "name_taken": 409,
    "passkey_taken": 409,
    "not_yet": 409,
    "decided_meanwhile": 409,
    "too_large": 413,
    "not_json": 415,
    "too_many_races": 429,
    "too_many_accounts": 429,
    "too_many_attempts": 429,
    "too_many_reviews": 429,
    "solver_busy": 429,
    "no_deal": 503,
    "try_again": 503,
}
# Where a code means something else: signed in, a wrong current password is
# forbidden (403), not an unknown sign-in (401); on the routes that check
# passwords, every slot busy (web/passwords.py) is a 429: the client slows down.
REAUTH_PATHS = ("/api/me/password", "/api/me", "/api/me/passkeys/options")
PASSWORD_PATHS = ("/api/accounts", "/api/session", *REAUTH_PATHS)
HTTP_STATUS_AT: dict[tuple[str, str], int] = {
    **{(path, "bad_credentials"): 403 for path in REAUTH_PATHS},
    **{(path, "try_again"): 429 for path in PASSWORD_PATHS},
}


def http_status(refused: Refused, path: str) -> int:
    """The HTTP status of a refusal of a request to ``path``."""
    return HTTP_STATUS_AT.get((path, refused.code)) or HTTP_STATUS.get(refused.code, 400)


def error(status: int, code: str, reason: str) -> JSONResponse:
    """The answer to a refused request."""
    return JSONResponse({"error": {"code": code, "reason": reason}}, status_code=status)


def answer(request: Request, refused: Refused) -> JSONResponse:
    """The answer to ``request``, refused."""
    return error(http_status(refused, request.url.path), refused.code, refused.reason)


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    return answer(request, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, "http", str(exc.detail))


async def _unavailable(request: Request, exc: Exception) -> Response:
    return error(503, "try_again", "the store is unreachable; try again")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    Refused: _refused,
    HTTPException: _http_error,
    BrokerUnavailable: _unavailable,
}
