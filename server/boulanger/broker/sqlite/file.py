"""The SQLite broker's file: its URL, its one-process lock, connections, backups."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

SYNCHRONOUS = ("full", "normal")


class FileInUse(RuntimeError):
    """Another process has the SQLite file open: one process per file."""


@dataclass(frozen=True, slots=True)
class SqliteUrl:
    """What a ``sqlite://`` URL says: the file and the options after ``?``."""

    path: Path
    synchronous: str = "full"
    window_s: float = 0.0

    @classmethod
    def parse(cls, url: str) -> SqliteUrl:
        """Read a ``sqlite:///file.db?synchronous=...`` URL; ``ValueError`` quoting it if bad."""
        parts = urlsplit(url)
        path = unquote(parts.path[1:])  # the slash after the empty host is not the path's
        if parts.scheme != "sqlite" or parts.netloc or not path or path == ":memory:":
            raise ValueError(
                f"bad SQLite URL {url!r}: use sqlite:///relative/file.db or sqlite:////absolute/file.db"
            )
        options = dict(parse_qsl(parts.query, keep_blank_values=True))
        synchronous = options.pop("synchronous", "full").lower()
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous={synchronous!r} in {url!r}: use full or normal")
        try:
            window_s = float(options.pop("window_ms", "0")) / 1000
        except ValueError:
            raise ValueError(f"window_ms in {url!r} is not a number") from None
        if not 0 <= window_s <= 0.1:
            raise ValueError(f"window_ms in {url!r} must be 0 to 100")
        if options:
            raise ValueError(f"unknown option(s) {', '.join(options)} in {url!r}")
        return cls(Path(path), synchronous, window_s)


def lock_path(path: Path) -> Path:
    """The lock file beside a database file: whoever holds it owns the database."""
    return path.with_name(path.name + ".lock")


def lock(path: Path) -> int:
    """Take the file's exclusive lock, held until its descriptor is closed (or the process dies)."""
    if not path.parent.is_dir():
        raise ValueError(f"no directory {path.parent} for the SQLite file {path.name}")
    where = lock_path(path)
    fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise FileInUse(
            f"{path} is in use by another process"
            + (f" (pid {holder})" if holder.isdigit() else "")
            + f", which holds {where}: one boulanger process per SQLite file"
            " (run several processes on redis:// instead)"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def connect(path: Path, synchronous: str = "full") -> sqlite3.Connection:
    """A connection as every thread of the broker opens one (transactions explicit)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5.0)
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


def backup(source: Path, dest: Path) -> int:
    """Copy a live database with SQLite's online backup; answer the copy's size in bytes.

    Safe while a server writes to ``source``: the copy is one consistent
    snapshot. It is written beside ``dest`` and renamed into place, as a
    single file (journal mode DELETE) that opens anywhere.
    """
    if not source.is_file():
        raise FileNotFoundError(f"no database at {source}")
    if dest.exists():
        raise FileExistsError(f"{dest} exists already; choose a new name")
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{quote(str(source.resolve()))}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(partial)
        try:
            src.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
        finally:
            copy.close()
    finally:
        src.close()
    os.replace(partial, dest)
    return dest.stat().st_size
