"""Load generator: bot players racing through the real WebSocket protocol.

Bots join races of 8 (the host starts each race), and play real games of
Baker's Game: each keeps a local mirror of its game (boulanger.engine.Game)
and follows the solver's solution of its deal, sent as ``move``, ``tap`` or
``double_tap``, with a few illegal moves (answered by ``reject``) and
detours taken back by ``undo`` mixed in, like a human. Near the end of the
solution a bot rewinds a few moves with ``undo`` and plays them again, so
the load stays steady for as long as a run lasts (``--finish`` lets bots win).

Paces: ``human`` (one action every 500 ms per player, jittered 250-750 ms)
and ``flat`` (the next action as soon as the previous one is answered).

Targets, each started here on free loopback ports, pinned to core 0 (the
load generator pins itself to core 1):

- ``baseline``: bench/fanout_baseline.py, a bare uvicorn + Starlette fan-out
                (direct sends, no permessage-deflate, like ``boulanger serve``);
- ``baseline_q``: the same with a queue and writer task per connection;
- ``baseline_gc``: the baseline with boulanger's garbage-collector policy
                (only the young generations collected automatically);
- ``memory``:   one ``boulanger serve`` on the embedded broker;
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

Every process a run starts (servers, redis-servers, load generator
processes) is stopped whatever fails, even if this process is killed.

Measured: action->ack latency, action->rival's progress event latency
(matched by the race's seq), accepted actions per second, errors,
disconnects, lost events (every connected player must see every event of
its race, in order), and the CPU and resident memory of the server
process(es) and of redis-server, read from /proc.

    .venv/bin/python bench/load.py run --target memory --pace human --players 2000
    .venv/bin/python bench/load.py idle --target memory --players 2000
    .venv/bin/python bench/load.py suite --out /tmp/bench.json   # everything, one run

Only loopback addresses are used. The per-address limits of the server (64
connections, 20 races a minute) are met by spreading clients over source
addresses in 127.0.0.0/8 (50 connections, 15 races per address).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import base64
import contextlib
import ctypes
import json
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from array import array
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The source tree whose server is measured (and whose engine the bots mirror):
# the repository, or a snapshot (`git archive HEAD server | tar -x -C DIR`)
# so that edits in progress in the working tree do not change a run.
TREE = Path(os.environ.get("BOULANGER_BENCH_TREE", REPO)).resolve()
sys.path.insert(0, str(TREE / "server"))

from boulanger.engine import Game, IllegalMoveError, Move  # noqa: E402
from boulanger.engine.moves import FIRST_CELL, FOUNDATION, PLACE_NAMES  # noqa: E402

SERVER_CORE = 0
LOAD_CORE = 1
RACE_SIZE = 8
PER_ADDRESS = 50  # connections per source address (the server allows 64)
RACES_PER_ADDRESS = 15  # races created per source address and minute (the server allows 20)
SOLUTIONS = Path(tempfile.gettempdir()) / "boulanger-bench-solutions.json"
DEALS = 300  # races use the first DEALS catalog deals, solved once and cached
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


# -- processes and /proc ----------------------------------------------------


NICE = 0  # --nice: the scheduler priority of every process of a run (servers, redis, bots)


def pin(core: int, nice: int | None = None) -> None:
    """Pin this process to a core. The kernel shares CPU between sessions
    (autogroups) before processes, so each process of a run is started in a
    session of its own; ``nice`` sets that session's priority."""
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {core})
    nice = NICE if nice is None else nice
    if nice:
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, nice)


# Every process a run starts, stopped whatever fails: in run()'s finally, at
# exit (atexit, and SIGTERM/SIGHUP turned into SystemExit so that both run),
# and, should this process be killed outright, by the kernel: each child asks
# for SIGKILL when its parent dies (PR_SET_PDEATHSIG). Servers and redis-server
# run in sessions of their own (see pin()), so each is stopped with its group
# (a server's solver pool too).
STARTED: list[subprocess.Popen[bytes]] = []
WORKERS: list[mp.process.BaseProcess] = []


def die_with_parent() -> None:
    """In a child: be sent SIGKILL when the parent process dies (Linux)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def stop_group(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process's group, then SIGKILL what is left after ``grace`` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            with contextlib.suppress(OSError):  # its children (a solver pool)
                os.killpg(proc.pid, signal.SIGKILL)
            return
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)


def stop_everything() -> None:
    """Kill every process still running that a run started (the last resort, at exit)."""
    for worker in WORKERS:
        if worker.is_alive():
            worker.kill()
    for proc in STARTED:
        stop_group(proc, grace=0.0)


def exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def core_busy() -> list[tuple[int, int]]:
    """(busy, total) jiffies of each core, from /proc/stat."""
    out = []
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                v = [int(x) for x in line.split()[1:]]
                idle = v[3] + v[4]
                out.append((sum(v) - idle, sum(v)))
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kb(pid: int) -> int:
    """Resident memory of a process (VmRSS), from /proc/<pid>/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not come up")


