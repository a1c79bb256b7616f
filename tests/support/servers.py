"""Real processes for the tests: throwaway redis-server and boulanger servers."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import redis

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "test-artifacts" / "logs"
PORT_ATTEMPTS = 5


# Every server the tests start gets its catalog deals in a fixed sequence
# (BOULANGER_CATALOG_SEED): a race created without a code is the same race on
# every run. A test that needs a particular deal still names its game code.
TEST_CATALOG_SEED = "boulanger-tests"
# Every test server's environment, before its own: the deals above, and guests'
# daily attempts ranked, as on a server without accounts (the daily challenge's
# tests play as guests; the accounts' tests turn it off).
SERVER_ENV = {
    "BOULANGER_CATALOG_SEED": TEST_CATALOG_SEED,
    "BOULANGER_DAILY_GUESTS_RANKED": "1",
}


def free_port() -> int:
    """A port nobody listens on right now (another process may take it before us:
    prefer :func:`listening_socket`, or retry as :class:`RedisProcess` does)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_socket(port: int = 0) -> socket.socket:
    """A loopback socket bound and listening: its port is ours until it is closed."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def _wait_for(
    check, timeout: float, what: str, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not come up in {timeout} s")


class RedisProcess:
    """A redis-server on a free loopback port, with AOF on, in a temporary folder.

    ``options`` go last on its command line, so they can override the
    defaults (``"--appendonly", "no"``) or add to them (``"--requirepass", ...``).
    """

    def __init__(self, *options: str, bus: bool = False) -> None:
        self.options = list(options)
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (make system-deps installs it)")
        self.binary = binary
        self.port = free_port()
        # A cluster node's bus port (--cluster-port), chosen again with the port.
        self.bus_port = free_port() if bus else None
        self.dir = tempfile.mkdtemp(prefix="boulanger-redis-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_once = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start redis-server; on its first start, on another port if the one chosen was taken.

        A port found free can be taken by another process before redis-server
        binds it: it then exits at once, and another port is tried. (A restart
        keeps its port: the clients hold its URL.)
        """
        attempts = 1 if self.started_once else PORT_ATTEMPTS
        for attempt in range(attempts):
            try:
                self._start_once()
                self.started_once = True
                return
            except RuntimeError:
                if attempt == attempts - 1:
                    raise
                self.port = free_port()
                if self.bus_port is not None:
                    self.bus_port = free_port()

    def _start_once(self) -> None:
        args = [
            self.binary,
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", self.dir,
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            "--protected-mode", "no",
            *(("--cluster-port", str(self.bus_port)) if self.bus_port is not None else ()),
            *self.options,
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for(self._answers, 10, "redis-server", self.proc)
        except BaseException:
            self.stop(kill=True)
            raise

    def _answers(self) -> bool:
        """Whether *our* redis-server answers on the port (not another one that holds it)."""
        assert self.proc is not None
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
            password = self._password()
            if password is not None:
                sock.sendall(f"AUTH {password}\r\n".encode())
            sock.sendall(b"INFO server\r\n")
            reply = b""
            while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                data = sock.recv(65536)
                if not data:
                    return False
                reply += data
                if reply.startswith(b"-") or b"\r\n-" in reply:
                    return False  # loading, or refused: not ready
            return f"process_id:{self.proc.pid}\r\n".encode() in reply

    def calls(self, command: str) -> int:
        """How many times the server has run ``command`` since it started (INFO commandstats)."""
        client = redis.Redis(port=self.port, password=self._password(), socket_timeout=2)
        try:
            stats = client.info("commandstats").get(f"cmdstat_{command}", {"calls": 0})
        finally:
            client.close()
        return int(stats["calls"])

    def _password(self) -> str | None:
        options = self.options
        if "--requirepass" in options:
            return options[options.index("--requirepass") + 1]
        return None

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                # A primary waits for its replicas on SIGTERM (shutdown-timeout, 10 s).
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stopped (SIGSTOP) meanwhile: its sockets stay open, nothing is answered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)


