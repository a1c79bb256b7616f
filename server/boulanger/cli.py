"""The ``boulanger`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine import EngineError, Game, GameCode, RecordError

if TYPE_CHECKING:
    from .web.settings import Settings

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


def _cmd_solve(args: argparse.Namespace) -> int:
    from .solver import solve

    try:
        code = GameCode.parse(args.code)
    except EngineError as error:
        print(f"boulanger solve: {error}", file=sys.stderr)
        return EXIT_USAGE
    solution = solve(code, budget=args.budget)
    if args.json:
        print(
            json.dumps(
                {
                    "code": str(code),
                    "result": solution.result,
                    "actions": solution.actions,
                    "seconds": round(solution.seconds, 4),
                    "positions": solution.positions,
                }
            )
        )
        return 0
    print(f"{code}: {solution.result} ({solution.positions} positions, {solution.seconds:.3f} s)")
    if solution.par is not None:
        print(f"par {solution.par}")
        for number, action in enumerate(solution.actions, start=1):
            count = action["count"]
            print(
                f"{number:4} {action['src']}>{action['dst']}" + (f"*{count}" if count > 1 else "")
            )
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from .solver import catalog

    def report(deal: int, result: str, par: int | None, progress: catalog.Progress) -> None:
        if args.verbose or result != "unsolvable":
            print(f"deal {deal}: {result}" + (f", par {par}" if par else ""), flush=True)

    if args.cells not in (4, 2, 1) or not 1 <= args.first <= args.last:
        print("boulanger catalog: need --cells 4|2|1 and 1 <= --from <= --to", file=sys.stderr)
        return EXIT_USAGE
    progress = catalog.generate(
        args.cells,
        args.first,
        args.last,
        budget=args.budget,
        out=Path(args.out),
        max_seconds=args.max_seconds,
        retry_unknown=args.retry_unknown,
        report=report,
    )
    print(
        f"searched {progress.searched}: {progress.won} won, {progress.unsolvable} unsolvable,"
        f" {progress.unknown} unknown"
    )
    return 0


DEFAULT_DATA_DIR = "boulanger-data"
DB_NAME = "boulanger.db"


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir or os.environ.get("BOULANGER_DATA_DIR") or DEFAULT_DATA_DIR)


def _broker_url(args: argparse.Namespace) -> str:
    """--broker, else BOULANGER_BROKER_URL, else the SQLite file in the data directory
    (created on first use): what a server keeps survives its restart."""
    url = args.broker or os.environ.get("BOULANGER_BROKER_URL")
    if url:
        return str(url)
    data_dir = _data_dir(args)
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{data_dir / DB_NAME}"


def _cmd_backup(args: argparse.Namespace) -> int:
    from .broker.sqlite.file import SqliteUrl, backup

    try:
        source = SqliteUrl.parse(args.broker).path if args.broker else _data_dir(args) / DB_NAME
        size = backup(source, Path(args.dest))
    except (ValueError, OSError, sqlite3.Error) as error:
        print(f"boulanger backup: {error}", file=sys.stderr)
        return 1
    print(f"boulanger backup: {source} -> {args.dest} ({size} bytes)")
    return 0


def _cmd_moderators(args: argparse.Namespace) -> int:
    import asyncio

    from .broker import BrokerUnavailable, open_store
    from .broker.accounts import AccountStore
    from .broker.contracts import KeyValue
    from .broker.desk import DeskStore
    from .broker.sqlite.file import FileInUse, SqliteUrl
    from .broker.sqlite.live import LiveKeyValue
    from .race.accounts import account_key
    from .race.errors import Refused
    from .race.names import clean_name

    async def decide(kv: KeyValue) -> int:
        accounts, desk = AccountStore(kv), DeskStore(kv)
        if args.action == "list":
            for account_id in await desk.moderators():
                account = await accounts.account(account_id)
                if account is not None:  # a deleted account is no moderator
                    print(account.name)
            return 0
        if not args.name:
            print(f"boulanger moderators {args.action}: name an account", file=sys.stderr)
            return EXIT_USAGE
        try:
            account = await accounts.account_by_name(account_key(clean_name(args.name)))
        except Refused:
            account = None
        if account is None:
            print(f"boulanger moderators: no account named {args.name!r}", file=sys.stderr)
            return 1
        changed = await desk.set_moderator(account.id, args.action == "add")
        verb = "is now" if args.action == "add" else "is no longer"
        if not changed:
            verb = "was already" if args.action == "add" else "was not"
        print(f"{account.name} {verb} a moderator")
        return 0

    async def run() -> int:
        url = _broker_url(args)
        try:
            store = open_store(url)
            await store.start()
        except FileInUse:  # a server has the SQLite file: its keys, beside it
            live = LiveKeyValue(SqliteUrl.parse(url).path)
            try:
                return await decide(live)
            finally:
                live.close()
        try:
            return await decide(store.kv)
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except (FileInUse, ValueError, OSError, BrokerUnavailable, sqlite3.Error) as error:
        print(f"boulanger moderators: {error}", file=sys.stderr)
        return 1


def forwarded_allow_ips() -> str:
    """Whose X-Forwarded-For is trusted unless ``--forwarded-allow-ips`` says otherwise."""
    return os.environ.get("BOULANGER_FORWARDED_ALLOW_IPS", "127.0.0.1")


def uvicorn_options(
    settings: Settings, log_level: str = "info", allow_ips: str | None = None
) -> dict[str, Any]:
    """How ``serve`` has uvicorn run the app, the socket aside (the tests serve it so too)."""
    return {
        "ws": "auto",
        "ws_max_size": settings.max_frame_bytes,
        # Messages are small and many: compressing each one per connection
        # costs far more CPU than the bandwidth it saves.
        "ws_per_message_deflate": False,
        "log_level": log_level,
        "proxy_headers": True,
        "forwarded_allow_ips": forwarded_allow_ips() if allow_ips is None else allow_ips,
    }


def _cmd_serve(args: argparse.Namespace) -> int:
    import gc
    import logging

    import uvicorn

    from .broker.sqlite.file import FileInUse
    from .web import logs
    from .web.app import create_app
    from .web.settings import Settings

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = Settings.from_env(broker_url=_broker_url(args))
        app = create_app(settings)
    except (FileInUse, ValueError, OSError) as error:  # the file locked, a bad URL or path
        print(f"boulanger serve: {error}", file=sys.stderr)
        return 1
    # Full collections of a heap with many live games stall every socket of
    # the process (they made the latency p99 in bench/load.py). Startup
    # objects are frozen out of collection, the oldest generation is
    # collected by the server's sweeper every few minutes instead.
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 1_000_000)
    where = f"http://{args.host}:{args.port}/" if args.fd is None else f"socket fd {args.fd}"
    print(f"boulanger: serving on {where} (broker: {settings.broker_url})")
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        fd=args.fd,
        **uvicorn_options(settings, args.log_level, args.forwarded_allow_ips),
    )
    # After uvicorn has set up its loggers: client-caused errors become one
    # rate-limited line instead of a traceback each (boulanger.web.logs).
    logs.install()
    uvicorn.Server(config).run()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``boulanger`` command line: one subcommand per task, each with its handler."""
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

    solve = sub.add_parser("solve", help="search a game code for a win")
    solve.add_argument("code", help="a game code such as BK1-C4-AAAAA24")
    solve.add_argument("--json", action="store_true", help="print JSON")
    solve.add_argument("--budget", type=float, default=2.0, help="seconds (default 2)")
    solve.set_defaults(func=_cmd_solve)

    cat = sub.add_parser("catalog", help="add solver-verified winnable deals to a catalog file")
    cat.add_argument("--cells", type=int, required=True, help="4, 2 or 1")
    cat.add_argument("--from", dest="first", type=int, default=1, help="first deal number")
    cat.add_argument("--to", dest="last", type=int, required=True, help="last deal number")
    cat.add_argument("--budget", type=float, default=2.0, help="seconds per deal (default 2)")
    cat.add_argument(
        "--out", required=True, help="the catalog file to extend (never the package's data)"
    )
    cat.add_argument("--max-seconds", type=float, help="stop (and save) after this long")
    cat.add_argument("--retry-unknown", action="store_true", help="search undecided deals again")
    cat.add_argument("--verbose", action="store_true", help="also print unsolvable deals")
    cat.set_defaults(func=_cmd_catalog)

    serve = sub.add_parser("serve", help="run the race server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--broker",
        default=None,
        help="sqlite:///FILE (default: DATA_DIR/boulanger.db), memory:// (nothing kept) or"
        " redis://host:port/db; also BOULANGER_BROKER_URL",
    )
    serve.add_argument(
        "--data-dir",
        default=None,
        help="where the default SQLite file lives (default ./boulanger-data, created on first"
        " use); also BOULANGER_DATA_DIR",
    )
    serve.add_argument(
        "--fd",
        type=int,
        default=None,
        help="serve on this inherited, listening socket instead of --host/--port",
    )
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--forwarded-allow-ips",
        default=forwarded_allow_ips(),
        help="addresses or networks of the proxies whose X-Forwarded-For is trusted, comma"
        " separated (default 127.0.0.1; also BOULANGER_FORWARDED_ALLOW_IPS); never '*':"
        " clients could then choose the address their limits count",
    )
    serve.set_defaults(func=_cmd_serve)

    back = sub.add_parser(
        "backup", help="copy the server's SQLite file, safely while it runs (online backup)"
    )
    back.add_argument("dest", help="the copy to write (must not exist)")
    back.add_argument("--data-dir", default=None, help="as for serve (default ./boulanger-data)")
    back.add_argument("--broker", default=None, help="a sqlite:///FILE URL instead of --data-dir")
    back.set_defaults(func=_cmd_backup)

    mods = sub.add_parser(
        "moderators", help="grant, list or take back the moderator role (the review desk)"
    )
    mods.add_argument("action", choices=("add", "list", "remove"))
    mods.add_argument("name", nargs="?", help="the account's name (add, remove)")
    mods.add_argument("--data-dir", default=None, help="as for serve (default ./boulanger-data)")
    mods.add_argument("--broker", default=None, help="the store's URL, as for serve")
    mods.set_defaults(func=_cmd_moderators)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (``sys.argv`` without it); return its exit status."""
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
