"""Pub/sub receive cost: CPU time the Redis broker's subscriber spends per message.

    .venv/bin/python bench/pubsub.py [--messages 50000] [--channels 8] [--size 330] [--runs 5]

Starts a throwaway redis-server on a free loopback port (``RedisProcess`` of
``tests/support/servers.py``), subscribes one listener per channel, and has a
separate publisher process (this script, ``--publish``) send ``--messages``
messages of about ``--size`` bytes round-robin on the channels, pipelined
1,000 at a time with redis-py. Measured: the CPU time of this process
(``time.process_time``) from the publisher's start until every message has
reached its listener, so only the subscriber side counts: reading the
socket, parsing, decoding and dispatching. Printed: the median of ``--runs``
runs, as microseconds per message and messages per CPU second, for

- ``old``: ``RedisBroker`` as it was before the RESP reader (redis-py's
  ``PubSub.get_message`` loop), loaded from git (``--old REV``, by default
  the parent of the commit that added ``server/boulanger/broker/resp.py``);
- ``new``: ``RedisBroker`` of the working tree (an ``asyncio.Protocol`` and
  ``boulanger.broker.redis.resp.RespReader``);
- ``streams``: the same reader behind ``asyncio.open_connection`` and a
  ``StreamReader.read`` loop, the alternative to the Protocol.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "tests"))

import redis  # noqa: E402

from boulanger.broker import Broker, Listener  # noqa: E402
from boulanger.broker.redis import RedisBroker  # noqa: E402
from boulanger.broker.redis.resp import RespReader, encode_command  # noqa: E402
from compare import Timing, interleaved, old_redis_broker, print_medians  # noqa: E402
from support.servers import RedisProcess  # noqa: E402

BATCH = 1000


def payload(n: int, size: int) -> str:
    """An event much like a race's progress event, padded to ``size`` bytes."""
    head = f'{{"seq":{n},"kind":"progress","player":"p{n % 8}","moves":{n % 97},"pad":"'
    return head + "x" * max(0, size - len(head) - 2) + '"}'


def channel_name(n: int) -> str:
    return f"bk:race:{{bench-{n}}}"


def publish_main(port: int, messages: int, channels: int, size: int) -> None:
    """The publisher process: connect, wait for "go" on stdin, publish, exit."""
    client = redis.Redis(host="127.0.0.1", port=port)
    client.ping()
    names = [channel_name(n) for n in range(channels)]
    texts = [payload(n, size) for n in range(min(messages, 997))]
    print("ready", flush=True)
    sys.stdin.readline()
    for start in range(0, messages, BATCH):
        pipe = client.pipeline(transaction=False)
        for n in range(start, min(messages, start + BATCH)):
            pipe.publish(names[n % channels], texts[n % len(texts)])
        pipe.execute()


class Counter:
    """A listener that counts, and tells when the expected number arrived."""

    def __init__(self, total: list[int], done: asyncio.Event) -> None:
        self.total = total
        self.done = done
        self.probed = False

    def on_message(self, data: str) -> None:
        if data == "probe":
            self.probed = True
            return
        self.total[0] -= 1
        if not self.total[0]:
            self.done.set()

    def on_resync(self) -> None:
        pass


