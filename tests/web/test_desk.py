"""The review desk through the real protocol: moderators, decisions, the audit log, and
every process following them (docs/fair-play.md, "The review desk").

A held result is made the way a bot makes one: today's daily attempt played
with the solver's line as fast as the server takes it (held for its pace,
then for its line). Moderators are granted the role by ``boulanger
moderators add``, the command an operator runs, against the servers' store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from boulanger.race import daily as d
from boulanger.race.accounts import account_key
from boulanger.solver import solve
from support.apps import CHEAP_HASHING, AppServer
from support.days import clear_of_midnight
from support.racer import Racer
from support.servers import RedisProcess

from .test_daily import Watcher

ENV = {
    "BOULANGER_COUNTDOWN_MS": "0",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_DAILY_GUESTS_RANKED": "1",
    **CHEAP_HASHING,
}
WAIT_S = 60.0


@pytest.fixture(autouse=True)
def same_day_throughout() -> None:
    clear_of_midnight(10 * 60)


def _today() -> str:
    return d.today(int(time.time() * 1000)).isoformat()


def _client(server: AppServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.base, headers={"origin": server.base})


async def _until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    """Ask ``check`` again until it answers something true (bounded)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = await check()
        if found:
            return found
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


def moderators(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``boulanger moderators ...`` against the store at ``url``, as an operator runs it."""
    return subprocess.run(
        [sys.executable, "-m", "boulanger.cli", "moderators", *args, "--broker", url],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def _account(server: AppServer, name: str) -> httpx.AsyncClient:
    http = _client(server)
    answer = await http.post("/api/accounts", json={"name": name, "password": "correct horse"})
    assert answer.status_code == 201, answer.text
    return http


async def _moderator(server: AppServer) -> tuple[str, httpx.AsyncClient]:
    name = "Mod" + secrets.token_hex(3)
    http = await _account(server, name)
    if not server.broker_url.startswith("memory"):
        done = await asyncio.to_thread(moderators, server.broker_url, "add", name)
        assert done.returncode == 0 and f"{name} is now a moderator" in done.stdout, done
    else:  # a memory store is the process's own: no command reaches it
        services = server.services
        account = await services.accounts.store.account_by_name(account_key(name))
        assert await services.desk.store.set_moderator(account.id, True)
    return name, http


async def _held_daily(server: AppServer) -> tuple[str, str, dict[str, Any]]:
    """A guest's ranked daily attempt of today, won with the solver's line at machine
    speed: (player key, name, their entry once recorded, held)."""
    key, name = secrets.token_urlsafe(24), f"Bot{secrets.randbelow(10**6)}"
    async with _client(server) as http:
        answer = await http.post(f"/api/daily/{_today()}/attempts", json={"player_key": key})
        attempt = answer.json()
    assert attempt["ranked"] is True, attempt
    bot = await Racer(server.ws_base, attempt["race_id"]).connect()
    await bot.join(name, host_key=attempt["host_key"])
    await bot.send(type="start")
    starting = await bot.wait_event("race_starting")
    await bot.until_started()
    for move in solve(starting["code"], budget=60).actions:
        answer = await bot.move(move["src"], move["dst"], move["count"])
        assert answer["type"] == "ack", answer
    await bot.wait_event("race_over")
    await bot.close()

    async def recorded() -> dict[str, Any] | None:
        me = await _me(server, key)
        return me if me["entry"] is not None else None

    me = await _until(recorded, "the held entry is recorded")
    assert me["entry"]["review"]["status"] == "held" and me["rank"] is None, me
    return key, name, me["entry"]


async def _resigned_daily(server: AppServer) -> tuple[str, str]:
    """A guest's ranked daily of today, resigned at once: it counts (too short to judge)."""
    key, name = secrets.token_urlsafe(24), f"Quit{secrets.randbelow(10**6)}"
    async with _client(server) as http:
        attempt = (
            await http.post(f"/api/daily/{_today()}/attempts", json={"player_key": key})
        ).json()
    player = await Racer(server.ws_base, attempt["race_id"]).connect()
    await player.join(name, host_key=attempt["host_key"])
    await player.send(type="start")
    await player.until_started()
    await player.act("resign")
    await player.wait_event("race_over")
    await player.close()

    async def recorded() -> bool:
        return (await _me(server, key))["rank"] is not None

    await _until(recorded, "the resigned entry is on the leaderboard")
    return key, name


async def _me(server: AppServer, key: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.get(f"/api/daily/{_today()}/me", headers={"X-Player-Key": key})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def _board(server: AppServer) -> list[str]:
    async with httpx.AsyncClient(base_url=server.base) as http:
        page = (await http.get(f"/api/daily/{_today()}/leaderboard?limit=100")).json()
    return [entry["name"] for entry in page["entries"]]


async def _desk_result(http: httpx.AsyncClient, result: str) -> dict[str, Any]:
    answer = await http.get("/api/desk")
    assert answer.status_code == 200, answer.text
    found = [r for r in answer.json()["results"] if r["result"] == result]
    assert len(found) == 1, answer.json()
    return dict(found[0])


async def _decide(
    http: httpx.AsyncClient, result: str, verdict: str, was: str, note: str
) -> httpx.Response:
    return await http.post(
        "/api/desk/decisions", json={"result": result, "verdict": verdict, "note": note, "was": was}
    )


@pytest.fixture
async def two_processes() -> AsyncIterator[tuple[AppServer, AppServer]]:
    """Two apps on one throwaway Redis, each with its own connections: two processes."""
    redis = RedisProcess()
    redis.start()
    try:
        async with AppServer(redis.url, env=ENV) as one, AppServer(redis.url, env=ENV) as two:
            yield one, two
    finally:
        redis.cleanup()


async def test_a_held_daily_result_confirmed_counts_on_every_process_and_a_reversal_is_logged(
    two_processes: tuple[AppServer, AppServer],
) -> None:
    one, two = two_processes
    key, name, entry = await _held_daily(one)
    result = f"daily:{_today()}:{entry['entry_id']}"
    for server in (one, two):
        assert name not in await _board(server)
        assert (await _me(server, key))["streak"] == 0
    moderator, desk = await _moderator(one)
    # A watcher of the live leaderboard on the other process.
    watcher = Watcher(await connect(f"{two.ws_base}/ws/daily/{_today()}"))
    # Greeted once subscribed to the day's channel: no decision published is missed.
    await watcher.until(lambda m: name not in json.dumps(m["entries"]))
    async with contextlib.aclosing(desk):
        # The desk of the other process lists it, held, with its signals and links.
        async with httpx.AsyncClient(base_url=two.base, cookies=desk.cookies) as desk_two:
            seen = await _desk_result(desk_two, result)
        assert seen["status"] == "held" and seen["kind"] == "daily" and seen["name"] == name
        assert "under 100 ms" in seen["review"] and seen["line"]["on_line"] > 0
        assert seen["line_held"] and seen["replay"].startswith("/desk/daily/")
        record = await desk.get(seen["record"])
        assert record.status_code == 200 and record.json()["code"].startswith("BK1-")
        assert (await desk.get(f"{seen['record']}/replay")).status_code == 200

        confirmed = await _decide(desk, result, "confirmed", "held", "replay read: human play")
        assert confirmed.status_code == 200, confirmed.text
        assert confirmed.json()["decision"]["by"] == moderator
        for server in (one, two):
            assert name in await _board(server)
            me = await _me(server, key)
            assert me["rank"] == 1 + (await _board(server)).index(name)
            assert me["streak"] == 1
            assert me["entry"]["review"] == {
                "status": "confirmed",
                "reason": "replay read: human play",
            }
        await watcher.until(lambda m: name in json.dumps(m["entries"]))
        # A decision made on what another moderator changed meanwhile is refused.
        stale = await _decide(desk, result, "disqualified", "held", "too late")
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "decided_meanwhile"

        # Reversed on the other process: off the leaderboard and out of the streak again.
        async with httpx.AsyncClient(
            base_url=two.base, headers={"origin": two.base}, cookies=desk.cookies
        ) as desk_two:
            reversed_ = await _decide(
                desk_two, result, "disqualified", "confirmed", "a solver's line, replayed"
            )
            assert reversed_.status_code == 200, reversed_.text
            audit = (await desk_two.get("/api/desk/audit")).json()["audit"]
        await watcher.until(lambda m: name not in json.dumps(m["entries"]))
        await watcher.close()
        for server in (one, two):
            assert name not in await _board(server)
            me = await _me(server, key)
            assert me["rank"] is None and me["streak"] == 0
            assert me["entry"]["review"] == {
                "status": "disqualified",
                "reason": "a solver's line, replayed",
            }
            assert "disqualified" in me["share"]
        mine = [line for line in audit if line["result"] == result]
        assert [(line["action"], line["was"], line["status"]) for line in mine] == [
            ("reverse", "confirmed", "disqualified"),
            ("decide", "held", "confirmed"),
        ]
        assert all(line["by"] == moderator and line["name"] == name for line in mine)
        assert mine[0]["note"] == "a solver's line, replayed" and mine[0]["at"] >= mine[1]["at"]


async def test_a_disqualified_daily_result_stays_off_and_its_player_sees_why(
    server: AppServer,
) -> None:
    key, name, entry = await _held_daily(server)
    result = f"daily:{_today()}:{entry['entry_id']}"
    _, desk = await _moderator(server)
    async with contextlib.aclosing(desk):
        assert (await _desk_result(desk, result))["status"] == "held"
        answer = await _decide(desk, result, "disqualified", "held", "machine pace")
        assert answer.status_code == 200, answer.text
        assert (await _desk_result(desk, result))["status"] == "disqualified"
        # The same decision again is no new decision: nothing more is logged.
        again = await _decide(desk, result, "disqualified", "disqualified", "machine pace")
        assert again.status_code == 200
        audit = (await desk.get("/api/desk/audit")).json()["audit"]
    assert [line["status"] for line in audit if line["result"] == result] == ["disqualified"]
    assert name not in await _board(server)
    me = await _me(server, key)
    assert me["rank"] is None and me["streak"] == 0
    assert me["entry"]["review"] == {"status": "disqualified", "reason": "machine pace"}
    # The thresholds are not on the player's wire.
    assert "held from" not in json.dumps(me) and "on_line" not in json.dumps(me)

    # A top result that was not held is on the desk too, and can be disqualified.
    quit_key, quitter = await _resigned_daily(server)
    again_desk = httpx.AsyncClient(
        base_url=server.base, headers={"origin": server.base}, cookies=desk.cookies
    )
    async with again_desk as desk:
        top = [r for r in (await desk.get("/api/desk")).json()["results"] if r["name"] == quitter]
        assert len(top) == 1 and top[0]["status"] == "counted" and top[0]["rank"] is not None
        assert top[0]["review"] is None and top[0]["line"] is None
        answer = await _decide(desk, top[0]["result"], "disqualified", "counted", "two accounts")
        assert answer.status_code == 200, answer.text
    assert quitter not in await _board(server)
    assert (await _me(server, quit_key))["entry"]["review"]["status"] == "disqualified"


DESK_ROUTES = [
    ("GET", "/api/desk"),
    ("GET", f"/api/desk?date={_today()}"),
    ("GET", "/api/desk/audit"),
    ("GET", f"/api/desk/daily/{_today()}/records/1"),
    ("GET", f"/api/desk/daily/{_today()}/records/1/replay"),
    ("GET", f"/api/desk/daily/{_today()}/records/1/review"),
    ("GET", f"/api/desk/daily/{_today()}/records/1/text"),
    ("GET", "/api/desk/races/abc/records/p1"),
    ("GET", "/api/desk/races/abc/records/p1/replay"),
    ("GET", "/api/desk/races/abc/records/p1/review"),
    ("GET", "/api/desk/races/abc/records/p1/text"),
    ("POST", "/api/desk/decisions"),
]


async def test_every_desk_route_refuses_a_player_who_is_no_moderator(
    memory_server: AppServer,
) -> None:
    server = memory_server
    body = {"result": f"daily:{_today()}:1", "verdict": "confirmed", "note": "x", "was": "held"}
    async with (
        contextlib.aclosing(await _account(server, "Play" + secrets.token_hex(3))) as player,
        _client(server) as guest,
    ):
        me = (await player.get("/api/me")).json()["account"]
        assert me["moderator"] is False
        for method, path in DESK_ROUTES:
            kwargs: dict[str, Any] = {"json": body} if method == "POST" else {}
            refused = await player.request(method, path, **kwargs)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.json()["error"]["code"] == "not_moderator", path
            answer = await guest.request(method, path, **kwargs)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.json()["error"]["code"] == "signed_out"
    _, desk = await _moderator(server)
    async with contextlib.aclosing(desk):
        assert (await desk.get("/api/me")).json()["account"]["moderator"] is True
        # A decision from another site's page is refused before anything else.
        foreign = await desk.post(
            "/api/desk/decisions", json=body, headers={"origin": "https://elsewhere.example"}
        )
        assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "bad_origin"
        for note, code in (("", "bad_note"), ("x" * 281, "bad_note"), (7, "bad_note")):
            bad = await desk.post("/api/desk/decisions", json={**body, "note": note})
            assert bad.status_code == 400 and bad.json()["error"]["code"] == code, bad.text
        for field, value in (("verdict", "maybe"), ("was", "gone"), ("result", "daily:x:1")):
            bad = await desk.post("/api/desk/decisions", json={**body, field: value})
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_message"
        missing = await desk.post("/api/desk/decisions", json=body)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_entry"


@pytest.mark.parametrize("store", ["redis", "sqlite"])
async def test_moderators_are_granted_listed_and_taken_back_from_the_command_line(
    store: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On Redis, and on the SQLite file a running server holds (beside it)."""
    if store == "redis":
        url = request.getfixturevalue("own_redis").url
    else:
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    async with AppServer(url, env=ENV) as server:
        name = "Ann" + secrets.token_hex(3)
        async with contextlib.aclosing(await _account(server, name)) as http:
            added = await asyncio.to_thread(moderators, server.broker_url, "add", name)
            assert added.returncode == 0 and added.stdout.strip() == f"{name} is now a moderator"
            again = await asyncio.to_thread(moderators, server.broker_url, "add", name.upper())
            assert again.stdout.strip() == f"{name} was already a moderator"
            listed = await asyncio.to_thread(moderators, server.broker_url, "list")
            assert listed.returncode == 0 and listed.stdout.split() == [name]
            assert (await http.get("/api/desk")).status_code == 200
            removed = await asyncio.to_thread(moderators, server.broker_url, "remove", name)
            assert removed.stdout.strip() == f"{name} is no longer a moderator"
            assert (await asyncio.to_thread(moderators, server.broker_url, "list")).stdout == ""
            assert (await http.get("/api/desk")).status_code == 403
        unknown = await asyncio.to_thread(moderators, server.broker_url, "add", "Nobody")
        assert unknown.returncode == 1 and "no account named 'Nobody'" in unknown.stderr
        nameless = await asyncio.to_thread(moderators, server.broker_url, "add")
        assert nameless.returncode == 2


@pytest.fixture
async def rated_server() -> AsyncIterator[AppServer]:
    """Results of fewer than 20 actions are not reviewed: Bo's ten quick ones count."""
    async with AppServer("memory://", env={**ENV, "BOULANGER_REVIEW_MIN_ACTIONS": "20"}) as server:
        yield server


async def test_a_rated_race_waits_for_the_desk_and_follows_its_decision(
    rated_server: AppServer,
) -> None:
    """Ann wins with the solver's line at machine speed (held), Bo resigns: no rating
    moves until a moderator decides; confirmed, both do; disqualified, Ann's goes back."""
    server = rated_server
    ann, bo = "Ann" + secrets.token_hex(3), "Bo" + secrets.token_hex(3)
    code = "BK1-C4-AAAAAAB"  # deal 1
    h_ann, h_bo = await _account(server, ann), await _account(server, bo)
    _, desk = await _moderator(server)
    async with contextlib.aclosing(h_ann), contextlib.aclosing(h_bo), contextlib.aclosing(desk):
        async with httpx.AsyncClient(base_url=server.base) as http:
            created = (await http.post("/api/races", json={"code": code})).json()

        def headers(client: httpx.AsyncClient) -> dict[str, str]:
            return {"origin": server.base, "cookie": f"bk_session={client.cookies['bk_session']}"}

        r_ann = await Racer(server.ws_base, created["race_id"], headers(h_ann)).connect()
        r_bo = await Racer(server.ws_base, created["race_id"], headers(h_bo)).connect()
        pid = (await r_ann.join(ann, host_key=created["host_key"]))["player_id"]
        await r_bo.join(bo)
        await r_ann.start()
        line = solve(code, budget=60).actions
        for _ in range(5):  # Bo plays enough for a rated race (moves and undos count)
            first = line[0]
            assert (await r_bo.move(first["src"], first["dst"], first["count"]))["type"] == "ack"
            assert (await r_bo.act("undo"))["type"] == "ack"
        for move in line:
            answer = await r_ann.move(move["src"], move["dst"], move["count"])
        assert answer["status"] == "won"
        await r_bo.act("resign")
        await r_ann.wait_event("race_over")
        for racer in (r_ann, r_bo):
            await racer.close()

        async def profile(name: str) -> dict[str, Any]:
            return dict((await h_ann.get(f"/api/players/{name}")).json())

        async def listed() -> dict[str, Any] | None:
            found = [
                r
                for r in (await desk.get("/api/desk")).json()["results"]
                if r["result"] == f"race:{created['race_id']}:{pid}"
            ]
            return found[0] if found else None

        seen = await _until(listed, "the held race result is on the desk")
        assert seen["status"] == "held" and seen["kind"] == "race" and seen["rank"] == 1
        assert seen["race"] == f"/race/{created['race_id']}"
        assert (await desk.get(f"{seen['record']}/replay")).status_code == 200
        assert (await profile(ann))["ratings"] == {} and (await profile(bo))["ratings"] == {}
        assert (await profile(ann))["rating_history"] == {}
        assert (await profile(ann))["races"][0]["review"]["status"] == "held"

        confirmed = await _decide(desk, seen["result"], "confirmed", "held", "a fast hand")
        assert confirmed.status_code == 200, confirmed.text
        won, lost = await profile(ann), await profile(bo)
        assert won["ratings"]["4"]["races"] == 1 and lost["ratings"]["4"]["races"] == 1
        assert won["ratings"]["4"]["rating"] > lost["ratings"]["4"]["rating"]
        for p in (won, lost):  # each rating's history: the race's change, applied
            assert [q["shown"] for q in p["rating_history"]["4"]] == [p["ratings"]["4"]["rating"]]
        assert won["races"][0]["review"] == {"status": "confirmed", "reason": "a fast hand"}

        gone = await _decide(desk, seen["result"], "disqualified", "confirmed", "a copied line")
        assert gone.status_code == 200, gone.text
        after = await profile(ann)
        assert after["ratings"]["4"] == {"rating": 0, "races": 0}
        # Taken back: a second point, at the rating it falls back to; Bo's stays.
        points = after["rating_history"]["4"]
        assert [q["shown"] for q in points] == [won["ratings"]["4"]["rating"], 0]
        assert points[0]["at"] <= points[1]["at"]
        assert (await profile(bo))["ratings"]["4"] == lost["ratings"]["4"]
        assert (await profile(bo))["rating_history"] == lost["rating_history"]
        race = (await h_bo.get(f"/api/races/{created['race_id']}")).json()
        standing = next(p for p in race["players"] if p["player_id"] == pid)
        assert standing["review"] == {"status": "disqualified", "reason": "a copied line"}
