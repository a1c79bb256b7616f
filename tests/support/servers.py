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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
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
        _wait_for(self._answers, 10, "redis-server", self.proc)

    def _answers(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            # PONG, or NOAUTH when it wants a password: either way it is up.
            return sock.recv(16).startswith((b"+PONG", b"-NOAUTH"))

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
    """``boulanger serve`` as a real process on a free port.

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
        self.port = free_port()
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        handle, path = tempfile.mkstemp(prefix="boulanger-server-", suffix=".log")
        os.close(handle)
        self.log_path = Path(path)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [
            sys.executable, "-m", "boulanger", "serve",
            "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning",
            *(("--broker", self.broker_url) if self.broker_url is not None else ()), *self.args,
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            # A session of its own: a kill takes its solver workers with it.
            self.proc = subprocess.Popen(
                args, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        _wait_for(
            lambda: httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200,
            30,
            "boulanger serve",
            self.proc,
        )

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

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextlib.contextmanager
def running(proc: RedisProcess | ServerProcess) -> Iterator[RedisProcess | ServerProcess]:
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
