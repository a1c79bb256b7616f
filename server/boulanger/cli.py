"""The ``boulanger`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .engine import EngineError, Game, GameCode, RecordError

EXIT_USAGE = 2


def _cmd_deal(args: argparse.Namespace) -> int:
    try:
        code = GameCode.parse(args.code)
    except EngineError as error:
        print(f"boulanger deal: {error}", file=sys.stderr)
        return EXIT_USAGE
    game = Game(code)
    if args.json:
        columns = [[str(c) for c in col] for col in game.board.columns]
        print(
            json.dumps(
                {"code": str(code), "deal": code.deal, "cells": code.cells, "columns": columns}
            )
        )
    else:
        print(f"{code}  (deal {code.deal}, {code.cells} cells)")
        print(game.board.text(), end="")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    source = sys.stdin if args.file == "-" else None
    try:
        if source is None:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = source.read()
    except OSError as error:
        print(f"boulanger replay: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    try:
        record: Any = json.loads(text)
    except json.JSONDecodeError as error:
        print(f"boulanger replay: not JSON: {error}", file=sys.stderr)
        return 1
    try:
        game = Game.from_record(record)
    except RecordError as error:
        print(f"boulanger replay: {error}", file=sys.stderr)
        return 1
    summary = {
        "code": str(game.code),
        "won": game.board.won,
        "status": game.status.value,
        "score": game.score,
        "actions": game.actions,
        "foundation_cards": game.foundation_cards,
    }
    print(json.dumps(summary))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boulanger", description="Baker's Game race server and tools."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    deal = sub.add_parser("deal", help="show the layout of a game code")
    deal.add_argument("code", help="a game code such as BK1-C4-AAAAA24")
    deal.add_argument("--json", action="store_true", help="print JSON")
    deal.set_defaults(func=_cmd_deal)

    replay = sub.add_parser("replay", help="re-verify a game record (JSON file, - for stdin)")
    replay.add_argument("file")
    replay.set_defaults(func=_cmd_replay)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
