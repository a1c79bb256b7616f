"""The HTTP side: health, pages, static files, snapshots."""

from __future__ import annotations

import httpx

from support.apps import AppServer
from support.racer import Racer, create_race


async def test_health_pages_and_compressed_client(server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        health = (await http.get("/healthz")).json()
        assert health["ok"] is True and health["broker"] in ("memory", "sqlite", "redis")
        for path in ("/", "/race/anything", "/daily", "/practice"):
            page = await http.get(path)
            assert page.status_code == 200 and "<html" in page.text.lower()
        script = await http.get("/static/app.js", headers={"Accept-Encoding": "gzip"})
        assert script.status_code == 200 and script.headers["content-encoding"] == "gzip"
        assert (await http.get("/static/nope.js")).status_code == 404


async def test_snapshot_is_public_and_holds_no_secrets(server: AppServer) -> None:
    created = await create_race(server.base, cells=4)
    ann = await Racer(server.ws_base, created["race_id"]).connect()
    await ann.join("Ann", host_key=created["host_key"])
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.get(f"/api/races/{created['race_id']}")
        assert (await http.get("/api/races/unknown")).status_code == 404
    snapshot = answer.json()
    # A dealt race: its code is nobody's until the start (tests/web/test_fair_play.py).
    assert created["code"] is None and snapshot["code"] is None and snapshot["state"] == "lobby"
    assert [p["name"] for p in snapshot["players"]] == ["Ann"]
    text = answer.text
    assert ann.token not in text and created["host_key"] not in text and "token" not in text
    await ann.start()
    starting = await ann.wait_event("race_starting")
    async with httpx.AsyncClient(base_url=server.base) as http:
        running = (await http.get(f"/api/races/{created['race_id']}")).json()
    assert running["code"] == starting["code"] and running["code"].startswith("BK1-C4-")
    await ann.close()
