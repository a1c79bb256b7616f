"""The server side of a load run: redis-server and server processes, pinned to core 0.

Targets, each started on free loopback ports:

- ``baseline``: bench/fanout_baseline.py, a bare uvicorn + Starlette fan-out
                (direct sends, no permessage-deflate, like ``boulanger serve``);
- ``baseline_q``: the same with a queue and writer task per connection;
- ``baseline_gc``: the baseline with boulanger's garbage-collector policy
                (only the young generations collected automatically);
- ``memory``:   one ``boulanger serve`` on the embedded broker;
- ``memory_picows``: the same app on the embedded broker, its race WebSockets
                served by picows beside uvicorn in the one process
                (bench/picows_trial.py; the ``bench`` extra);
- ``sqlite``:   one ``boulanger serve`` on a SQLite file in a temporary folder
                (``boulanger serve``'s default; ``--sqlite-synchronous``);
- ``redis``:    one ``boulanger serve`` on a throwaway redis-server;
- ``redis2``:   two ``boulanger serve`` on one redis-server, each race's
                players split across both processes;
- ``redis2r``:  the same two processes, each race's players all on one of
                them (races alternate), as the proxy's hash by race routes them;
- ``cluster``:  two ``boulanger serve`` on a Redis Cluster of 3 primaries and
                3 replicas (``redis-cluster://``), each race on one process;
- ``cluster_wait``: the same with the replica wait on (``BOULANGER_REPLICA_WAIT=1``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import procs
from bench.common import REPO, TREE
from bench.procs import SERVER_CORE, STARTED, die_with_parent, free_port, pin, stop_group


class Target:
    """The server side of a run: redis-server and server processes, pinned to core 0."""

    KINDS = (
        "baseline", "baseline_q", "baseline_gc", "memory", "memory_picows", "sqlite", "redis",
        "redis2", "redis2r", "cluster", "cluster_wait",
    )  # fmt: skip
    CLUSTER_PRIMARIES = 3

    def __init__(
        self,
        kind: str,
        env: dict[str, str],
        fsync: str = "everysec",
        synchronous: str = "full",
        window_ms: float = 0.0,
    ) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"target must be one of {self.KINDS}")
        self.kind = kind
        self.env = {**os.environ, **env, "PYTHONPATH": str(TREE / "server")}
        if kind == "cluster_wait":
            self.env["BOULANGER_REPLICA_WAIT"] = "1"
        self.fsync = fsync
        self.synchronous = synchronous
        self.window_ms = window_ms
        self.dir = tempfile.mkdtemp(prefix="boulanger-bench-")
        self.db = Path(self.dir) / "boulanger.db"
        self.figures: dict[str, Any] = {}  # read as the target stops (the SQLite file's)
        self.redises: list[subprocess.Popen[bytes]] = []  # one, or the cluster's nodes
        self.servers: list[subprocess.Popen[bytes]] = []
        self.ports: list[int] = []
        self.ws_ports: list[int] = []  # where the bots connect, when not the HTTP ports

    @property
    def redis(self) -> subprocess.Popen[bytes] | None:
        return self.redises[0] if self.redises else None

    @property
    def redis_pids(self) -> list[int]:
        return [proc.pid for proc in self.redises]

    @property
    def ws_bases(self) -> list[str]:
        return [f"ws://127.0.0.1:{port}" for port in self.ws_ports or self.ports]

    @property
    def http_bases(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.ports]

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self.servers]

    def _spawn(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        nice = procs.NICE

        def prepare() -> None:
            die_with_parent()
            pin(SERVER_CORE, nice)

        with open(Path(self.dir) / log, "ab") as out:
            proc = subprocess.Popen(
                args,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=prepare,
            )
        STARTED.append(proc)
        return proc

    def _redis(self, name: str, *options: str) -> int:
        """Start a redis-server (persistence as --redis-fsync says); its port."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        port = free_port()
        folder = Path(self.dir) / name
        folder.mkdir()
        args = [
            binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder),
            "--save", "", "--protected-mode", "no", *options,
        ]  # fmt: skip
        if self.fsync == "off":
            args += ["--appendonly", "no"]
        else:
            args += ["--appendonly", "yes", "--appendfsync", self.fsync]
        proc = self._spawn(args, f"{name}.log")
        self.redises.append(proc)
        procs.wait_port(port, proc, "redis-server")
        return port

    def _cluster(self) -> str:
        """3 primaries and 3 replicas made a cluster; its redis-cluster:// URL."""
        ports = []
        for n in range(2 * self.CLUSTER_PRIMARIES):
            options = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            # The bus port is the port + 10000 unless told: maybe taken, or past 65535.
            options += ["--cluster-port", str(free_port())]
            ports.append(self._redis(f"redis{n}", *options))
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed")
        nodes = [f"127.0.0.1:{port}" for port in ports]
        subprocess.run(
            [cli, "--cluster", "create", *nodes, "--cluster-replicas", "1", "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        deadline = time.monotonic() + 30
        while True:  # every node sees the cluster ok, every primary has its replica
            infos = [
                subprocess.run(
                    [cli, "-p", str(port), *command], capture_output=True, text=True, timeout=5
                ).stdout
                for port in ports
                for command in (["cluster", "info"], ["info", "replication"])
            ]
            ok = all("cluster_state:ok" in text for text in infos[::2])
            synced = sum("state=online" in text for text in infos[1::2])
            if ok and synced == self.CLUSTER_PRIMARIES:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the cluster did not come up")
            time.sleep(0.2)
        return "redis-cluster://" + ",".join(nodes[: self.CLUSTER_PRIMARIES])

    def start(self) -> None:
        broker = "memory://"
        if self.kind == "sqlite":
            broker = f"sqlite:///{self.db}?synchronous={self.synchronous}"
            if self.window_ms:
                broker += f"&window_ms={self.window_ms:g}"
        if self.kind.startswith("redis"):
            broker = f"redis://127.0.0.1:{self._redis('redis')}/0"
        elif self.kind.startswith("cluster"):
            broker = self._cluster()
        count = 2 if self.kind.startswith(("redis2", "cluster")) else 1
        for n in range(count):
            port = free_port()
            if self.kind.startswith("baseline"):
                countdown = self.env.get("BOULANGER_COUNTDOWN_MS", "1000")
                args = [
                    sys.executable, str(REPO / "bench" / "fanout_baseline.py"),
                    "--port", str(port), "--countdown-ms", countdown,
                ]  # fmt: skip
                if self.kind == "baseline_q":
                    args.append("--queued")
                if self.kind == "baseline_gc":
                    args.append("--gc-young")
            elif self.kind == "memory_picows":
                ws_port = free_port()
                self.ws_ports.append(ws_port)
                args = [
                    sys.executable, str(REPO / "bench" / "picows_trial.py"),
                    "--host", "127.0.0.1", "--port", str(port), "--ws-port", str(ws_port),
                    "--broker", broker, "--log-level", "warning",
                ]  # fmt: skip
            else:
                args = [
                    sys.executable, "-m", "boulanger", "serve", "--host", "127.0.0.1",
                    "--port", str(port), "--broker", broker, "--log-level", "warning",
                ]  # fmt: skip
            proc = self._spawn(args, f"server{n}.log")
            self.servers.append(proc)
            self.ports.append(port)
            procs.wait_healthy(port, proc, f"{self.kind} server")
            for ws_port in self.ws_ports[n:]:
                procs.wait_port(ws_port, proc, f"{self.kind} server's WebSocket port")

    def db_bytes(self) -> int:
        """The SQLite file and its WAL, in bytes."""
        return sum(p.stat().st_size for p in (self.db, Path(f"{self.db}-wal")) if p.exists())

    def stop(self) -> None:
        procs = [*self.servers, *self.redises]
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            stop_group(proc)
        if self.kind == "sqlite":
            self.figures.update(sqlite_figures(Path(self.dir) / "server0.log"))
            self.figures["db_bytes_closed"] = self.db_bytes()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, lines: int = 20) -> str:
        out = []
        for path in sorted(Path(self.dir).glob("*.log")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)


def sqlite_figures(log: Path) -> dict[str, Any]:
    """The group commit's figures, from the line the SQLite broker logs as it closes."""
    pattern = re.compile(
        r"(\d+) appends and (\d+) other writes in (\d+) transactions .* at most (\d+) jobs"
    )
    found = pattern.search(log.read_text(errors="replace")) if log.exists() else None
    if found is None:
        return {}
    appends, others, transactions, largest = map(int, found.groups())
    return {
        "sqlite_appends": appends,
        "sqlite_other_writes": others,
        "sqlite_transactions": transactions,
        "sqlite_appends_per_transaction": round(appends / max(1, transactions), 2),
        "sqlite_largest_transaction": largest,
    }


def server_env(pace: str, countdown_ms: int) -> dict[str, str]:
    """The servers' settings for a run at ``pace``."""
    env = {"BOULANGER_COUNTDOWN_MS": str(countdown_ms)}
    if pace == "flat":
        # The default budget (5 a second, burst 40) would close flat-out players with 1008.
        env["BOULANGER_MESSAGES_PER_SECOND"] = "100000"
        env["BOULANGER_MESSAGE_BURST"] = "100000"
    return env