def wait_healthy(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    import httpx

    wait_port(port, proc, what)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        time.sleep(0.05)
    raise TimeoutError(f"{what} is not healthy")


class Target:
    """The server side of a run: redis-server and server processes, pinned to core 0."""

    KINDS = (
        "baseline", "baseline_q", "baseline_gc", "memory", "sqlite", "redis", "redis2", "redis2r",
        "cluster", "cluster_wait",
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

    @property
    def redis(self) -> subprocess.Popen[bytes] | None:
        return self.redises[0] if self.redises else None

    @property
    def redis_pids(self) -> list[int]:
        return [proc.pid for proc in self.redises]

    @property
    def ws_bases(self) -> list[str]:
        return [f"ws://127.0.0.1:{port}" for port in self.ports]

    @property
    def http_bases(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.ports]

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self.servers]

    def _spawn(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        nice = NICE

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
        wait_port(port, proc, "redis-server")
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
            else:
                args = [
                    sys.executable, "-m", "boulanger", "serve", "--host", "127.0.0.1",
                    "--port", str(port), "--broker", broker, "--log-level", "warning",
                ]  # fmt: skip
            proc = self._spawn(args, f"server{n}.log")
            self.servers.append(proc)
            self.ports.append(port)
            wait_healthy(port, proc, f"{self.kind} server")

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


# -- deals and solutions ----------------------------------------------------


def solutions(count: int = DEALS) -> list[tuple[str, list[dict[str, Any]]]]:
    """(code, solution actions) of the first ``count`` catalog deals; solved once, cached.

    Today's daily deal is left out: no race may be created on it until the day ends.
    """
    from boulanger.race.daily import deal_number, today
    from boulanger.solver import catalog, solve

    daily = deal_number(today(int(time.time() * 1000)))

    cache: dict[str, list[dict[str, Any]]] = {}
    if SOLUTIONS.exists():
        with contextlib.suppress(ValueError):
            cache = json.loads(SOLUTIONS.read_text())
    out = []
    changed = False
    for entry in catalog.entries(4):
        if len(out) == count:
            break
        if entry.code.deal == daily:
            continue
        code = str(entry.code)
        if code not in cache:
            found = solve(code, budget=10)
            if found.result != "won":
                continue
            cache[code] = found.actions
            changed = True
        out.append((code, cache[code]))
    if changed:
        SOLUTIONS.write_text(json.dumps(cache))
    return out


def source_address(n: int) -> str:
    """The n-th source address of the load generator, in 127.0.0.0/8 (never 127.0.0.1)."""
    return f"127.0.{10 + n // 200}.{1 + n % 200}"


async def create_races(
    target: Target, count: int, deals: list[tuple[str, list[dict[str, Any]]]]
) -> list[dict[str, Any]]:
    """Create ``count`` races (through the HTTP API, or by name on the baseline)."""
    races = []
    if target.kind.startswith("baseline"):
        for n in range(count):
            code, sol = deals[n % len(deals)]
            races.append({"race_id": f"r{n}", "code": code, "host_key": "-", "solution": sol})
        return races
    import httpx

    base = target.http_bases[0]
    clients: dict[int, httpx.AsyncClient] = {}
    try:
        for n in range(count):
            group = n // RACES_PER_ADDRESS
            if group not in clients:
                transport = httpx.AsyncHTTPTransport(local_address=f"127.0.200.{1 + group}")
                clients[group] = httpx.AsyncClient(base_url=base, transport=transport, timeout=30)
            code, sol = deals[n % len(deals)]
            answer = await clients[group].post("/api/races", json={"code": code})
            if answer.status_code != 201:
                raise RuntimeError(f"creating a race: {answer.status_code} {answer.text}")
            body = answer.json()
            races.append(
                {
                    "race_id": body["race_id"],
                    "code": code,
                    "host_key": body["host_key"],
                    "solution": sol,
                }
            )
    finally:
        for client in clients.values():
            await client.aclose()
    return races


# -- the bots (in worker processes) -----------------------------------------

PENDING_SENDS: set[asyncio.Future[Any]] = set()
EVENTS = ("player_joined", "race_starting", "progress", "race_over", "rematch")


class Stats:
    def __init__(self) -> None:
        self.ack_ms = array("d")
        self.rival_ms = array("d")
        self.accepted = 0  # acks of actions sent in the window
        self.rejected = 0  # rejects (expected ones) of actions sent in the window
        self.sent = 0
        self.errors: dict[str, int] = {}
        self.disconnects = 0
        self.close_codes: dict[str, int] = {}
        self.lost = 0  # events skipped (a gap in seq)
        self.disorder = 0  # events at or below the last seq seen
        self.missing_at_end = 0  # events a connected player never received
        self.connect_failures = 0
        self.retries: dict[str, int] = {}  # try_again answers, sent again as the protocol says

    def retry(self, kind: str) -> None:
        self.retries[kind] = self.retries.get(kind, 0) + 1

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


class RaceRun:
    """The bots of one race, all in one worker process: rival latencies match here."""

    def __init__(self, spec: dict[str, Any], stats: Stats, window: list[float]) -> None:
        self.spec = spec
        self.stats = stats
        self.window = window  # [from, to] in perf_counter time
        self.bots: list[Bot] = []
        self.sent: dict[int, list[Any]] = {}  # seq -> [send time or None, rivals still to see it]
        self.early: dict[int, list[float]] = {}  # seq -> arrival times seen before the ack
        self.started = asyncio.Event()
        self.start_at = 0.0

    def rivals(self) -> int:
        return sum(1 for bot in self.bots if bot.alive) - 1

    def on_ack(self, seq: int, t_send: float, measured: bool) -> None:
        early = self.early.pop(seq, ())
        if measured:
            for t in early:
                self.stats.rival_ms.append((t - t_send) * 1000)
        left = self.rivals() - len(early)
        if left > 0:
            self.sent[seq] = [t_send if measured else None, left]

    def on_rival(self, seq: int, t: float) -> None:
        entry = self.sent.get(seq)
        if entry is None:
            self.early.setdefault(seq, []).append(t)
            return
        if entry[0] is not None:
            self.stats.rival_ms.append((t - entry[0]) * 1000)
        entry[1] -= 1
        if entry[1] <= 0:
            del self.sent[seq]


class Bot:
    def __init__(
        self, race: RaceRun, index: int, base: str, address: str, cfg: dict[str, Any]
    ) -> None:
        self.race = race
        self.index = index
        self.url = f"{base}/ws/races/{race.spec['race_id']}"
        self.address = address
        self.cfg = cfg
        self.stats = race.stats
        self.checks = not cfg["target"].startswith("baseline")  # the baseline accepts all
        self.rnd = random.Random(hash((race.spec["race_id"], index, cfg["seed"])))
        self.game = Game(race.spec["code"])
        self.solution = [Move.from_dict(m) for m in race.spec["solution"]]
        self.path = 0  # solution moves applied
        self.stack: list[bool] = []  # applied moves: True = on the solution path, False = detour
        self.rewind = 0
        self.ws: Any = None
        self.lean: LeanClient | None = None
        self.player_id = ""
        self.last_seq = 0
        self.alive = False
        self.closing = False
        self.pending: tuple[str, float, asyncio.Future[Any], str] | None = None
        self.joined: asyncio.Future[Any] | None = None
        self.actions = 0
        self.reader: asyncio.Task[None] | None = None
        self.done = False

    # -- connection --------------------------------------------------------

    async def connect(self) -> bool:
        loop = asyncio.get_running_loop()
        try:
            if self.cfg["client"] == "lean":
                self.lean = await lean_connect(
                    self, self.url, self.address, self.cfg["compression"]
                )
            else:
                from websockets.asyncio.client import connect

                self.ws = await connect(
                    self.url,
                    local_addr=(self.address, 0),
                    ping_interval=None,
                    max_size=2**20,
                    compression=self.cfg["compression"],
                    open_timeout=60,
                    close_timeout=2,
                )
        except Exception as error:
            self.stats.connect_failures += 1
            self.stats.error(f"connect: {type(error).__name__}")
            return False
        self.alive = True
        self.joined = loop.create_future()
        if self.ws is not None:
            self.reader = asyncio.create_task(self.read_loop())
        host_key = self.race.spec["host_key"] if self.index == 0 else None
        join = {"type": "join", "role": "player", "name": f"bot{self.index}", "host_key": host_key}
        try:
            await self.transmit(json.dumps(join))
            async with asyncio.timeout(60):
                welcome = await self.joined
        except Exception as error:
            self.stats.error(f"join: {type(error).__name__}")
            return False
        if welcome.get("type") != "welcome":
            self.stats.error(f"join: {welcome.get('code')}")
            return False
        self.player_id = welcome["player_id"]
        self.last_seq = max(self.last_seq, welcome["race"]["seq"])
        return True

    async def transmit(self, text: str) -> None:
        if self.lean is not None:
            self.lean.send_text(text)
        else:
            await self.ws.send(text)

    def event_seq(self, seq: int) -> None:
        if seq == self.last_seq + 1:
            self.last_seq = seq
        elif seq > self.last_seq:
            self.stats.lost += seq - self.last_seq - 1
            self.last_seq = seq
        else:
            self.stats.disorder += 1

    async def read_loop(self) -> None:
        """The websockets client's reader: every message to on_text."""
        perf = time.perf_counter
        code = None
        try:
            async for text in self.ws:
                self.on_text(text, perf())
        except Exception as error:
            if not self.closing:
                self.stats.error(f"read: {type(error).__name__}")
        finally:
            code = getattr(self.ws, "close_code", None)
            self.on_closed(code)

    def on_text(self, text: str, t: float) -> None:
        stats = self.stats
        race = self.race
        if text.startswith('{"type":"progress"'):
            i = text.index('"seq":') + 6
            seq = int(text[i : text.index(",", i)])
            if self.player_id:
                # Events of joined players only (the welcome's snapshot covers the rest).
                self.event_seq(seq)
            i = text.index('"player_id":"') + 13
            if text[i : text.index('"', i)] != self.player_id:
                race.on_rival(seq, t)
            return
        message = json.loads(text)
        kind = message["type"]
        if kind in ("ack", "reject"):
            pending = self.pending
            if pending is None or pending[0] != message["action_id"]:
                stats.error(f"unexpected {kind}")
                return
            if kind == "reject" and message.get("code") == "try_again":
                # "send it again with the same action_id"; latency counts from the first send
                stats.retry(f"action: {message.get('reason', '')[:60]}")
                asyncio.get_running_loop().call_later(0.05, self.send_nowait, pending[3])
                return
            self.pending = None
            t_send = pending[1]
            measured = race.window[0] <= t_send < race.window[1]
            if measured:
                stats.ack_ms.append((t - t_send) * 1000)
            if kind == "ack":
                race.on_ack(message["seq"], t_send, measured)
                self.event_seq_ack(message["seq"])
            pending[2].set_result((message, measured))
        elif kind in EVENTS:
            if self.player_id:
                self.event_seq(message["seq"])
            if kind == "race_starting":
                race.start_at = message["start_at"] / 1000
                race.started.set()
        elif kind == "welcome" or kind == "error":
            if self.joined is not None and not self.joined.done():
                self.joined.set_result(message)
            elif (
                message.get("code") == "try_again" and self.index == 0 and not race.started.is_set()
            ):
                stats.retry(f"start: {message.get('reason', '')[:60]}")
                start = json.dumps({"type": "start"})
                asyncio.get_running_loop().call_later(0.2, self.send_nowait, start)
            else:
                stats.error(f"error {message.get('code')}")
        elif kind == "ping":
            self.send_nowait(json.dumps({"type": "pong", "t": message["t"]}))

    def send_nowait(self, text: str) -> None:
        if not self.alive:
            return
        if self.lean is not None:
            with contextlib.suppress(ConnectionError):
                self.lean.send_text(text)
        else:
            task = asyncio.ensure_future(self.ws.send(text))
            PENDING_SENDS.add(task)
            task.add_done_callback(PENDING_SENDS.discard)

    def on_closed(self, code: int | None) -> None:
        if not self.alive:
            return
        self.alive = False
        stats = self.stats
        if not self.closing:
            stats.disconnects += 1
            stats.close_codes[str(code)] = stats.close_codes.get(str(code), 0) + 1
        if self.joined is not None and not self.joined.done():
            self.joined.set_result({"type": "closed"})
        if self.pending is not None and not self.pending[2].done():
            self.pending[2].set_exception(ConnectionError("closed"))

    def event_seq_ack(self, seq: int) -> None:
        # The acting player sees its own progress event too (on boulanger);
        # the baseline sends it only to the other 7: the ack stands for it.
        if not self.checks:
            self.event_seq(seq)

    # -- playing -----------------------------------------------------------

    def _place_card(self, src: str, depth: int) -> str:
        index = PLACE_NAMES.index(src)
        board = self.game.board
        if index >= FIRST_CELL:
            return str(board.cells[index - FIRST_CELL])
        return str(board.columns[index][-depth])

    def choose(self) -> tuple[dict[str, Any], str, Any]:
        """The next action: (message, expected answer, effect on the mirror)."""
        game, rnd, cfg = self.game, self.rnd, self.cfg
        if self.rewind > 0 or (self.stack and not self.stack[-1]):
            return {"type": "undo"}, "ack", "undo"
        if self.path >= len(self.solution):
            return {}, "", None  # won
        if self.path == len(self.solution) - 1 and not cfg["finish"]:
            self.rewind = rnd.randint(3, 20)
            return {"type": "undo"}, "ack", "undo"
        r = rnd.random()
        if r < cfg["illegal"]:
            bad = self._illegal()
            if bad is not None:
                return {"type": "move", **bad.to_dict()}, "reject", None
        elif r < cfg["illegal"] + cfg["detour"]:
            wanted = self.solution[self.path]
            options = [m for m in game.legal_moves() if m != wanted]
            if options:
                move = rnd.choice(options)
                return {"type": "move", **move.to_dict()}, "ack", ("detour", move)
        move = self.solution[self.path]
        if move.dst == "foundation" and move.count == 1 and rnd.random() < 0.4:
            card = self._place_card(move.src, 1)
            if game.tap_move(card) == move:
                return {"type": "tap", "card": card}, "ack", ("path", move)
        if rnd.random() < 0.2 and move.src.startswith("col"):
            card = self._place_card(move.src, move.count)
            if game.double_tap_move(card) == move:
                return {"type": "double_tap", "card": card}, "ack", ("path", move)
        return {"type": "move", **move.to_dict()}, "ack", ("path", move)

    def _illegal(self) -> Move | None:
        board = self.game.board
        cells = len(board.cells)
        places = list(range(8)) + list(range(FIRST_CELL, FIRST_CELL + cells)) + [FOUNDATION]
        for _ in range(20):
            src = self.rnd.randrange(8 + cells)
            src = src if src < 8 else FIRST_CELL + src - 8
            dst = self.rnd.choice(places)
            if src == dst:
                continue
            try:
                board.check(src, dst, 1)
            except IllegalMoveError:
                return Move(PLACE_NAMES[src], PLACE_NAMES[dst], 1)
        return None

    def apply(self, effect: Any, message: dict[str, Any]) -> None:
        game = self.game
        if effect == "undo":
            game.undo()
            if self.stack.pop():
                self.path -= 1
            if self.rewind > 0:
                self.rewind -= 1
        else:
            kind, move = effect
            game.play(move)
            if kind == "path":
                self.path += 1
                self.stack.append(True)
            else:
                self.stack.append(False)
        if self.checks:
            # An ack carries the numbers (an older server's, its whole game).
            view = message.get("game") or message
            if view.get("actions") != game.actions or view.get("score") != game.score:
                self.stats.error("desync: ack's numbers differ from the bot's mirror")
                self.done = True

    async def play(self, stop: float) -> None:
        """Act until ``stop`` (perf_counter time)."""
        race, cfg, stats = self.race, self.cfg, self.stats
        loop = asyncio.get_running_loop()
        perf = time.perf_counter
        pace = cfg["pace_s"]
        await race.started.wait()
        delay = race.start_at - time.time()
        if pace:
            delay += self.rnd.uniform(0, pace)
        await asyncio.sleep(max(0.0, delay) + 0.005)
        next_at = perf()
        while self.alive and not self.done:
            if pace:
                now = perf()
                if next_at > now:
                    await asyncio.sleep(next_at - now)
            if perf() >= stop:
                return
            message, expected, effect = self.choose()
            if not message:
                self.done = True  # won
                return
            self.actions += 1
            action_id = f"a{self.actions}"
            message["action_id"] = action_id
            future = loop.create_future()
            t_send = perf()
            text = json.dumps(message)
            self.pending = (action_id, t_send, future, text)
            if race.window[0] <= t_send < race.window[1]:
                stats.sent += 1
            try:
                await self.transmit(text)
                answer, measured = await future
            except Exception:
                return  # the reader counted the disconnect
            kind = answer["type"]
            if measured:
                if kind == "ack":
                    stats.accepted += 1
                else:
                    stats.rejected += 1
            if kind == "ack" and (expected == "ack" or not self.checks):
                if effect is not None:
                    self.apply(effect, answer)
            elif kind != expected and self.checks:
                stats.error(f"expected {expected}, got {kind} {answer.get('code', '')}")
                self.done = True
            if pace:
                next_at = t_send + pace * self.rnd.uniform(0.5, 1.5)

    async def close(self) -> None:
        self.closing = True
        if self.lean is not None:
            self.lean.close()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            with contextlib.suppress(Exception):
                await self.reader


# -- a lean WebSocket client ---------------------------------------------------
#
# The websockets client costs about as much CPU per received message as the
# server spends per sent one, so on one core it cannot drive the server to its
# limit. This client speaks RFC 6455 directly on an asyncio protocol: the
# upgrade handshake, masked text frames out, unmasked frames in (server frames
# are never masked), ping/pong/close, and permessage-deflate on the way in
# (as a browser, it offers the extension; it sends its own frames uncompressed,
# which RFC 7692 allows).


class LeanClient(asyncio.Protocol):
    def __init__(self, bot: Bot, request: bytes, deflate: bool) -> None:
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


async def lean_connect(bot: Bot, url: str, address: str, compression: str | None) -> LeanClient:
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


async def worker_async(conn: Any, cfg: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    stats = Stats()
    window = [float("inf"), float("inf")]
    races = [RaceRun(spec, stats, window) for spec in cfg["races"]]
    bots = []
    for race in races:
        for index, (base, address) in enumerate(
            zip(race.spec["bases"], race.spec["addresses"], strict=False)
        ):
            bot = Bot(race, index, base, address, cfg)
            race.bots.append(bot)
            bots.append(bot)
    # Join: races one after the other, their 8 players at once; a bounded number in flight.
    gate = asyncio.Semaphore(cfg["connect_concurrency"])

    async def join_race(race: RaceRun) -> None:
        async with gate:
            for bot in race.bots:  # in order: the host first
                await bot.connect()

    await asyncio.gather(*(join_race(race) for race in races))
    joined = sum(1 for bot in bots if bot.player_id)
    conn.send(("joined", joined, len(bots)))
    command = await loop.run_in_executor(None, conn.recv)
    if command[0] == "go":
        _, _start_wall, measure_from, measure_to, stop_wall = command
        offset = time.perf_counter() - time.time()
        window[0], window[1] = measure_from + offset, measure_to + offset
        stop = stop_wall + offset
        for race in races:
            if race.bots and race.bots[0].player_id:
                await race.bots[0].transmit(json.dumps({"type": "start"}))
        players = [asyncio.create_task(bot.play(stop)) for bot in bots if bot.player_id]
        await asyncio.sleep(max(0.0, stop_wall - time.time()))
        # Stop acting; let answers and events in flight arrive.
        _done, pending = await asyncio.wait(players, timeout=5)
        for task in pending:
            task.cancel()
        unanswered = sum(1 for bot in bots if bot.pending is not None)
        if unanswered:
            stats.errors["unanswered at the end"] = unanswered
        await asyncio.sleep(cfg["drain_s"])
        for race in races:
            final = max((bot.last_seq for bot in race.bots), default=0)
            stats.missing_at_end += sum(final - bot.last_seq for bot in race.bots if bot.alive)
        conn.send(("stats", stats_dict(stats)))
    else:  # idle players: the parent has measured, and says stop
        conn.send(("stats", stats_dict(stats)))
    await asyncio.gather(*(bot.close() for bot in bots))


def stats_dict(stats: Stats) -> dict[str, Any]:
    return {
        "ack_ms": stats.ack_ms.tobytes(),
        "rival_ms": stats.rival_ms.tobytes(),
        "accepted": stats.accepted,
        "rejected": stats.rejected,
        "sent": stats.sent,
        "errors": stats.errors,
        "disconnects": stats.disconnects,
        "close_codes": stats.close_codes,
        "lost": stats.lost,
        "disorder": stats.disorder,
        "missing_at_end": stats.missing_at_end,
        "connect_failures": stats.connect_failures,
        "retries": stats.retries,
    }


def worker_main(conn: Any, cfg: dict[str, Any]) -> None:
    die_with_parent()
    with contextlib.suppress(OSError):
        os.setsid()
    pin(LOAD_CORE, cfg["nice"])
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(worker_async(conn, cfg))


# -- a run ------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[k]


def server_env(pace: str, countdown_ms: int) -> dict[str, str]:
    env = {"BOULANGER_COUNTDOWN_MS": str(countdown_ms)}
    if pace == "flat":
        # The default budget (5 a second, burst 40) would close flat-out players with 1008.
        env["BOULANGER_MESSAGES_PER_SECOND"] = "100000"
        env["BOULANGER_MESSAGE_BURST"] = "100000"
    return env


def assign(
    races: list[dict[str, Any]], target: Target, players: int, split: bool
) -> list[dict[str, Any]]:
    """Each race's bots' servers: split across the processes, or one process per race."""
    bases = target.ws_bases
    n = 0
    for number, race in enumerate(races):
        race["bases"], race["addresses"] = [], []
        for index in range(RACE_SIZE):
            if n >= players:
                break
            race["bases"].append(bases[(index if split else number) % len(bases)])
            race["addresses"].append(source_address(n // PER_ADDRESS))
            n += 1
    return races


def run(args: argparse.Namespace, idle: bool = False) -> dict[str, Any]:
    """One measured run against a freshly started target; returns the figures."""
    global NICE
    NICE = args.nice
    pin(LOAD_CORE)
    deals = solutions(args.deals)
    countdown_ms = args.countdown_ms
    target = Target(
        args.target,
        server_env(args.pace, countdown_ms),
        args.redis_fsync,
        getattr(args, "sqlite_synchronous", "full"),
        getattr(args, "sqlite_window_ms", 0.0),
    )
    result: dict[str, Any] = {
        "target": args.target,
        "pace": "idle" if idle else args.pace,
        "players": args.players,
        "compression": args.compression,
        "client": args.client,
        "nice": args.nice,
        "tree": str(TREE),
        "commit": (TREE / "COMMIT").read_text().strip() if (TREE / "COMMIT").exists() else None,
    }
    procs: list[mp.Process] = []
    try:
        target.start()
        time.sleep(1.0)
        rss_start = [rss_kb(pid) for pid in target.pids]
        redis_rss_start = sum(rss_kb(pid) for pid in target.redis_pids)
        race_count = -(-args.players // RACE_SIZE)
        races = asyncio.run(create_races(target, race_count, deals))
        races = assign(races, target, args.players, split=args.target == "redis2")
        workers = max(1, min(args.workers, race_count))
        ctx = mp.get_context("spawn")
        pipes = []
        t_connect = time.time()
        for w in range(workers):
            cfg = {
                "target": args.target,
                "races": races[w::workers],
                "seed": args.seed + w,
                "pace_s": args.interval_ms / 1000 if args.pace == "human" else 0.0,
                "finish": args.finish,
                "illegal": args.illegal,
                "detour": args.detour,
                "compression": None if args.compression == "none" else "deflate",
                "client": args.client,
                "connect_concurrency": 8,
                "drain_s": 3.0,
                "nice": NICE,
            }
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=worker_main, args=(child, cfg), daemon=True)
            proc.start()
            child.close()  # the worker's end: its exit then ends our recv() with EOFError
            WORKERS.append(proc)
            procs.append(proc)
            pipes.append(parent)
        joined = total = 0
        for pipe, proc in zip(pipes, procs, strict=True):
            _, j, t = receive(pipe, proc, args.join_timeout)
            joined, total = joined + j, total + t
        result["joined"] = joined
        result["join_s"] = round(time.time() - t_connect, 1)
        print(f"  {joined}/{total} players joined in {result['join_s']} s", flush=True)
        if idle:
            watch(procs, time.time() + args.settle_s)
            rss_idle = [rss_kb(pid) for pid in target.pids]
            result["rss_start_kb"] = rss_start
            result["rss_idle_kb"] = rss_idle
            grown = sum(rss_idle) - sum(rss_start)
            result["kb_per_idle_player"] = round(grown / max(1, joined), 1)
            if target.redis:
                redis_now = sum(rss_kb(pid) for pid in target.redis_pids)
                result["redis_rss_kb"] = [redis_rss_start, redis_now]
            for pipe in pipes:
                pipe.send(("stop",))
        else:
            now = time.time()
            start_wall = now + 0.2
            measure_from = start_wall + countdown_ms / 1000 + args.warmup
            measure_to = measure_from + args.duration
            for pipe in pipes:
                pipe.send(("go", start_wall, measure_from, measure_to, measure_to + 0.5))
            watch(procs, measure_from)
            pids = target.pids + target.redis_pids
            load_pids = [proc.pid for proc in procs if proc.pid is not None]
            cpu0 = [cpu_seconds(pid) for pid in pids]
            load0 = [cpu_seconds(pid) for pid in load_pids]
            wall0 = time.monotonic()
            cores0 = core_busy()
            if args.profile:
                profile_servers(target, args)
            watch(procs, measure_to)
            wall = time.monotonic() - wall0
            cores1 = core_busy()
            cpu1 = [cpu_seconds(pid) for pid in pids]
            load1 = [cpu_seconds(pid) for pid in load_pids]
            cpu = [round(100 * (b - a) / wall, 1) for a, b in zip(cpu0, cpu1, strict=False)]
            n = len(target.pids)
            result["server_cpu_pct"] = cpu[:n]
            result["redis_cpu_pct"] = round(sum(cpu[n:]), 1) if target.redis else None
            if len(target.redises) > 1:  # a cluster: each node's share
                result["redis_nodes_cpu_pct"] = cpu[n:]
            result["loadgen_cpu_pct"] = round(
                100 * sum(b - a for a, b in zip(load0, load1, strict=False)) / wall, 1
            )
            result["server_rss_kb"] = [rss_kb(pid) for pid in target.pids]
            result["duration_s"] = args.duration
            busy = [
                round(100 * (b[0] - a[0]) / max(1, b[1] - a[1]), 1)
                for a, b in zip(cores0, cores1, strict=False)
            ]
            ours = [sum(cpu), result["loadgen_cpu_pct"]]
            result["core_busy_pct"] = busy
            # What other people's processes used of each core meanwhile (noise).
            result["others_pct"] = [
                round(max(0.0, b - o), 1) for b, o in zip(busy, ours, strict=False)
            ]
            result["loadavg"] = Path("/proc/loadavg").read_text().split()[0]
            if target.kind == "sqlite":
                result["db_bytes"] = target.db_bytes()
                result["races"] = race_count
        merged = merge(
            [receive(pipe, proc, 60)[1] for pipe, proc in zip(pipes, procs, strict=True)]
        )
        summarize(result, merged, args.duration)
        for proc in procs:
            proc.join(30)
        alive = [proc.poll() for proc in target.servers]
        if any(code is not None for code in alive):
            result["server_exited"] = alive
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        if getattr(args, "keep_logs", False):
            print(target.log_tail())
        target.stop()
        result.update(target.figures)
    return result


def watch(procs: list[mp.Process], until: float) -> None:
    """Sleep until ``until`` (wall clock); RuntimeError as soon as a worker has exited."""
    while (left := until - time.time()) > 0:
        time.sleep(min(left, 0.25))
        for proc in procs:
            if not proc.is_alive():
                raise RuntimeError(f"a load generator process exited with {proc.exitcode}")


def receive(pipe: Any, proc: mp.Process, timeout: float) -> Any:
    """The worker's next message; RuntimeError if it exits or says nothing for ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not pipe.poll(1.0):
        if not proc.is_alive():
            raise RuntimeError(f"a load generator process exited with {proc.exitcode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"a load generator process said nothing for {timeout:g} s")
    try:
        return pipe.recv()
    except EOFError:
        raise RuntimeError(f"a load generator process exited with {proc.exitcode}") from None


def profile_servers(target: Target, args: argparse.Namespace) -> None:
    """py-spy on the (first) server process for part of the window, in the background."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out = Path(args.profile)
    seconds = max(5, int(args.duration * 0.6))
    spying = subprocess.Popen(
        [
            spy,
            "record",
            "--pid",
            str(target.pids[0]),
            "--duration",
            str(seconds),
            "--rate",
            str(args.profile_rate),
            "--format",
            "raw",
            "--output",
            str(out),
            # Native frames need the process stopped at each sample.
            *(["--native"] if args.profile_native else ["--nonblocking"]),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: (die_with_parent(), pin(LOAD_CORE)),
    )
    STARTED.append(spying)


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ack_ms": [],
        "rival_ms": [],
        "errors": {},
        "close_codes": {},
        "retries": {},
    }
    for part in parts:
        for key in ("ack_ms", "rival_ms"):
            values = array("d")
            values.frombytes(part[key])
            out[key].extend(values)
        for key in ("errors", "close_codes", "retries"):
            for k, v in part[key].items():
                out[key][k] = out[key].get(k, 0) + v
        for key in (
            "accepted", "rejected", "sent", "disconnects", "lost", "disorder",
            "missing_at_end", "connect_failures",
        ):  # fmt: skip
            out[key] = out.get(key, 0) + part[key]
    return out


def summarize(result: dict[str, Any], merged: dict[str, Any], duration: float) -> None:
    ack = sorted(merged["ack_ms"])
    rival = sorted(merged["rival_ms"])

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)

    result.update(
        {
            "ack_p50_ms": r(percentile(ack, 50)),
            "ack_p95_ms": r(percentile(ack, 95)),
            "ack_p99_ms": r(percentile(ack, 99)),
            "ack_max_ms": r(ack[-1] if ack else None),
            "rival_p50_ms": r(percentile(rival, 50)),
            "rival_p99_ms": r(percentile(rival, 99)),
            "rival_samples": len(rival),
            "answers": len(ack),
            "accepted_per_s": round(merged["accepted"] / duration, 1) if duration else None,
            "rejected_per_s": round(merged["rejected"] / duration, 1) if duration else None,
            "deliveries_per_s": round(len(rival) / duration, 1) if duration else None,
            "errors": merged["errors"],
            "disconnects": merged["disconnects"],
            "close_codes": merged["close_codes"],
            "lost_events": merged["lost"],
            "disordered_events": merged["disorder"],
            "missing_at_end": merged["missing_at_end"],
            "connect_failures": merged["connect_failures"],
            "retries": merged["retries"],
        }
    )


def show(result: dict[str, Any]) -> None:
    keys = [
        "target", "pace", "players", "joined", "accepted_per_s", "deliveries_per_s",
        "ack_p50_ms", "ack_p95_ms", "ack_p99_ms", "rival_p50_ms", "rival_p99_ms",
        "server_cpu_pct", "redis_cpu_pct", "loadgen_cpu_pct", "others_pct", "loadavg", "server_rss_kb",
        "kb_per_idle_player", "rss_start_kb", "rss_idle_kb", "errors", "disconnects",
        "close_codes", "retries", "lost_events", "disordered_events", "missing_at_end",
        "db_bytes", "sqlite_appends_per_transaction", "sqlite_largest_transaction",
    ]  # fmt: skip
    print("  " + ", ".join(f"{k}={result[k]}" for k in keys if k in result), flush=True)


# -- the suite: every configuration in one run --------------------------------


def suite(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    targets = args.targets.split(",")

    def one(target: str, pace: str, players: int, idle: bool = False, **extra: Any) -> None:
        ns = argparse.Namespace(
            **{**vars(args), "target": target, "pace": pace, "players": players}
        )
        for k, v in extra.items():
            setattr(ns, k, v)
        label = "idle" if idle else pace
        print(f"== {target} {label} {players} players", flush=True)
        try:
            result = run(ns, idle=idle)
        except Exception as error:  # one failed configuration must not lose the others
            result = {"target": target, "pace": label, "players": players, "failed": repr(error)}
        show(result)
        results.append(result)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))

    if "human" in args.parts:
        for players in [int(n) for n in args.human_players.split(",")]:
            for target in targets:
                one(target, "human", players, duration=args.duration, warmup=args.warmup)
    if "flat" in args.parts:
        for target in targets:
            one(target, "flat", args.flat_players, duration=args.flat_duration, warmup=3.0)
    if "idle" in args.parts:
        for target in targets:
            one(target, "human", args.players, idle=True)
    report(results)
    return results


def report(results: list[dict[str, Any]]) -> None:
    """Tables: figures and ratios to the baseline of the same pace."""
    base = {r["pace"]: r for r in results if r.get("target") == "baseline" and "failed" not in r}
    for pace in ("human", "flat", "idle"):
        rows = [r for r in results if r.get("pace") == pace]
        if not rows:
            continue
        print(f"\n{pace}")
        for r in rows:
            b = next(
                (
                    x
                    for x in results
                    if x.get("target") == "baseline"
                    and x.get("pace") == pace
                    and x.get("players") == r.get("players")
                    and "failed" not in x
                ),
                base.get(pace),
            )
            if "failed" in r:
                print(f"  {r['target']}: failed {r['failed']}")
                continue
            if pace == "idle":
                print(
                    f"  {r['target']:9} joined={r.get('joined')} KB/player={r.get('kb_per_idle_player')}"
                    f" rss {r.get('rss_start_kb')} -> {r.get('rss_idle_kb')}"
                )
                continue
            line = (
                f"  {r['target']:9} {r['players']:5} acc/s={r['accepted_per_s']} ack p50/p95/p99="
                f"{r['ack_p50_ms']}/{r['ack_p95_ms']}/{r['ack_p99_ms']} rival p50/p99="
                f"{r['rival_p50_ms']}/{r['rival_p99_ms']} cpu={r['server_cpu_pct']}"
                f" redis={r.get('redis_cpu_pct')} load={r['loadgen_cpu_pct']}"
                f" others={r.get('others_pct')}"
                f" errors={sum(r['errors'].values())} disc={r['disconnects']}"
                f" lost={r['lost_events']}+{r['missing_at_end']}"
                f" retries={sum(r.get('retries', {}).values())}"
            )
            if r.get("sqlite_transactions"):
                line += (
                    f" appends/txn={r['sqlite_appends_per_transaction']}"
                    f" (largest {r['sqlite_largest_transaction']}) db={r.get('db_bytes')}"
                )
            if r.get("accepted_per_s"):
                cost = sum(r["server_cpu_pct"]) * 10 / r["accepted_per_s"]
                line += f" cpu_ms/action={cost:.3f}"
            if b and r is not b and b.get("accepted_per_s"):
                ratio = r["accepted_per_s"] / b["accepted_per_s"]
                line += f" | x base: acc/s {ratio:.2f}"
                if b.get("ack_p99_ms") and r.get("ack_p99_ms"):
                    line += f", ack p99 {r['ack_p99_ms'] / b['ack_p99_ms']:.1f}"
                if b.get("rival_p99_ms") and r.get("rival_p99_ms"):
                    line += f", rival p99 {r['rival_p99_ms'] / b['rival_p99_ms']:.1f}"
                bcpu = sum(b["server_cpu_pct"])
                if bcpu:
                    line += f", cpu {sum(r['server_cpu_pct']) / bcpu:.2f}"
            print(line)


def markdown(data: list[dict[str, Any]]) -> None:
    """The tables of docs/performance.md, from a suite's results."""

    def base_for(r: dict[str, Any]) -> dict[str, Any] | None:
        for x in data:
            same = x.get("pace") == r.get("pace") and x.get("players") == r.get("players")
            if x.get("target") == "baseline" and same and "failed" not in x:
                return x
        return None

    def f(v: Any, nd: int = 1) -> str:
        if v is None:
            return "-"
        return f"{v:.{nd}f}" if isinstance(v, float) else str(v)

    for pace in ("human", "flat"):
        rows = [r for r in data if r.get("pace") == pace]
        if not rows:
            continue
        print(f"\n#### {pace}\n")
        print(
            "| config | players | accepted actions/s | x baseline | ack p50 / p95 / p99 ms"
            " | rival p50 / p99 ms | server CPU % of a core | CPU ms per action | redis CPU %"
            " | load gen CPU % | others on core 0 / 1 % | errors | disconnects | lost events"
            " | try_again retries |"
        )
        print("|---" * 15 + "|")
        for r in rows:
            if "failed" in r:
                print(f"| {r['target']} | {r['players']} | failed: {r['failed']} |")
                continue
            b = base_for(r)
            ratio = "-"
            if b and b.get("accepted_per_s"):
                ratio = f"{r['accepted_per_s'] / b['accepted_per_s']:.2f}"
            cpu = r["server_cpu_pct"]
            cost = sum(cpu) * 10 / r["accepted_per_s"] if r["accepted_per_s"] else None
            lost = r["lost_events"] + r["missing_at_end"] + r["disordered_events"]
            retries = sum(r.get("retries", {}).values())
            others = " / ".join(f(x) for x in r.get("others_pct", []))
            print(
                f"| {r['target']} | {r['players']} | {f(r['accepted_per_s'], 0)} | {ratio}"
                f" | {f(r['ack_p50_ms'])} / {f(r['ack_p95_ms'])} / {f(r['ack_p99_ms'])}"
                f" | {f(r['rival_p50_ms'])} / {f(r['rival_p99_ms'])}"
                f" | {' + '.join(f(c) for c in cpu)} | {f(cost, 3)} | {f(r.get('redis_cpu_pct'))}"
                f" | {f(r['loadgen_cpu_pct'])} | {others} | {sum(r['errors'].values())}"
                f" | {r['disconnects']} | {lost} | {retries} |"
            )
    rows = [r for r in data if r.get("pace") == "idle"]
    if rows:
        print("\n#### idle (joined players in the lobby)\n")
        print(
            "| config | joined | server RSS at start MB | with the players MB | KB per idle player"
            " | redis RSS before / after MB |"
        )
        print("|---" * 6 + "|")
        for r in rows:
            if "failed" in r:
                print(f"| {r['target']} | failed |")
                continue
            rr = r.get("redis_rss_kb")
            redis = f"{f(rr[0] / 1024)} / {f(rr[1] / 1024)}" if rr else "-"
            print(
                f"| {r['target']} | {r['joined']}"
                f" | {' + '.join(f(x / 1024) for x in r['rss_start_kb'])}"
                f" | {' + '.join(f(x / 1024) for x in r['rss_idle_kb'])}"
                f" | {r['kb_per_idle_player']} | {redis} |"
            )


# -- command line -------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--players", type=int, default=2000)
        p.add_argument("--duration", type=float, default=30.0, help="measured seconds")
        p.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
        p.add_argument("--interval-ms", type=float, default=500.0, help="human pace (mean)")
        p.add_argument("--countdown-ms", type=int, default=1000)
        p.add_argument("--workers", type=int, default=1, help="load generator processes")
        p.add_argument("--illegal", type=float, default=0.03, help="share of illegal moves")
        p.add_argument("--detour", type=float, default=0.04, help="share of detours (then undo)")
        p.add_argument("--finish", action="store_true", help="bots win and stop")
        p.add_argument("--compression", choices=["deflate", "none"], default="deflate")
        p.add_argument(
            "--client",
            choices=["lean", "websockets"],
            default="lean",
            help="bots' WebSocket client: a lean RFC 6455 client, or the websockets library",
        )
        p.add_argument("--redis-fsync", choices=["always", "everysec", "off"], default="everysec")
        p.add_argument(
            "--sqlite-synchronous",
            choices=["full", "normal"],
            default="full",
            help="the sqlite target's synchronous setting (full: an fsync per commit)",
        )
        p.add_argument(
            "--sqlite-window-ms",
            type=float,
            default=0.0,
            help="the sqlite target's commit window (the writer waits this long for more)",
        )
        p.add_argument("--settle-s", type=float, default=3.0, help="idle: wait before RSS")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument(
            "--nice",
            type=int,
            default=0,
            help="scheduler priority of the run's processes (-20..19)",
        )
        p.add_argument("--profile", help="py-spy output file (first server, in the window)")
        p.add_argument("--profile-rate", type=int, default=100, help="py-spy samples a second")
        p.add_argument(
            "--profile-native", action="store_true", help="py-spy --native: C frames too"
        )
        p.add_argument("--out", help="write the results as JSON here")
        p.add_argument("--keep-logs", action="store_true", help="print the servers' log tails")
        p.add_argument("--deals", type=int, default=DEALS, help="catalog deals the races use")
        p.add_argument(
            "--join-timeout", type=float, default=600.0, help="seconds for every bot to join"
        )

    p_run = sub.add_parser("run", help="one configuration")
    p_run.add_argument("--target", choices=Target.KINDS, default="memory")
    p_run.add_argument("--pace", choices=["human", "flat"], default="human")
    common(p_run)
    p_idle = sub.add_parser("idle", help="memory per idle joined player")
    p_idle.add_argument("--target", choices=Target.KINDS, default="memory")
    common(p_idle)
    p_suite = sub.add_parser("suite", help="baseline and every configuration, one after another")
    p_suite.add_argument("--targets", default="baseline,baseline_q,memory,redis,redis2")
    p_suite.add_argument("--parts", default="human,flat,idle")
    p_suite.add_argument("--human-players", default="2000,1000", help="human pace runs")
    p_suite.add_argument("--flat-players", type=int, default=400)
    p_suite.add_argument("--flat-duration", type=float, default=15.0)
    common(p_suite)
    p_report = sub.add_parser("report", help="print the tables of a suite's JSON file")
    p_report.add_argument("file")
    p_report.add_argument("--markdown", action="store_true", help="markdown tables")
    args = parser.parse_args()
    if args.command == "report":
        data = json.loads(Path(args.file).read_text())
        data = data if isinstance(data, list) else [data]
        if args.markdown:
            markdown(data)
        else:
            report(data)
        return

    atexit.register(stop_everything)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.command == "suite":
        suite(args)
        return
    args.pace = getattr(args, "pace", "human")
    result = run(args, idle=args.command == "idle")
    show(result)
    report([result])
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
