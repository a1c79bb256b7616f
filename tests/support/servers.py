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

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "test-artifacts" / "logs"
PORT_ATTEMPTS = 5


# Every server the tests start gets its catalog deals in a fixed sequence
# (BOULANGER_CATALOG_SEED): a race created without a code is the same race on
# every run. A test that needs a particular deal still names its game code.
TEST_CATALOG_SEED = "boulanger-tests"


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

    def __init__(self, *options: str) -> None:
        self.options = list(options)
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (make system-deps installs it)")
        self.binary = binary
        self.port = free_port()
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

    def _password(self) -> str | None:
        options = self.options
        if "--requirepass" in options:
            return options[options.index("--requirepass") + 1]
        return None

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.proc.wait(10)
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
    """

    def __init__(self, broker_url: str = "memory://", env: dict[str, str] | None = None) -> None:
        self.broker_url = broker_url
        self.listener: socket.socket | None = listening_socket()
        self.port = int(self.listener.getsockname()[1])
        self.env = {**os.environ, "BOULANGER_CATALOG_SEED": TEST_CATALOG_SEED, **(env or {})}
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
            "--fd", str(fd), "--broker", self.broker_url, "--log-level", "warning",
        ]  # fmt: skip
        try:
            with self.log_path.open("ab") as log:
                self.proc = subprocess.Popen(
                    args, env=self.env, stdout=log, stderr=subprocess.STDOUT, pass_fds=(fd,)
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
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
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
