"""Where a Redis connection goes, and what every raw connection shares.

The subscriber (:mod:`.subscriber`) and the appender (:mod:`.appender`) are
plain :class:`asyncio.Protocol` objects whose bytes are parsed by
:mod:`..resp`: redis-py's pub/sub (one message per ``get_message`` call) and
its pipeline machinery each cost about a fifth of the server's CPU under
load. The Redis broker holds one of each for its one Redis; the Redis
Cluster broker one of each per shard (its primary).
"""

from __future__ import annotations

import asyncio
import copy
import ssl
from typing import Any, cast
from urllib.parse import urlparse

from redis.asyncio.connection import parse_url

from .resp import encode_command

CONNECT_TIMEOUT_S = 2.0  # opening a connection (socket_connect_timeout)
REPLY_TIMEOUT_S = 5.0  # AUTH, SUBSCRIBE, an append answered (socket_timeout of the commands)
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 2.0
PING = encode_command("PING")


class Endpoint:
    """Where a connection goes, read from a broker URL as redis-py reads it.

    Host and port (or a unix socket path), TLS for ``rediss://``, credentials
    (sent as ``AUTH``) and the database number (``SELECT``, for the appender:
    pub/sub channels are not per database).
    """

    def __init__(self, url: str) -> None:
        options = cast(dict[str, Any], parse_url(url))  # redis-py's parsing: same target
        scheme = urlparse(url).scheme
        self.path: str | None = options.get("path") if scheme == "unix" else None
        if scheme == "unix" and not self.path:
            raise ValueError(f"no socket path in {url!r}")
        self.host: str = options.get("host", "localhost")
        self.port = int(options.get("port", 6379))
        self.connect_timeout = float(options.get("socket_connect_timeout", CONNECT_TIMEOUT_S))
        self.db = int(options.get("db") or 0)
        self.ssl: ssl.SSLContext | None = None
        if scheme == "rediss":
            self.ssl = _ssl_context(options)
        username: str | None = options.get("username")
        password: str | None = options.get("password")
        # Sent ahead of the first command, in the same write: Redis answers in order.
        self.hello = b""
        if username:
            self.hello = encode_command("AUTH", username, password or "")
        elif password:
            self.hello = encode_command("AUTH", password)

    def __repr__(self) -> str:
        return self.path or f"{self.host}:{self.port}"

    def at(self, host: str, port: int) -> Endpoint:
        """The same credentials and TLS at another node (a cluster's), database 0."""
        other = copy.copy(self)
        other.host, other.port, other.path, other.db = host, port, None, 0
        return other

    async def open(self, protocol: asyncio.Protocol) -> None:
        """Connect ``protocol`` to Redis (TCP, TLS or unix socket) within the connect timeout."""
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            if self.path is not None:
                await loop.create_unix_connection(lambda: protocol, self.path)
            else:
                await loop.create_connection(lambda: protocol, self.host, self.port, ssl=self.ssl)


def _ssl_context(options: dict[str, Any]) -> ssl.SSLContext:
    """TLS as redis-py sets it up for ``rediss://``: certificate and host name checked."""
    modes = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    mode = modes.get(options.get("ssl_cert_reqs", "required"))
    if mode is None:
        raise ValueError(f"ssl_cert_reqs must be one of {', '.join(modes)}")
    context = ssl.create_default_context()
    context.check_hostname = mode != ssl.CERT_NONE and bool(options.get("ssl_check_hostname", True))
    context.verify_mode = mode
    if options.get("ssl_certfile") or options.get("ssl_keyfile"):
        context.load_cert_chain(options["ssl_certfile"], options.get("ssl_keyfile"))
    if options.get("ssl_ca_certs") or options.get("ssl_ca_path"):
        context.load_verify_locations(options.get("ssl_ca_certs"), options.get("ssl_ca_path"))
    return context