class ServerProcess:
    """``boulanger serve`` as a real process, on a port the tests hold.

    The test process binds and listens on the socket itself and hands it to
    the server (``--fd``): no other process can take the port between the
    choice and the server's start. Its log goes to ``test-artifacts/logs/``.
    ``broker_url`` None starts it without ``--broker`` (its default: the
    SQLite file in ``--data-dir``, one of ``args``).
    """

    def __init__(
        self,
        broker_url: str | None = "memory://",
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.broker_url = broker_url
        self.args = args
        self.listener: socket.socket | None = listening_socket()
        self.port = int(self.listener.getsockname()[1])
        self.env = {**os.environ, **SERVER_ENV, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log_path = LOGS / f"server-{self.port}-{os.getpid()}.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        # Started again after a stop: the port was given up with the old process.
        listener = self.listener or listening_socket(self.port)
        self.listener = None
        fd = listener.fileno()
        args = [
            sys.executable, "-m", "boulanger", "serve",
            "--fd", str(fd), "--log-level", "warning",
            *(("--broker", self.broker_url) if self.broker_url is not None else ()), *self.args,
        ]  # fmt: skip
        try:
            with self.log_path.open("ab") as log:
                # A session of its own: a kill takes its solver workers with it.
                self.proc = subprocess.Popen(
                    args,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(fd,),
                    start_new_session=True,
                )
        finally:
            listener.close()  # the server has its own copy: the port is its alone
        try:
            _wait_for(
                lambda: httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200,
                30,
                "boulanger serve",
                self.proc,
            )
        except BaseException as error:
            self.stop(kill=True)
            raise RuntimeError(f"boulanger serve did not start: {self.tail()}") from error

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (a clean shutdown), or SIGKILL to the process and its children (a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            if kill:
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            # Whatever of its session outlived it (a solver worker can): gone too.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None
        if self.listener is not None:  # never started
            self.listener.close()
            self.listener = None

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def tail(self) -> str:
        return self.output()[-2000:] if self.log_path.exists() else ""


@contextlib.contextmanager
def running(proc: RedisProcess | ServerProcess) -> Iterator[RedisProcess | ServerProcess]:
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


class RedisCluster:
    """A Redis Cluster of ``primaries`` primaries with one replica each, on free loopback ports.

    Each node is a :class:`RedisProcess` with ``--cluster-enabled yes`` (its
    ``nodes.conf`` in its own folder, so a node killed and started again
    rejoins as itself); ``redis-cli --cluster create`` makes them a cluster,
    3 primaries getting the slot ranges 0-5460, 5461-10922 and 10923-16383.
    ``node_timeout_ms`` is how long a primary must be unreachable before its
    replica takes over. Every wait is bounded; :meth:`cleanup` stops every node.
    """

    def __init__(self, primaries: int = 3, node_timeout_ms: int = 1000) -> None:
        self.node_timeout_ms = node_timeout_ms
        self.nodes = [self._node(node_timeout_ms) for _ in range(2 * primaries)]
        self.primaries = primaries

    @staticmethod
    def _node(node_timeout_ms: int) -> RedisProcess:
        options = [
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(node_timeout_ms),
            "--appendfsync", "everysec",
            # A replica's first sync at once (Redis waits 5 s for more replicas).
            "--repl-diskless-sync-delay", "0",
        ]  # fmt: skip
        # The bus port is the port + 10000 unless told: maybe taken, or past 65535.
        return RedisProcess(*options, bus=True)

    @property
    def url(self) -> str:
        seeds = ",".join(f"127.0.0.1:{node.port}" for node in self.nodes[: self.primaries])
        return f"redis-cluster://{seeds}"

    def start(self) -> None:
        try:
            for node in self.nodes:
                node.start()
            cli = shutil.which("redis-cli")
            if cli is None:
                raise RuntimeError("redis-cli is not installed (it comes with redis-server)")
            create = [
                cli, "--cluster", "create",
                *(f"127.0.0.1:{node.port}" for node in self.nodes),
                "--cluster-replicas", "1", "--cluster-yes",
            ]  # fmt: skip
            subprocess.run(create, check=True, capture_output=True, timeout=60)
            self.wait_ok()
            for node in self.nodes:
                if self.role(node) == "master":
                    self.wait_replicated(node)
        except BaseException:
            self.cleanup()
            raise

    def command(self, node: RedisProcess, *args: str | int) -> object:
        """One command on ``node`` (a throwaway connection)."""
        client = redis.Redis(port=node.port, socket_timeout=5, decode_responses=True)
        try:
            return client.execute_command(*args)
        finally:
            client.close()

    def alive(self) -> list[RedisProcess]:
        return [node for node in self.nodes if node.proc is not None and node.proc.poll() is None]

    def role(self, node: RedisProcess) -> str:
        info = self.command(node, "INFO", "replication")
        assert isinstance(info, dict)
        return str(info["role"])

    def primary_of(self, slot: int) -> RedisProcess:
        """The node serving ``slot`` now, as the live nodes all agree."""
        owners = set()
        for node in self.alive():
            for first, last, owner, *_ in self._slots(node):
                if first <= slot <= last:
                    owners.add(int(owner[1]))
        assert len(owners) == 1, f"the nodes disagree on slot {slot}: {owners}"
        port = owners.pop()
        return next(node for node in self.nodes if node.port == port)

    def _slots(self, node: RedisProcess) -> list[list]:  # type: ignore[type-arg]
        client = redis.Redis(port=node.port, socket_timeout=5)
        try:
            return list(client.execute_command("CLUSTER SLOTS", **{"NEVER_DECODE": True}))
        finally:
            client.close()

    def replica_of(self, primary: RedisProcess) -> RedisProcess:
        """A replica of ``primary``, as the primary lists it."""
        info = self.command(primary, "INFO", "replication")
        assert isinstance(info, dict) and info.get("slave0"), f"{primary.port} has no replica"
        port = int(info["slave0"]["port"])
        return next(node for node in self.nodes if node.port == port)

    def node_id(self, node: RedisProcess) -> str:
        return str(self.command(node, "CLUSTER", "MYID"))

    def wait_ok(self, timeout: float = 30) -> None:
        """Until every live node says ``cluster_state:ok`` and they agree on the slots."""

        def agreed() -> bool:
            nodes = self.alive()
            for node in nodes:
                if "cluster_state:ok" not in str(self.command(node, "CLUSTER", "INFO")):
                    return False
            views = {
                tuple(
                    sorted(
                        (first, last, int(owner[1])) for first, last, owner, *_ in self._slots(n)
                    )
                )
                for n in nodes
            }
            return (
                len(views) == 1 and sum(last - first + 1 for first, last, _ in views.pop()) == 16384
            )

        _wait_for(agreed, timeout, "the cluster's state ok")

    def wait_failover(self, old: RedisProcess, slot: int, timeout: float = 30) -> RedisProcess:
        """Until ``slot``'s primary is not ``old`` any more (killed: its replica took
        over), the cluster ok; the new primary."""

        def moved() -> bool:
            self.wait_ok(timeout)
            return self.primary_of(slot) is not old

        _wait_for(moved, timeout, f"the failover of {old.port}")
        return self.primary_of(slot)

    def wait_replicated(self, primary: RedisProcess, timeout: float = 30) -> None:
        """Until ``primary`` is a primary with a replica connected and in sync."""

        def synced() -> bool:
            info = self.command(primary, "INFO", "replication")
            assert isinstance(info, dict)
            return (
                info["role"] == "master"
                and int(info["connected_slaves"]) >= 1
                and all(info[key]["state"] == "online" for key in info if key.startswith("slave"))
            )

        _wait_for(synced, timeout, f"a replica of {primary.port}")

    def wait_caught_up(self, primary: RedisProcess, timeout: float = 30) -> None:
        """Until every replica of ``primary`` has confirmed all it was sent (replicas
        confirm about once a second): what was written before is on the replicas."""

        def caught_up() -> bool:
            info = self.command(primary, "INFO", "replication")
            assert isinstance(info, dict)
            sent = int(info["master_repl_offset"])
            replicas = [info[key] for key in info if key.startswith("slave")]
            return bool(replicas) and all(
                r["state"] == "online" and int(r["offset"]) >= sent for r in replicas
            )

        _wait_for(caught_up, timeout, f"the replicas of {primary.port} to catch up")

    def cleanup(self) -> None:
        """Every node killed (their data is thrown away) and its folder removed."""
        for node in self.nodes:
            node.stop(kill=True)
            node.cleanup()

    def __enter__(self) -> RedisCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
