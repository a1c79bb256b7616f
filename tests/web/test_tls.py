"""The shipped deployment serves HTTPS: deploy/nginx.conf run for real (with the
certificate deploy/self_signed_cert.py makes on first start) in front of a server
process with docker-compose.yml's settings; a signed-in player races as themselves
over wss://, because every location passes the scheme on."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx
import pytest
import yaml
from websockets.asyncio.client import connect

from support.proxy import NginxProcess
from support.servers import REPO, ServerProcess

CODE = "BK1-C4-AAAAAAB"  # deal 1


def test_the_compose_file_serves_https_with_secure_cookies_and_its_origin() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    apps = [s for s in services.values() if s.get("build") == "." and "command" not in s]
    assert len(apps) == 4  # two replicas, and two on the cluster profile
    for app in apps:
        env = app["environment"]
        assert env["BOULANGER_COOKIE_SECURE"] == "1"
        assert env["BOULANGER_PUBLIC_ORIGIN"].split(":-")[-1].startswith("https://")
    certs = services["certs"]
    assert "self_signed_cert.py" in " ".join(certs["command"]) and certs["restart"] == "no"
    for name in ("proxy", "proxy-cluster"):
        proxy = services[name]
        assert any(port.endswith(":443") for port in proxy["ports"]), name
        assert any(v.endswith(":/etc/nginx/certs:ro") for v in proxy["volumes"]), name
        assert proxy["depends_on"]["certs"]["condition"] == "service_completed_successfully"
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    # The scheme on every location, WebSockets included; HSTS on every answer.
    assert conf.count("proxy_set_header X-Forwarded-Proto $scheme;") == conf.count("proxy_pass")
    assert 'add_header Strict-Transport-Security "max-age=31536000" always;' in conf


def test_the_certificate_is_made_once_and_a_mounted_one_is_kept(tmp_path: Path) -> None:
    from support.proxy import make_cert

    assert make_cert(tmp_path, ["example.org"]) is True
    first = (tmp_path / "cert.pem").read_bytes()
    assert make_cert(tmp_path, ["example.org"]) is False
    assert (tmp_path / "cert.pem").read_bytes() == first
    assert (tmp_path / "key.pem").stat().st_mode & 0o077 == 0


async def test_a_signed_in_player_races_as_themselves_behind_tls() -> None:
    # docker-compose.yml's settings, but the public origin: the scheme must reach
    # the app from the proxy itself (X-Forwarded-Proto, trusted from 127.0.0.1).
    env = {"BOULANGER_COOKIE_SECURE": "1", "BOULANGER_DAILY_GUESTS_RANKED": "0"}
    app = ServerProcess("memory://", env=env)
    app.start()
    proxy = NginxProcess([app.port, app.port])
    proxy.start()
    try:
        tls = proxy.ssl_context()
        async with httpx.AsyncClient(base_url=proxy.http_base) as plain:
            moved = await plain.get("/daily?x=1")
        assert moved.status_code == 301
        assert moved.headers["location"] == "https://127.0.0.1/daily?x=1"
        origin = proxy.base
        async with httpx.AsyncClient(base_url=proxy.base, verify=tls) as http:
            health = await http.get("/healthz")
            assert health.status_code == 200
            assert health.headers["strict-transport-security"] == "max-age=31536000"
            name = "t" + secrets.token_hex(4)
            made = await http.post(
                "/api/accounts",
                json={"name": name, "password": "correct horse"},
                headers={"origin": origin},
            )
            assert made.status_code == 201, made.text
            cookie = made.headers["set-cookie"]
            assert "; secure" in cookie.lower() and "httponly" in cookie.lower()
            session = http.cookies["bk_session"]
            me = await http.get("/api/me", headers={"origin": origin})
            assert me.status_code == 200 and me.json()["account"]["name"] == name
            created = (await http.post("/api/races", json={"code": CODE})).json()
        headers = {"origin": origin, "cookie": f"bk_session={session}"}
        url = f"{proxy.ws_base}/ws/races/{created['race_id']}"
        async with connect(url, ssl=tls, additional_headers=headers) as ws:
            await ws.send(json.dumps({"type": "join", "role": "player", "name": "Guesty"}))
            while True:
                welcome = json.loads(await ws.recv())
                if welcome["type"] in ("welcome", "error"):
                    break
        assert welcome["type"] == "welcome", welcome
        players = welcome["race"]["players"]
        assert [(p["name"], p.get("signed_in")) for p in players] == [(name, True)]
    finally:
        proxy.stop()
        app.stop()


@pytest.mark.parametrize("location", ["/ws/races/", "/ws/"])
def test_every_websocket_location_passes_the_scheme(location: str) -> None:
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    block = conf[conf.index(f"location {location} {{") :]
    block = block[: block.index("}")]
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in block
