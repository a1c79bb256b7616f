"""The shipped deploy/nginx.conf run for real, in front of the tests' server processes."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .servers import PORT_ATTEMPTS, REPO, _wait_for, free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class NginxProcess:
    """nginx with deploy/nginx.conf as shipped, but for the addresses.

    The upstreams ``app1:8000`` and ``app2:8000`` become the given loopback
    ports and ``listen 80`` a free port; every other line is the shipped
    file's. One process (no workers, no daemon) in a temporary folder.
    """

    def __init__(self, app_ports: list[int], conf: Path = REPO / "deploy" / "nginx.conf") -> None:
        if not Path(NGINX).exists():
            raise RuntimeError("nginx is not installed (make system-deps installs nginx-light)")
        self.app_ports = app_ports
        self.conf = conf
        self.dir = Path(tempfile.mkdtemp(prefix="boulanger-nginx-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self._configure(free_port())

    def _configure(self, port: int) -> None:
        self.port = port
        text = self.conf.read_text()
        for number, app_port in enumerate(self.app_ports, start=1):
            text = text.replace(f"app{number}:8000", f"127.0.0.1:{app_port}")
        text, count = re.subn(r"listen 80;", f"listen 127.0.0.1:{self.port};", text)
        assert count == 1 and "app1:8000" not in text, "deploy/nginx.conf changed shape"
        temp = self.dir / "temp"
        temp.mkdir(exist_ok=True)  # a second port, the same folder
        main = f"""
daemon off;
master_process off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    {text}
}}
"""
        (self.dir / "nginx.conf").write_text(main)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start nginx; on another port if the one chosen was taken meanwhile (it exits)."""
        for attempt in range(PORT_ATTEMPTS):
            try:
                self._start_once()
                return
            except RuntimeError:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
                self._configure(free_port())

    def _start_once(self) -> None:
        args = [NGINX, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def answers() -> bool:
            import httpx

            answer = httpx.get(f"{self.base}/healthz", timeout=1)
            # nginx's own Server header: not another process that holds the port.
            return answer.status_code == 200 and answer.headers.get("server", "").startswith(
                "nginx"
            )

        try:
            _wait_for(answers, 20, "nginx", self.proc)
        except BaseException:
            # Not left running (nor to the garbage collector's warning) when it fails.
            self.proc.kill()
            self.proc.wait(5)
            self.proc = None
            raise

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
