"""The shipped deploy/nginx.conf run for real, in front of the tests' server processes."""

from __future__ import annotations

import importlib.util
import re
import shutil
import ssl
import subprocess
import tempfile
from pathlib import Path

from .servers import PORT_ATTEMPTS, REPO, _wait_for, free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def _load_cert_maker() -> object:
    spec = importlib.util.spec_from_file_location(
        "self_signed_cert", REPO / "deploy" / "self_signed_cert.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_cert = _load_cert_maker().make  # type: ignore[attr-defined]


class NginxProcess:
    """nginx with deploy/nginx.conf as shipped, but for the addresses and certificate.

    The upstreams ``app1:8000`` and ``app2:8000`` become the given loopback
    ports, ``listen 80`` and ``listen 443`` free ports, and the certificate
    one that deploy/self_signed_cert.py makes (as docker-compose.yml does on
    first start) in a temporary folder; every other line is the shipped
    file's. One process (no workers, no daemon).
    """

    def __init__(self, app_ports: list[int], conf: Path = REPO / "deploy" / "nginx.conf") -> None:
        if not Path(NGINX).exists():
            raise RuntimeError("nginx is not installed (make system-deps installs nginx-light)")
        self.app_ports = app_ports
        self.conf = conf
        self.dir = Path(tempfile.mkdtemp(prefix="boulanger-nginx-"))
        self.certs = self.dir / "certs"
        make_cert(self.certs, ["localhost", "127.0.0.1"])
        self.proc: subprocess.Popen[bytes] | None = None
        self._configure(free_port(), free_port())

    @property
    def cert(self) -> Path:
        """The certificate nginx serves (self-signed: a client trusts it as its own CA)."""
        return self.certs / "cert.pem"

    def _configure(self, port: int, tls_port: int) -> None:
        self.port = port
        self.tls_port = tls_port
        text = self.conf.read_text()
        for number, app_port in enumerate(self.app_ports, start=1):
            text = text.replace(f"app{number}:8000", f"127.0.0.1:{app_port}")
        text, count = re.subn(r"listen 80;", f"listen 127.0.0.1:{self.port};", text)
        text, tls = re.subn(r"listen 443 ssl", f"listen 127.0.0.1:{self.tls_port} ssl", text)
        text = text.replace("/etc/nginx/certs/", f"{self.certs}/")
        assert count == tls == 1 and "app1:8000" not in text, "deploy/nginx.conf changed shape"
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
    def http_base(self) -> str:
        """Plain HTTP: every request is sent on to HTTPS."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.tls_port}"

    @property
    def ws_base(self) -> str:
        return f"wss://127.0.0.1:{self.tls_port}"

    def ssl_context(self) -> ssl.SSLContext:
        """A client's TLS settings that trust this proxy's certificate."""
        return ssl.create_default_context(cafile=str(self.cert))

    def start(self) -> None:
        """Start nginx; on another port if the one chosen was taken meanwhile (it exits)."""
        for attempt in range(PORT_ATTEMPTS):
            try:
                self._start_once()
                return
            except RuntimeError:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
                self._configure(free_port(), free_port())

    def _start_once(self) -> None:
        args = [NGINX, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def answers() -> bool:
            import httpx

            answer = httpx.get(f"{self.base}/healthz", timeout=1, verify=self.ssl_context())
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