class StreamsSubscriber(Broker):
    """The ``streams`` variant: the RESP reader behind a StreamReader loop (no reconnects)."""

    kind = "streams"

    def __init__(self, port: int) -> None:
        self.port = port
        self.redis = redis.asyncio.Redis(host="127.0.0.1", port=port)
        self.listeners: dict[str, set[Listener]] = {}
        self.task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    async def start(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(encode_command("SUBSCRIBE", "bk:control", *self.listeners))
        self.writer = writer
        self.task = asyncio.create_task(self.read_loop(reader))

    async def read_loop(self, reader: asyncio.StreamReader) -> None:
        resp = RespReader()
        listeners_of = self.listeners
        while data := await reader.read(262144):
            for reply in resp.feed(data):
                if type(reply) is list and len(reply) == 3 and reply[0] == b"message":
                    channel, text = reply[1], reply[2]
                    assert isinstance(channel, bytes) and isinstance(text, bytes)
                    listeners = listeners_of.get(channel.decode())
                    if listeners:
                        decoded = text.decode()
                        for listener in tuple(listeners):
                            listener.on_message(decoded)
                elif type(reply) is list and reply[0] == b"subscribe":
                    self.connected.set()

    async def subscribe(self, channel: str, listener: Listener) -> None:
        self.listeners.setdefault(channel, set()).add(listener)
        if self.task is not None:
            self.writer.write(encode_command("SUBSCRIBE", channel))

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        raise NotImplementedError

    async def publish(self, channel: str, data: str) -> None:
        await self.redis.publish(channel, data)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.writer.close()
        await self.redis.aclose()

    async def ping(self) -> bool:
        return True

    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None:
        raise NotImplementedError

    async def race_meta(self, race_id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    async def append(self, race_id: str, event: str, condition: Any) -> int:
        raise NotImplementedError

    async def read(self, race_id: str, after: int) -> list[str]:
        raise NotImplementedError


async def one_run(
    make: Callable[[], Broker], port: int, messages: int, channels: int, size: int
) -> tuple[float, float]:
    """CPU seconds and wall seconds the subscriber takes to receive ``messages``."""
    publisher = subprocess.Popen(
        [sys.executable, __file__, "--publish", str(port),
         "--messages", str(messages), "--channels", str(channels), "--size", str(size)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert publisher.stdin is not None and publisher.stdout is not None
    broker = make()
    total = [messages]
    done = asyncio.Event()
    listeners = [Counter(total, done) for _ in range(channels)]
    for n, listener in enumerate(listeners):
        await broker.subscribe(channel_name(n), listener)
    await broker.start()
    try:
        await asyncio.wait_for(broker.connected.wait(), 5)  # type: ignore[attr-defined]
        while not all(listener.probed for listener in listeners):  # every SUBSCRIBE live
            for n in range(channels):
                await broker.publish(channel_name(n), "probe")
            await asyncio.sleep(0.05)
        await asyncio.to_thread(publisher.stdout.readline)  # the publisher is connected
        cpu, wall = time.process_time(), time.perf_counter()
        publisher.stdin.write("go\n")
        publisher.stdin.flush()
        await asyncio.wait_for(done.wait(), 300)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await broker.close()
        publisher.wait(30)
    return cpu, wall


async def main_async(args: argparse.Namespace) -> None:
    redis_proc = RedisProcess()
    redis_proc.start()
    try:
        rev, old_class = old_redis_broker(
            args.old,
            ["--diff-filter=A", "--", "server/boulanger/broker/resp.py"],
            "get_message",
            "the redis-py PubSub version",
        )
        url = redis_proc.url
        variants: dict[str, Callable[[], Broker]] = {
            "old": lambda: old_class(url),
            "new": lambda: RedisBroker(url),
            "streams": lambda: StreamsSubscriber(redis_proc.port),
        }
        chosen = args.variants.split(",")
        print(
            f"{args.messages} messages of {len(payload(0, args.size))} bytes on "
            f"{args.channels} channels, median of {args.runs} runs; old = {rev}"
        )

        async def run(name: str, _: int) -> Timing:
            return await one_run(
                variants[name], redis_proc.port, args.messages, args.channels, args.size
            )

        print_medians(await interleaved(chosen, args.runs, run), args.messages, "msg")
    finally:
        redis_proc.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--size", type=int, default=330, help="bytes per message")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--variants", default="old,new,streams")
    parser.add_argument("--old", help="git revision of the old broker (default: before resp.py)")
    parser.add_argument("--publish", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish is not None:
        publish_main(args.publish, args.messages, args.channels, args.size)
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
