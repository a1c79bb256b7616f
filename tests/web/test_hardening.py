"""The edges an attacker tries: forged addresses, rematch floods, crafted input,
huge bodies, taken daily attempts, look-alike names, resync floods, cross-site
posts. Each test reproduces one finding of the hardening review."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from boulanger.race import daily as d
from support.apps import AppServer
from support.racer import Racer, create_race
from support.servers import REPO, RedisProcess, ServerProcess

CODE = "BK1-C4-AAAAAAB"
JSON = {"Content-Type": "application/json"}
FAST = {
    "BOULANGER_COUNTDOWN_MS": "100",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
}


@pytest.fixture
async def fast_server() -> AsyncIterator[AppServer]:
    async with AppServer("memory://", env=FAST) as server:
        yield server


@pytest.fixture
def fast_process() -> Iterator[ServerProcess]:
    """A real process: for what is measured on it (its memory) or read in its log."""
    server = ServerProcess("memory://", env=FAST)
    server.start()
    yield server
    server.stop()


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def _finished_race(server: AppServer, host_key: str, race_id: str) -> Racer:
    """Join ``race_id`` as its host, start it and resign: the race is over."""
    host = await Racer(server.ws_base, race_id).connect()
    assert (await host.join("Host", host_key=host_key))["type"] == "welcome"
    await host.start()
    assert (await host.act("resign"))["type"] == "ack"
    await host.wait_event("race_over")
    return host


# -- 1. addresses ------------------------------------------------------------------


async def test_ipv6_addresses_are_counted_per_64() -> None:
    # Three addresses of one /64, given by the trusted proxy (127.0.0.1) in
    # X-Forwarded-For: uvicorn's ProxyHeadersMiddleware as `boulanger serve` runs it.
    env = {"BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "4"}
    async with (
        AppServer("memory://", env=env) as server,
        httpx.AsyncClient(base_url=server.base) as http,
    ):
        codes = []
        for host in ["2001:db8:5:6::1", "2001:db8:5:6::2", "2001:db8:5:6:ffff::3"] * 3:
            headers = {"X-Forwarded-For": host}
            answer = await http.post("/api/races", json={"code": CODE}, headers=headers)
            codes.append(answer.status_code)
        assert codes.count(201) == 4, codes
        # Another /64 has its own quota.
        answer = await http.post(
            "/api/races", json={"code": CODE}, headers={"X-Forwarded-For": "2001:db8:5:7::1"}
        )
        assert answer.status_code == 201


async def test_a_forged_header_from_an_untrusted_address_is_ignored() -> None:
    # Only the proxy's address is trusted: a client connecting from
    # 127.0.0.2 that writes X-Forwarded-For itself is counted as 127.0.0.2.
    async with AppServer(
        "memory://", env={"BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "5"}
    ) as server:
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(base_url=server.base, transport=transport) as http:
            codes = []
            for n in range(8):
                forged = {"X-Forwarded-For": f"10.9.0.{n}, 192.0.2.{n}"}
                answer = await http.post("/api/races", json={"code": CODE}, headers=forged)
                codes.append(answer.status_code)
        assert codes.count(201) == 5 and codes[-1] == 429, codes


def test_the_shipped_deployment_trusts_only_its_proxy() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    proxy_ip = services["proxy"]["networks"]["default"]["ipv4_address"]
    for name in ("app1", "app2"):
        assert services[name]["environment"]["BOULANGER_FORWARDED_ALLOW_IPS"] == proxy_ip
    subnet = compose["networks"]["default"]["ipam"]["config"][0]["subnet"]
    assert proxy_ip.rsplit(".", 1)[0] == subnet.rsplit(".", 1)[0]
    dockerfile = (REPO / "Dockerfile").read_text()
    assert '"*"' not in dockerfile and "forwarded-allow-ips" not in dockerfile.split("CMD")[-1]
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    assert "$proxy_add_x_forwarded_for" not in conf
    assert conf.count("proxy_set_header X-Forwarded-For $remote_addr;") == conf.count("proxy_pass")


async def test_limits_hold_across_replicas_behind_the_shipped_nginx(
    own_redis: RedisProcess,
) -> None:
    """docker-compose.yml's topology for real: nginx with deploy/nginx.conf, two
    replicas on one Redis trusting only the proxy, a client forging its address."""
    from support.proxy import NginxProcess

    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    shipped = compose["services"]["app1"]["environment"]["BOULANGER_FORWARDED_ALLOW_IPS"]
    assert "*" not in shipped
    env = {
        **FAST,
        "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "6",
        "BOULANGER_MAX_CONNECTIONS_PER_ADDRESS": "5",
        # The proxy's address in this topology, as the compose file names its own.
        "BOULANGER_FORWARDED_ALLOW_IPS": "127.0.0.1",
    }
    apps = [ServerProcess(own_redis.url, env=env) for _ in range(2)]
    for app in apps:
        app.start()
    proxy = NginxProcess([app.port for app in apps])
    proxy.start()
    try:
        tls = proxy.ssl_context()
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2", verify=tls)
        async with httpx.AsyncClient(base_url=proxy.base, transport=transport) as http:
            codes = []
            for n in range(10):
                forged = {"X-Forwarded-For": f"10.9.0.{n}, 192.0.2.1", "X-Real-IP": f"10.9.1.{n}"}
                answer = await http.post("/api/races", json={"code": CODE}, headers=forged)
                codes.append(answer.status_code)
        # Six races in all, though nginx spread the requests over both replicas.
        assert codes.count(201) == 6 and codes[-1] == 429, codes
        # A client at another address is not affected.
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.3", verify=tls)
        async with httpx.AsyncClient(base_url=proxy.base, transport=transport) as http:
            answer = await http.post("/api/races", json={"code": CODE})
            assert answer.status_code == 201

        # Connections: the daily board's sockets go round-robin to both replicas.
        url = f"{proxy.ws_base}/ws/daily/{d.today(int(time.time() * 1000)).isoformat()}"
        held, refused = [], 0
        for n in range(8):
            ws = await connect(
                url,
                local_addr=("127.0.0.2", 0),
                additional_headers={"X-Forwarded-For": f"10.9.2.{n}"},
                ssl=tls,
            )
            try:
                first = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert first["type"] == "daily_leaderboard"
                held.append(ws)
            except ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 1008
                refused += 1
        assert len(held) == 5 and refused == 3
        for ws in held:
            await ws.close()
    finally:
        proxy.stop()
        for app in apps:
            app.stop()


async def test_a_crashed_replica_leaves_no_connection_counted(own_redis: RedisProcess) -> None:
    env = {"BOULANGER_MAX_CONNECTIONS_PER_ADDRESS": "3", "BOULANGER_ADDRESS_LEASE_S": "1.5"}
    doomed, survivor = (ServerProcess(own_redis.url, env=env) for _ in range(2))
    doomed.start()
    survivor.start()
    try:
        created = await create_race(survivor.base, code=CODE)
        held = [await connect(f"{doomed.ws_base}/ws/races/{created['race_id']}") for _ in range(3)]
        for ws in held:
            await ws.send(json.dumps({"type": "ping", "t": 1}))
            assert json.loads(await ws.recv())["type"] == "pong"
        url = f"{survivor.ws_base}/ws/races/{created['race_id']}"
        with pytest.raises(ConnectionClosed) as refused:  # the limit holds on the other replica
            async with connect(url) as extra:
                await extra.recv()
        assert refused.value.rcvd is not None and refused.value.rcvd.code == 1008
        doomed.stop(kill=True)  # its leases are not given back: they expire
        deadline = time.monotonic() + 10
        while True:
            try:
                async with connect(url) as again:
                    await again.send(json.dumps({"type": "ping", "t": 2}))
                    assert json.loads(await again.recv())["type"] == "pong"
                break
            except ConnectionClosed:
                assert time.monotonic() < deadline, "the dead replica's leases never expired"
                await asyncio.sleep(0.2)
        for ws in held:
            await ws.close()  # the server is gone: closes without a handshake
    finally:
        doomed.stop()
        survivor.stop()


# -- 2. rematch ----------------------------------------------------------------------


async def test_one_rematch_per_race_counted_against_the_creation_limit() -> None:
    async with AppServer(
        "memory://", env={**FAST, "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "2"}
    ) as server:
        created = await create_race(server.base, code=CODE)  # race 1 of 2
        host = await _finished_race(server, created["host_key"], created["race_id"])
        for _ in range(10):
            await host.send(type="rematch")
        opened = []
        async with asyncio.timeout(5):
            while len(opened) < 10:
                opened.append(await host.expect("rematch"))
        assert len({m["race_id"] for m in opened}) == 1  # one race, answered ten times
        assert [e["type"] for e in host.events].count("rematch") == 10
        assert len({e["seq"] for e in host.events if e["type"] == "rematch"}) == 1
        # That rematch was race 2 of 2: the rematch of the rematch is refused.
        second = await _finished_race(server, created["host_key"], opened[0]["race_id"])
        await second.send(type="rematch")
        assert (await second.expect("error"))["code"] == "too_many_races"
        for racer in (host, second):
            await racer.close()


# -- 3. crafted input ------------------------------------------------------------------


async def test_strings_that_cannot_be_encoded_are_refused(fast_server: AppServer) -> None:
    server = fast_server
    created = await create_race(server.base, code=CODE)
    racer = await Racer(server.ws_base, created["race_id"]).connect()
    for frame in [
        '{"type":"join","token":"\\ud800"}',
        '{"type":"join","name":"Ann","host_key":"\\udfff"}',
        '{"type":"join","name":"\\ud800nn"}',
        '{"type":"watch","player_id":"\\ud800"}',
    ]:
        await racer.send_raw(frame)
        assert (await racer.expect("error"))["code"] == "bad_message"
    assert (await racer.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    await racer.send_raw('{"type":"move","action_id":"\\ud800","src":"col1","dst":"cell1"}')
    assert (await racer.expect("error"))["code"] == "bad_message"
    await racer.close()
    async with httpx.AsyncClient(base_url=server.base) as http:
        for body in [b'{"code":"\\ud800"}', b'{"player_key":"\\ud800aaaaaaaaaaaaaaaaaa"}']:
            answer = await http.post("/api/races", content=body, headers=JSON)
            assert answer.status_code == 400, answer.text
        today = d.today(int(time.time() * 1000)).isoformat()
        answer = await http.post(
            f"/api/daily/{today}/attempts",
            content=b'{"player_key":"k' + b"a" * 20 + b'","name":"\\ud800"}',
            headers=JSON,
        )
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_message"
    assert "Traceback" not in server.output()


async def test_deep_nesting_and_long_numbers_are_bad_requests(fast_server: AppServer) -> None:
    server = fast_server
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.post("/api/races", content=b"[" * 3000, headers=JSON)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_message"
        answer = await http.post(
            "/api/races", content=b'{"a":' * 40 + b"1" + b"}" * 40, headers=JSON
        )
        assert answer.status_code == 400
        today = d.today(int(time.time() * 1000)).isoformat()
        for query in ["limit=" + "9" * 5000, "offset=" + "1" * 5000, "limit=0020", "limit=-1"]:
            answer = await http.get(f"/api/daily/{today}/leaderboard?{query}")
            assert answer.status_code == 400, query
    created = await create_race(server.base, code=CODE)
    racer = await Racer(server.ws_base, created["race_id"]).connect()
    for frame in [
        "[" * 5000,
        '{"type":"ping","t":' + "7" * 5000 + "}",
        '{"a":' * 40 + "1" + "}" * 40,
    ]:
        await racer.send_raw(frame)
        assert (await racer.expect("error"))["code"] == "bad_json"
    await racer.close()
    assert "Traceback" not in server.output()


async def test_invalid_utf8_frames_log_one_line_each_within_a_limit(
    fast_process: ServerProcess,
) -> None:
    server = fast_process
    created = await create_race(server.base, code=CODE)
    for _ in range(30):
        async with connect(f"{server.ws_base}/ws/races/{created['race_id']}") as ws:
            await ws.send(b'{"type":"ping"}\xff', text=True)
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    output = server.output()
    assert "Traceback" not in output and "UnicodeDecodeError:" not in output.replace(
        "(UnicodeDecodeError:", ""
    )
    lines = [line for line in output.splitlines() if "Invalid UTF-8" in line]
    assert 1 <= len(lines) <= 10, lines  # rate-limited: at most 10 a window
    assert all("client error" in line for line in lines)


# -- 4. bodies ---------------------------------------------------------------------


def _raw_request(port: int, head: bytes, body_chunks: int = 0, chunk: bytes = b"") -> bytes:
    """Send a request head (then maybe body chunks); return the first bytes answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        sock.settimeout(0.001)
        answer = b""
        for _ in range(body_chunks):
            try:
                sock.sendall(chunk)
            except OSError:
                break  # closed on us: the answer is waiting
            try:
                answer += sock.recv(4096)
                if answer:
                    break
            except (TimeoutError, BlockingIOError):
                pass
        sock.settimeout(10)
        try:
            while b"\r\n\r\n" not in answer:
                data = sock.recv(4096)
                if not data:
                    break
                answer += data
        except OSError:
            pass
        return answer


