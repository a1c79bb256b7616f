"""A small incremental RESP2 reader and a command encoder; pure, no I/O.

:class:`RespReader` takes the bytes of a connection as they come and returns
every complete reply, keeping an incomplete tail for the next
:meth:`~RespReader.feed`. It is the subscriber side of the Redis broker,
where a reply is almost always a pub/sub push
(``*3\\r\\n$7\\r\\nmessage\\r\\n$N\\r\\n<channel>\\r\\n$M\\r\\n<data>\\r\\n``, or
``smessage`` for sharded pub/sub, as the reader is told): it
works with ``bytes.find`` and slices over the whole buffer, never byte by
byte, and copies nothing but the payloads it returns.

Replies map to Python values:

- bulk string ``$3\\r\\nfoo\\r\\n`` -> ``bytes``; nil bulk ``$-1`` -> ``None``
- integer ``:42`` -> ``int``
- simple string ``+OK`` -> ``str``
- error ``-ERR no`` -> a :class:`ReplyError` (returned, not raised)
- array ``*2 ...`` -> ``list``; nil array ``*-1`` -> ``None``
"""

from __future__ import annotations

from typing import TypeAlias


class ReplyError(Exception):
    """An error reply (``-ERR ...``), handed back as a value: a reply among others."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.args == self.args

    def __hash__(self) -> int:
        return hash(self.args)


class UnexpectedReply(Exception):
    """Redis sent what no reply can be here: bytes that are not RESP2, a reply to no
    command, an answer a setup command cannot have. The connection is out of step and
    cannot be trusted.

    (Not the race's :class:`boulanger.race.errors.ProtocolError`, a player's request
    refused.)
    """


Reply: TypeAlias = "bytes | int | str | ReplyError | list[Reply] | None"

_CRLF = b"\r\n"
_BULK = ord("$")
_ARRAY = ord("*")
_INTEGER = ord(":")
_SIMPLE = ord("+")
_ERROR = ord("-")


class _Incomplete(Exception):
    """The buffer ends inside a reply; ``need`` is the buffer length it takes at least."""

    def __init__(self, need: int) -> None:
        self.need = need


def _parse(buf: bytes, pos: int) -> tuple[Reply, int]:
    """The reply starting at ``pos`` and the offset after it; raises :class:`_Incomplete`."""
    eol = buf.find(_CRLF, pos)
    if eol < 0:
        raise _Incomplete(len(buf) + 1)
    kind = buf[pos]
    if kind == _BULK:
        size = int(buf[pos + 1 : eol])
        if size < 0:
            return None, eol + 2
        start = eol + 2
        stop = start + size
        if len(buf) < stop + 2:
            raise _Incomplete(stop + 2)
        if buf[stop : stop + 2] != _CRLF:
            raise UnexpectedReply(f"bulk string of {size} bytes not followed by CRLF")
        return buf[start:stop], stop + 2
    if kind == _ARRAY:
        count = int(buf[pos + 1 : eol])
        if count < 0:
            return None, eol + 2
        items: list[Reply] = []
        pos = eol + 2
        for _ in range(count):
            # Bulk strings inline: a pub/sub push is an array of three of them.
            eol = buf.find(_CRLF, pos)
            if eol < 0:
                raise _Incomplete(len(buf) + 1)
            if buf[pos] == _BULK:
                size = int(buf[pos + 1 : eol])
                if size < 0:
                    items.append(None)
                    pos = eol + 2
                    continue
                start = eol + 2
                stop = start + size
                if len(buf) < stop + 2:
                    raise _Incomplete(stop + 2)
                if buf[stop : stop + 2] != _CRLF:
                    raise UnexpectedReply(f"bulk string of {size} bytes not followed by CRLF")
                items.append(buf[start:stop])
                pos = stop + 2
            else:
                item, pos = _parse(buf, pos)
                items.append(item)
        return items, pos
    if kind == _INTEGER:
        return int(buf[pos + 1 : eol]), eol + 2
    if kind == _SIMPLE:
        return buf[pos + 1 : eol].decode("utf-8", "replace"), eol + 2
    if kind == _ERROR:
        return ReplyError(buf[pos + 1 : eol].decode("utf-8", "replace")), eol + 2
    raise UnexpectedReply(f"unknown RESP2 type byte {bytes([kind])!r}")


class RespReader:
    """Incremental RESP2 parsing: :meth:`feed` bytes, get the complete replies back.

    ``push`` names the pub/sub push read on the fast path: ``b"message"``
    (``SUBSCRIBE``) or ``b"smessage"`` (``SSUBSCRIBE``, Redis Cluster).
    """

    __slots__ = ("_chunks", "_need", "_push", "_push_head", "_size")

    def __init__(self, push: bytes = b"message") -> None:
        self._push = push
        # A push, up to its channel's length: ``*3\r\n$7\r\nmessage\r\n$``.
        self._push_head = b"*3\r\n$%d\r\n%s\r\n$" % (len(push), push)
        # The bytes of an incomplete reply, kept as chunks until there are at
        # least ``_need`` of them: a large payload arriving in many pieces is
        # joined once, not once per piece.
        self._chunks: list[bytes] = []
        self._size = 0
        self._need = 0

    def feed(self, data: bytes) -> list[Reply]:
        """Every reply that ``data`` completes, in order (an empty list if none).

        Raises :class:`UnexpectedReply` on bytes that are not RESP2; the reader
        is then out of step and must be dropped with its connection.
        """
        if self._chunks:
            self._chunks.append(data)
            self._size += len(data)
            if self._size < self._need:
                return []
            data = b"".join(self._chunks)
            self._chunks = []
        replies: list[Reply] = []
        append = replies.append
        find = data.find
        startswith = data.startswith
        push, push_head = self._push, self._push_head
        push_length = len(push_head)
        pos = 0
        end = len(data)
        try:
            while pos < end:
                # The common case inline: a complete pub/sub push. Anything
                # else, or a push that is cut short, goes the general way.
                if startswith(push_head, pos):
                    head = pos + push_length
                    eol = find(_CRLF, head)
                    if eol >= 0:
                        start = eol + 2
                        stop = start + int(data[head:eol])
                        if stop >= start and startswith(b"\r\n$", stop):
                            head = stop + 3
                            eol = find(_CRLF, head)
                            if eol >= 0:
                                first = eol + 2
                                last = first + int(data[head:eol])
                                if last >= first and startswith(_CRLF, last):
                                    append([push, data[start:stop], data[first:last]])
                                    pos = last + 2
                                    continue
                reply, pos = _parse(data, pos)
                append(reply)
        except _Incomplete as incomplete:
            tail = data[pos:]
            self._chunks = [tail]
            self._size = len(tail)
            self._need = incomplete.need - pos
        except ValueError as error:  # int() of a malformed length
            raise UnexpectedReply(f"malformed RESP2 at offset {pos}: {error}") from error
        return replies

    @property
    def pending(self) -> int:
        """Bytes held of an incomplete reply."""
        return self._size if self._chunks else 0


def encode_command(*args: bytes | str | int) -> bytes:
    """A command as Redis reads it: an array of bulk strings (``*n\\r\\n$len\\r\\narg\\r\\n``)."""
    # Built as one str, encoded once: for the appender's commands (a dozen
    # arguments, mostly ASCII) half the cost of encoding argument by argument.
    parts = [f"*{len(args)}\r\n"]
    append = parts.append
    for arg in args:
        if type(arg) is str:
            size = len(arg) if arg.isascii() else len(arg.encode())
            append(f"${size}\r\n{arg}\r\n")
        elif type(arg) is int:
            text = str(arg)
            append(f"${len(text)}\r\n{text}\r\n")
        else:
            return _encode_bytes(args)
    return "".join(parts).encode()


def _encode_bytes(args: tuple[bytes | str | int, ...]) -> bytes:
    """:func:`encode_command` for arguments that may be bytes (or str and int subclasses)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, int):
            arg = b"%d" % arg
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)
