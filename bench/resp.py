"""RESP parsing alone: our pure-Python RESP reader against hiredis, side by side.

    .venv/bin/python bench/resp.py [--reps 9] [--size 330] [--old REV]

The bytes the Redis broker reads, cut as a socket hands them over:

- ``pubsub``: pub/sub pushes (``message``, channel ``{race_id}:events``, a
  logged event of ``--size`` bytes), 1 to 64 per read (one when quiet, many
  under load), and one push cut across two reads;
- ``appends``: the appender's replies (``:seq`` integers), 1 to 64 per read.

Each variant turns the reads into the same list of replies (checked):

- ``ours``: ``RespReader`` as it was in pure Python, one ``feed`` per read,
  loaded from git (``--old REV``; by default the parent of the commit that
  put hiredis behind it);
- ``hiredis``: a bare ``hiredis.Reader``, ``feed`` and a ``gets`` loop;
- ``tree``: ``RespReader`` of the working tree (hiredis and our wrapper).
 Timed in process CPU time on one
CPU, interleaved, medians; printed as microseconds per reply and the ratio
to ours. Parsing only: the sockets and the dispatch around it are the same
for both (bench/pubsub.py and bench/appends.py time those).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from boulanger.broker.redis.resp import RespReader  # noqa: E402

RESP = "server/boulanger/broker/resp.py"

Parse = Callable[[list[bytes]], list[Any]]


def push(channel: bytes, data: bytes) -> bytes:
    return b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(channel),
        channel,
        len(data),
        data,
    )


def streams(size: int) -> dict[str, tuple[list[bytes], int]]:
    """Each stream's reads and its count of replies."""
    found: dict[str, tuple[list[bytes], int]] = {}
    for batch in (1, 8, 64):
        reads, count = [], 0
        for n in range(2000 // batch + 1):
            chunk = b"".join(push(b"{r%05d}:events" % (n % 250), b"x" * size) for _ in range(batch))
            reads.append(chunk)
            count += batch
        # One push cut in two, as a read may end anywhere.
        whole = push(b"{r00001}:events", b"y" * size)
        reads += [whole[:40], whole[40:]]
        found[f"pubsub x{batch}"] = (reads, count + 1)
    for batch in (1, 8, 64):
        reads = [b"".join(b":%d\r\n" % (1000 + i) for i in range(batch)) for _ in range(2000)]
        found[f"appends x{batch}"] = (reads, 2000 * batch)
    return found


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout


def old_reader(rev: str | None) -> type:
    """``RespReader`` of ``rev`` (default: before hiredis), loaded from git."""
    if rev is None:
        added = git("log", "--format=%H", "-Simport hiredis", "--", RESP).split()
        rev = f"{added[-1]}^" if added else "HEAD"
    module = types.ModuleType("old_resp")
    exec(compile(git("show", f"{rev}:{RESP}"), f"{rev}:{RESP}", "exec"), module.__dict__)
    print(f"ours: {RESP} of {git('rev-parse', '--short', rev).strip()}")
    return module.RespReader  # type: ignore[no-any-return]


def driving(reader_type: type) -> Parse:
    def parse(reads: list[bytes]) -> list[Any]:
        reader = reader_type()
        out: list[Any] = []
        for data in reads:
            out += reader.feed(data)
        return out

    return parse


def simple_as_bytes(reply: Any) -> Any:
    """Our reader's simple strings (str) as hiredis reads them (bytes)."""
    if isinstance(reply, str):
        return reply.encode()
    if isinstance(reply, list):
        return [simple_as_bytes(item) for item in reply]
    return reply


def variants(old: type) -> dict[str, Parse]:
    found: dict[str, Parse] = {"ours": driving(old)}
    try:
        import hiredis
    except ImportError:
        print("hiredis: not installed", file=sys.stderr)
        return found

    def with_hiredis(reads: list[bytes]) -> list[Any]:
        reader = hiredis.Reader()
        feed, gets = reader.feed, reader.gets
        out: list[Any] = []
        append = out.append
        for data in reads:
            feed(data)
            while (reply := gets()) is not False:
                append(reply)
        return out

    found["hiredis"] = with_hiredis
    found["tree"] = driving(RespReader)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--size", type=int, default=330, help="bytes of a published event")
    parser.add_argument("--old", help="the revision whose pure-Python reader is 'ours'")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    found = variants(old_reader(args.old))
    cases = streams(args.size)
    for name, (reads, count) in cases.items():
        expected = simple_as_bytes(found["ours"](reads))
        assert len(expected) == count, name
        for variant, parse in found.items():
            assert simple_as_bytes(parse(reads)) == expected, (variant, name)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.reps):
        for name, (reads, count) in cases.items():
            for variant, parse in found.items():
                start = time.process_time()
                parse(reads)
                times.setdefault((variant, name), []).append(
                    (time.process_time() - start) / count * 1e6
                )
    names = list(found)
    print(f"{'µs per reply (median)':<22}" + "".join(f"{n:>18}" for n in names))
    for case in cases:
        row = {n: statistics.median(times[(n, case)]) for n in names}
        base = row["ours"]
        print(f"{case:<22}" + "".join(f"{row[n]:>9.3f} ({row[n] / base:4.2f}x)" for n in names))


if __name__ == "__main__":
    main()