async def test_huge_bodies_are_refused_before_they_are_read(fast_process: ServerProcess) -> None:
    server = fast_process
    assert server.proc is not None
    before = _rss_kb(server.proc.pid)
    # 96 MB announced: 413 on the head alone.
    head = (
        b"POST /api/races HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100663296\r\n\r\n"
    )
    answer = await asyncio.to_thread(_raw_request, server.port, head)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    # 48 MB chunked (no length announced): refused once past 4 KiB, while streaming.
    head = (
        b"POST /api/daily/2026-01-01/attempts HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
    answer = await asyncio.to_thread(_raw_request, server.port, head, 768, chunk)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    grown = _rss_kb(server.proc.pid) - before
    assert grown < 8 * 1024, f"the server grew by {grown} kB"
    async with httpx.AsyncClient(base_url=server.base) as http:
        assert (await http.get("/healthz")).status_code == 200


async def test_json_bodies_need_the_json_content_type(fast_server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=fast_server.base) as http:
        today = d.today(int(time.time() * 1000)).isoformat()
        for path in ["/api/races", f"/api/daily/{today}/attempts"]:
            for headers in [
                {"Content-Type": "text/plain"},
                {},
                {"Content-Type": "application/x-www-form-urlencoded"},
            ]:
                answer = await http.post(path, content=b'{"cells": 4}', headers=headers)
                assert answer.status_code == 415, (path, headers)
                assert answer.json()["error"]["code"] == "not_json"
        answer = await http.post(
            "/api/races", content=b"{}", headers={"Content-Type": "application/json; charset=utf-8"}
        )
        assert answer.status_code == 201


# -- 5. daily attempts -------------------------------------------------------------


async def test_a_stranger_cannot_take_a_ranked_daily_attempt(fast_server: AppServer) -> None:
    server = fast_server
    today = d.today(int(time.time() * 1000)).isoformat()
    key = "owner-key-0123456789abcdef"
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.post(f"/api/daily/{today}/attempts", json={"player_key": key})
        attempt = answer.json()
    assert attempt["ranked"] is True
    stranger = await Racer(server.ws_base, attempt["race_id"]).connect()
    refused = await stranger.join("Mallory")
    assert refused["type"] == "error" and refused["code"] == "not_host"
    refused = await stranger.join("Mallory", host_key="x" * 64)
    assert refused["code"] in ("not_host", "already_joined")
    await stranger.close()
    owner = await Racer(server.ws_base, attempt["race_id"]).connect()
    assert (await owner.join("Ann", host_key=attempt["host_key"]))["type"] == "welcome"
    await owner.close()
    async with httpx.AsyncClient(base_url=server.base) as http:
        again = (await http.post(f"/api/daily/{today}/attempts", json={"player_key": key})).json()
    assert again["race_id"] == attempt["race_id"] and again["ranked"] is True


# -- 6. names ------------------------------------------------------------------------


async def test_look_alike_names_are_taken(fast_server: AppServer) -> None:
    server = fast_server
    created = await create_race(server.base, code=CODE)
    ann = await Racer(server.ws_base, created["race_id"]).connect()
    assert (await ann.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    for look_alike in ["\u0410nn", "\uff21nn", "Ann\u0301", "A\u0336nn", "ANN", "\U0001d400nn"]:
        other = await Racer(server.ws_base, created["race_id"]).connect()
        answer = await other.join(look_alike)
        assert answer["type"] == "error" and answer["code"] == "name_taken", look_alike
        await other.close()
    for invisible in ["A\u200bnn", "Ann\u3164", "\u2800", "Bo\u202e", "\u0301Bo"]:
        other = await Racer(server.ws_base, created["race_id"]).connect()
        answer = await other.join(invisible)
        assert answer["type"] == "error" and answer["code"] == "bad_name", invisible
        await other.close()
    bo = await Racer(server.ws_base, created["race_id"]).connect()
    welcome = await bo.join("\uff22o")  # fullwidth: stored as its NFKC form
    assert welcome["type"] == "welcome"
    names = [p["name"] for p in welcome["race"]["players"]]
    assert names == ["Ann", "Bo"]
    for racer in (ann, bo):
        await racer.close()


# -- 7. resync -----------------------------------------------------------------------


async def test_resync_is_budgeted_and_far_behind_gets_a_snapshot() -> None:
    # The message budget out of the way: the resync budget is what is tested.
    async with AppServer("memory://", env=FAST) as server:
        created = await create_race(server.base, code=CODE)
        ann = await Racer(server.ws_base, created["race_id"]).connect()
        await ann.join("Ann", host_key=created["host_key"])
        await ann.start()
        for i in range(80):  # 80 events
            answer = await (ann.move("col1", "cell1") if i % 2 == 0 else ann.act("undo"))
            assert answer["type"] == "ack"
        seq = ann.last_seq
        assert seq >= 80

        async def count_answers(resync_from: int, resyncs: int) -> tuple[list[str], int | None]:
            got: list[str] = []
            async with connect(f"{server.ws_base}/ws/races/{created['race_id']}") as ws:
                await ws.send(json.dumps({"type": "join", "role": "spectator"}))
                assert json.loads(await ws.recv())["type"] == "welcome"
                for _ in range(resyncs):
                    await ws.send(json.dumps({"type": "resync", "last_seq": resync_from}))
                await ws.send(json.dumps({"type": "ping", "t": 9}))
                try:
                    async with asyncio.timeout(5):
                        while True:
                            message = json.loads(await ws.recv())
                            if message["type"] == "pong" and message["t"] == 9:
                                return got, None
                            got.append(message["type"])
                except ConnectionClosed as closed:
                    return got, closed.rcvd.code if closed.rcvd else None

        # Far behind: one snapshot, not the 80 events.
        got, closed = await count_answers(0, 1)
        assert got == ["snapshot", "resync_done"] and closed is None
        # A little behind: the events themselves.
        got, closed = await count_answers(seq - 5, 1)
        assert got == ["progress"] * 5 + ["resync_done"] and closed is None
        # Thirty resyncs of 30 events each: the resync budget (128 events at
        # once) runs out, the connection is closed with 1008.
        got, closed = await count_answers(seq - 30, 30)
        assert closed == 1008 and got.count("progress") <= 128 + 30, len(got)
        await ann.close()


# -- 8. headers ----------------------------------------------------------------------


async def test_every_answer_has_the_security_headers(fast_server: AppServer) -> None:
    created = await create_race(fast_server.base, code=CODE)
    async with httpx.AsyncClient(base_url=fast_server.base) as http:
        for method, path in [
            ("GET", "/"),
            ("GET", f"/race/{created['race_id']}"),
            ("GET", "/static/app.js"),
            ("GET", "/static/style.css"),
            ("GET", "/healthz"),
            ("GET", "/api/daily"),
            ("GET", f"/api/races/{created['race_id']}"),
            ("GET", "/api/races/nope"),
            ("GET", "/no/such/page"),
            ("POST", "/api/races"),
        ]:
            answer = await http.request(method, path)
            headers = answer.headers
            csp = headers.get("content-security-policy", "")
            assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
            assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
            assert headers.get("x-content-type-options") == "nosniff", path
            assert headers.get("x-frame-options") == "DENY", path
            assert headers.get("referrer-policy") == "same-origin", path
