"""JSON per action: the standard library's json against orjson and msgspec, side by side.

    .venv/bin/python bench/codec.py [--reps 9] [--number 20000]

Times exactly what server/boulanger/codec.py does with JSON for one accepted
action on the process that took it: parse the client's ``move`` frame, encode
the event it appends, the ``ack`` (the move and the game's numbers) and the
``progress`` the race's players receive; and, on the other processes of the
race, parse the logged event back (``decode_logged``). The dicts are built
once (``to_wire`` is the same whatever encodes them); each variant only turns
them into text and back. orjson and msgspec write UTF-8 where json writes
``\\uXXXX``: each variant here keeps the wire's bytes as the codec would
(ASCII output taken as it is, any other text encoded again by json).

Variants run interleaved, repetition by repetition, on one CPU where the OS
allows it, timed in process CPU time; the figures are medians, with each
variant's ratio to json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))

from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.race import Answer

COMPACT = (",", ":")

Dumps = Callable[[Any], str]
Loads = Callable[[str], Any]


def samples() -> dict[str, Any]:
    """The texts and dicts of one action, as a race of 8 has them mid-game."""
    move = Move("col3", "cell1", 1)
    ack = Answer(412, move, "9H", 230, 17, 11, "playing", 5).ack("a17", None)
    standing = {
        "player_id": "p3",
        "name": "Zoë",  # names are the one place non-ASCII text meets the wire
        "host": False,
        "foundation_cards": 11,
        "score": 230,
        "actions": 17,
        "status": "playing",
        "elapsed_ms": 48211,
        "rank": None,
        "time_ms": None,
        "review": None,
    }
    progress = p.Progress(412, "running", standing, [f"p{i}" for i in range(8)])
    event = {
        "kind": "action",
        "at": 1_764_570_000_123,
        "player_id": "p3",
        "action_id": "a17",
        "action": {"src": "col3", "dst": "cell1", "count": 1},
    }
    frame = '{"type":"move","action_id":"a17","src":"col3","dst":"cell1","count":1,"ref":"r17"}'
    logged = '{"seq":412,' + json.dumps(event, separators=COMPACT)[1:]
    return {
        "ack": ack.to_wire(),
        "progress": progress.to_wire(),
        "event": event,
        "frame": frame,
        "logged": logged,
    }


def std_dumps(value: Any) -> str:
    return json.dumps(value, separators=COMPACT)


def variants() -> dict[str, tuple[Dumps, Loads]]:
    found: dict[str, tuple[Dumps, Loads]] = {"json": (std_dumps, json.loads)}
    try:
        import orjson
    except ImportError:
        print("orjson: not installed", file=sys.stderr)
    else:

        def or_dumps(value: Any) -> str:
            data = orjson.dumps(value)
            return data.decode() if data.isascii() else std_dumps(value)

        found["orjson"] = (or_dumps, orjson.loads)
    try:
        import msgspec
    except ImportError:
        print("msgspec: not installed", file=sys.stderr)
    else:
        encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder()

        def ms_dumps(value: Any) -> str:
            data = encoder.encode(value)
            return data.decode() if data.isascii() else std_dumps(value)

        found["msgspec"] = (ms_dumps, decoder.decode)
    try:
        from boulanger import codec
    except ImportError:
        pass
    else:
        if hasattr(codec, "dumps"):  # the codec as it is: orjson, non-ASCII escaped after it
            found["codec"] = (codec.dumps, orjson.loads)
    return found


def operations(s: dict[str, Any], dumps: Dumps, loads: Loads) -> dict[str, Callable[[], Any]]:
    ack, progress, event = s["ack"], s["progress"], s["event"]
    frame, logged = s["frame"], s["logged"]
    return {
        "decode move frame": lambda: loads(frame),
        "encode event": lambda: dumps(event),
        "encode ack": lambda: dumps(ack),
        "encode progress": lambda: dumps(progress),
        "decode logged event": lambda: loads(logged),
    }


def check(s: dict[str, Any], found: dict[str, tuple[Dumps, Loads]]) -> None:
    """Every variant writes the bytes json writes and reads what json reads."""
    dumps0, loads0 = found["json"]
    for name, (dumps, loads) in found.items():
        for key in ("ack", "progress", "event"):
            assert dumps(s[key]) == dumps0(s[key]), (name, key)
        for key in ("frame", "logged"):
            assert loads(s[key]) == loads0(s[key]), (name, key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--number", type=int, default=20_000, help="calls per timing")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    s = samples()
    found = variants()
    check(s, found)
    ops = {name: operations(s, *pair) for name, pair in found.items()}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.reps):
        for name, table in ops.items():
            for op, call in table.items():
                start = time.process_time()
                for _ in range(args.number):
                    call()
                elapsed = time.process_time() - start
                times.setdefault((name, op), []).append(elapsed / args.number * 1e6)
    names = list(found)
    print(f"ack {len(std_dumps(s['ack']))} B, progress {len(std_dumps(s['progress']))} B")
    print(f"{'µs per call (median)':<24}" + "".join(f"{n:>18}" for n in names))
    per_action = dict.fromkeys(names, 0.0)
    for op in ops["json"]:
        row = {n: statistics.median(times[(n, op)]) for n in names}
        base = row["json"]
        cells = "".join(f"{row[n]:>9.2f} ({row[n] / base:4.2f}x)" for n in names)
        print(f"{op:<24}{cells}")
        if op != "decode logged event":  # the accepting process spares this one (seq_of)
            for n in names:
                per_action[n] += row[n]
    base = per_action["json"]
    cells = "".join(f"{per_action[n]:>9.2f} ({per_action[n] / base:4.2f}x)" for n in names)
    print(f"{'per accepted action':<24}{cells}")


if __name__ == "__main__":
    main()
