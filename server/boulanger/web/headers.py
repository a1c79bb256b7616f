"""Security headers on every HTTP answer: pages, static files and the API.

The client is plain files served from this origin with no inline script or
style (it changes styles through the CSSOM, which a policy does not block),
so the policy allows the origin alone: an injected ``<script>`` or
``style=""`` does not run, and no other site may frame the pages.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # the favicon is a data: URL
        "connect-src 'self'",  # fetch and the WebSockets of this origin
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # for browsers without frame-ancestors
    # Race URLs are invitations: no other site is told one. Our own pages are,
    # so that a sign-in page loaded from a link leads back where the player was.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
_RAW = [(name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]


class SecurityHeaders:
    """ASGI middleware: add :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _RAW:
                    if name.decode() not in headers:
                        headers.raw.append((name, value))
            await send(message)

        await self.app(scope, receive, send_with_headers)
