"""A lean WebSocket client for the load generator's bots.

The websockets client costs about as much CPU per received message as the
server spends per sent one, so on one core it cannot drive the server to its
limit. This client speaks RFC 6455 directly on an asyncio protocol: the
upgrade handshake, masked text frames out, unmasked frames in (server frames
are never masked), ping/pong/close, and permessage-deflate on the way in
(as a browser, it offers the extension; it sends its own frames uncompressed,
which RFC 7692 allows).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import time
import zlib
from typing import Any, Protocol


class Receiver(Protocol):
    """What the client hands what it reads to (a bot)."""

    def on_text(self, text: str, t: float) -> None: ...

    def on_closed(self, code: int | None) -> None: ...


class LeanClient(asyncio.Protocol):
    def __init__(self, bot: Receiver, request: bytes, deflate: bool) -> None:
        self.bot = bot
        self.request = request
        self.offer_deflate = deflate
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.open = False
        self.inflate: Any = None
        self.fragments: list[bytes] = []
        self.fragment_compressed = False
        self.close_code: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        if not self.open:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end]).decode("latin-1")
            del buf[: end + 4]
            if not head.startswith("HTTP/1.1 101"):
                self.handshake.set_exception(ConnectionError(head.split("\r\n", 1)[0]))
                self.transport.close()
                return
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "sec-websocket-extensions" and "deflate" in value:
                    bits = 15
                    for param in value.split(";"):
                        key, _, val = param.strip().partition("=")
                        if key == "server_max_window_bits" and val:
                            bits = int(val)
                    self.inflate = zlib.decompressobj(wbits=-bits)
            self.open = True
            self.handshake.set_result(None)
        now = time.perf_counter()
        while True:
            n = len(buf)
            if n < 2:
                return
            b0, b1 = buf[0], buf[1]
            length = b1 & 0x7F
            start = 2
            if length == 126:
                if n < 4:
                    return
                length = int.from_bytes(buf[2:4], "big")
                start = 4
            elif length == 127:
                if n < 10:
                    return
                length = int.from_bytes(buf[2:10], "big")
                start = 10
            if n < start + length:
                return
            payload = bytes(buf[start : start + length])
            del buf[: start + length]
            opcode = b0 & 0x0F
            if opcode in (1, 0):  # text, continuation
                if opcode == 1:
                    self.fragment_compressed = bool(b0 & 0x40)
                self.fragments.append(payload)
                if not b0 & 0x80:
                    continue
                data = b"".join(self.fragments)
                self.fragments = []
                if self.fragment_compressed:
                    data = self.inflate.decompress(data + b"\x00\x00\xff\xff")
                self.bot.on_text(data.decode(), now)
            elif opcode == 9:  # ping
                self._frame(0x8A, payload)
            elif opcode == 8:  # close
                self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                with contextlib.suppress(Exception):
                    self._frame(0x88, payload[:2])
                self.transport.close()
                return

    def _frame(self, head: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            header = bytes((head, 0x80 | n))
        elif n < 65536:
            header = bytes((head, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((head, 0x80 | 127)) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        if n:
            key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
            payload = (int.from_bytes(payload, "big") ^ key).to_bytes(n, "big")
        self.transport.write(header + mask + payload)

    def send_text(self, text: str) -> None:
        if self.transport is None or self.transport.is_closing():
            raise ConnectionError("closed")
        self._frame(0x81, text.encode())

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            with contextlib.suppress(Exception):
                self._frame(0x88, (1000).to_bytes(2, "big"))
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError("closed during the handshake"))
        self.bot.on_closed(self.close_code or 1006)


async def lean_connect(
    bot: Receiver, url: str, address: str, compression: str | None
) -> LeanClient:
    rest = url.removeprefix("ws://")
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.partition(":")
    if not host.startswith("127."):
        raise ValueError("loopback addresses only")
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET /{path} HTTP/1.1",
        f"Host: {hostport}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if compression == "deflate":
        lines.append("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(
        lambda: LeanClient(bot, request, compression == "deflate"),
        host,
        int(port),
        local_addr=(address, 0),
    )
    async with asyncio.timeout(60):
        await client.handshake
    return client
