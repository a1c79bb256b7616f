"""The RESP2 reader (hiredis behind it): every reply type, however the bytes are split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boulanger.broker.redis.resp import (
    Reply,
    ReplyError,
    RespReader,
    UnexpectedReply,
    encode_command,
)


def encode(reply: object) -> bytes:
    """The bytes Redis sends for ``reply`` (a str is a simple string, read back as bytes)."""
    if reply is None:
        return b"$-1\r\n"
    if isinstance(reply, ReplyError):
        return b"-" + str(reply).encode() + b"\r\n"
    if isinstance(reply, bytes):
        return b"$%d\r\n%s\r\n" % (len(reply), reply)
    if isinstance(reply, str):
        return b"+" + reply.encode() + b"\r\n"
    if isinstance(reply, int):
        return b":%d\r\n" % reply
    assert isinstance(reply, list)
    return b"*%d\r\n" % len(reply) + b"".join(encode(item) for item in reply)


def push(channel: bytes, data: bytes) -> bytes:
    return encode([b"message", channel, data])


def feed_all(chunks: list[bytes]) -> list[Reply]:
    reader = RespReader()
    replies: list[Reply] = []
    for chunk in chunks:
        replies.extend(reader.feed(chunk))
    assert not reader.pending
    return replies


@pytest.mark.parametrize(
    ("raw", "reply"),
    [
        (b"$3\r\nfoo\r\n", b"foo"),
        (b"$0\r\n\r\n", b""),
        (b"$-1\r\n", None),
        (b"$4\r\na\r\nb\r\n", b"a\r\nb"),  # a bulk string's length, not its CRLFs, ends it
        (b":42\r\n", 42),
        (b":-7\r\n", -7),
        (b"+OK\r\n", b"OK"),
        (b"+\r\n", b""),
        (b"-ERR unknown command 'NOPE'\r\n", ReplyError("ERR unknown command 'NOPE'")),
        (
            b"-WRONGPASS invalid username-password pair\r\n",
            ReplyError("WRONGPASS invalid username-password pair"),
        ),
        (b"*0\r\n", []),
        (b"*-1\r\n", None),
        (b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n", [b"message", b"ch", b"hello"]),
        (b"*3\r\n$7\r\nmessage\r\n$-1\r\n$1\r\nx\r\n", [b"message", None, b"x"]),
        (b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n:5\r\n", [b"message", b"ch", 5]),
        (b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", [b"subscribe", b"ch", 1]),
        (b"*2\r\n$4\r\npong\r\n$0\r\n\r\n", [b"pong", b""]),  # PING in subscribed mode
        (b"*3\r\n$1\r\na\r\n$-1\r\n*2\r\n:1\r\n*1\r\n+x\r\n", [b"a", None, [1, [b"x"]]]),
        (b"*2\r\n-ERR in EXEC\r\n:1\r\n", [ReplyError("ERR in EXEC"), 1]),
    ],
)
def test_each_reply_type(raw: bytes, reply: Reply) -> None:
    assert RespReader().feed(raw) == [reply]
    assert feed_all([raw[i : i + 1] for i in range(len(raw))]) == [reply]


def test_an_error_reply_is_a_value_not_raised() -> None:
    replies = RespReader().feed(b"-NOAUTH Authentication required.\r\n+OK\r\n")
    assert isinstance(replies[0], ReplyError)
    assert isinstance(replies[0], Exception)
    assert str(replies[0]) == "NOAUTH Authentication required."
    assert replies[1] == b"OK"


def test_a_stream_split_at_every_offset_gives_the_same_replies() -> None:
    replies: list[Reply] = [
        b"OK",
        [b"subscribe", b"bk:control", 1],
        [b"subscribe", b"bk:race:{r1}", 2],
    ]
    for n in range(40):
        data = b'{"seq":%d,"kind":"move","text":"%s"}' % (n, b"\xc3\xa9\r\n" * (n % 5))
        replies.append([b"message", b"bk:race:{r%d}" % (n % 3), data])
    replies += [[b"pong", b""], [b"unsubscribe", b"bk:race:{r1}", 1], ReplyError("ERR x"), 12]
    stream = b"".join(encode(reply) for reply in replies)
    assert RespReader().feed(stream) == replies
    for cut in range(len(stream) + 1):
        assert feed_all([stream[:cut], stream[cut:]]) == replies, cut
    assert feed_all([stream[i : i + 1] for i in range(len(stream))]) == replies
    for size in (2, 3, 7, 64, 333):
        assert feed_all([stream[i : i + size] for i in range(0, len(stream), size)]) == replies


def test_an_incomplete_tail_waits_for_the_next_feed() -> None:
    reader = RespReader()
    raw = push(b"ch", b"x" * 330)
    assert reader.feed(raw + raw[:40]) == [[b"message", b"ch", b"x" * 330]]
    assert reader.pending
    assert reader.feed(raw[40:100]) == []
    assert reader.feed(raw[100:]) == [[b"message", b"ch", b"x" * 330]]
    assert not reader.pending


def test_large_payloads_in_many_pieces() -> None:
    big = bytes(range(256)) * 16384  # 4 MiB, CRLFs and all
    raw = push(b"big", big) + push(b"small", b"after")
    reader = RespReader()
    replies: list[Reply] = []
    for start in range(0, len(raw), 65536):
        replies.extend(reader.feed(raw[start : start + 65536]))
    assert replies == [[b"message", b"big", big], [b"message", b"small", b"after"]]
    assert feed_all([raw[:7], raw[7:]]) == replies


def test_many_pushes_in_one_read() -> None:
    raw = b"".join(push(b"bk:race:{r%d}" % (n % 4), b"d" * 330) for n in range(5000))
    replies = RespReader().feed(raw)
    assert len(replies) == 5000
    assert replies[4999] == [b"message", b"bk:race:{r3}", b"d" * 330]


@pytest.mark.parametrize(
    "raw",
    [
        b"?what\r\n",
        b"$abc\r\nfoo\r\n",
        b"$3\r\nfoobar\r\n",  # the payload is longer than announced
        b":\r\n",
        b"*x\r\n",
        b"*1\r\n$2\r\nabc\r\n",
    ],
)
def test_bytes_that_are_not_resp2_are_refused(raw: bytes) -> None:
    with pytest.raises(UnexpectedReply):
        RespReader().feed(raw)


def test_encode_command() -> None:
    assert encode_command("PING") == b"*1\r\n$4\r\nPING\r\n"
    assert encode_command("SUBSCRIBE", "bk:race:{é}", b"raw", 7) == (
        b"*4\r\n$9\r\nSUBSCRIBE\r\n$12\r\nbk:race:{\xc3\xa9}\r\n$3\r\nraw\r\n$1\r\n7\r\n"
    )
    # Without bytes, the command is built as one str: lengths are still in bytes.
    assert encode_command("EVALSHA", "bk:{é}", -7, True, "") == (
        b"*5\r\n$7\r\nEVALSHA\r\n$7\r\nbk:{\xc3\xa9}\r\n$2\r\n-7\r\n$1\r\n1\r\n$0\r\n\r\n"
    )
    # A command is an array of bulk strings: the reader reads it back.
    assert RespReader().feed(encode_command("AUTH", "user", "p\r\nss")) == [
        [b"AUTH", b"user", b"p\r\nss"]
    ]


# Simple strings and errors: one line of text that UTF-8 can encode.
line = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=20)
replies_strategy = st.recursive(
    st.none()
    | st.binary(max_size=40)
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | line
    | st.builds(ReplyError, line),
    lambda children: st.lists(children, max_size=5),
    max_leaves=20,
)


@given(st.lists(replies_strategy, max_size=10), st.lists(st.integers(1, 50), max_size=20))
def test_any_replies_any_split(replies: list[object], sizes: list[int]) -> None:
    stream = b"".join(encode(reply) for reply in replies)
    chunks = []
    start = 0
    for size in sizes:
        chunks.append(stream[start : start + size])
        start += size
    chunks.append(stream[start:])
    assert feed_all(chunks) == [read_back(reply) for reply in replies]


def read_back(reply: object) -> object:
    """``reply`` as the reader returns it: simple strings as bytes."""
    if isinstance(reply, str):
        return reply.encode()
    if isinstance(reply, list):
        return [read_back(item) for item in reply]
    return reply
