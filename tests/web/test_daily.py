"""The daily challenge end to end: real server processes, real Redis, scripted clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from boulanger.broker import open_store
from boulanger.race import daily as d
from boulanger.race.ids import secret_hash
from boulanger.solver import catalog, solve
from boulanger.web.settings import Settings
from support.apps import AppServer
from support.days import clear_of_midnight
from support.racer import Racer
from support.servers import RedisProcess

# Short countdowns, and a message budget a scripted winner on loopback cannot exceed;
# no review, so that the scripted winner is ranked (tests/web/test_fair_play.py
# has it held).
FAST = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_REVIEW_MIN_ACTIONS": "1000000",
}


def _today() -> d.date:
    return d.today(int(time.time() * 1000))


@pytest.fixture(scope="module", autouse=True)
def same_day_throughout() -> None:
    """This module's tests (a couple of minutes at most) all run on one UTC day."""
    clear_of_midnight(10 * 60)


@pytest.fixture(scope="module")
def winning_actions() -> list[dict]:
    solution = solve(str(d.game_code(_today())), budget=60)
    assert solution.result == "won"
    return solution.actions


@pytest.fixture(scope="module")
def module_redis() -> Iterator[RedisProcess]:
    """This module's own Redis: today's leaderboard starts empty."""
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def daily_server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AppServer]:
    """A server of this test's own (daily attempts count against the race creation limit)."""
    if request.param == "redis":
        url = request.getfixturevalue("module_redis").url
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    else:
        url = "memory://"
    async with AppServer(url, env=FAST) as server:
        yield server


def _key() -> str:
    return secrets.token_urlsafe(24)


async def _attempt(base: str, key: str, name: str = "Ann") -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post(
            f"/api/daily/{_today()}/attempts", json={"player_key": key, "name": name}
        )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def _started(ws_base: str, attempt: dict[str, Any], name: str) -> Racer:
    racer = await Racer(ws_base, attempt["race_id"]).connect()
    welcome = await racer.join(name, host_key=attempt["host_key"])
    assert welcome["type"] == "welcome" and welcome["race"]["host_id"] == racer.player_id
    await racer.start()
    return racer


async def _play(ws_base: str, attempt: dict[str, Any], name: str, moves: list[dict]) -> dict:
    """Play ``moves``, resign unless they won; answer the race's final standing."""
    racer = await _started(ws_base, attempt, name)
    for move in moves:
        answer = await racer.move(move["src"], move["dst"], move.get("count", 1))
        assert answer["type"] == "ack", answer
    if not moves or answer["status"] != "won":
        assert (await racer.act("resign"))["type"] == "ack"
    over = await racer.wait_event("race_over")
    await racer.close()
    return dict(over["standings"][0])


async def _get(base: str, path: str, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base) as http:
        return await http.get(path, **kwargs)


async def _eventually(check: Any, timeout: float = 10.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            found = await check()
            if found:
                return found
            await asyncio.sleep(0.05)


# -- the deal of the day ----------------------------------------------------------


async def test_the_deal_of_the_day_and_of_past_days(daily_server: AppServer) -> None:
    today = _today()
    answer = await _get(daily_server.base, "/api/daily")
    assert answer.status_code == 200
    code = d.game_code(today)
    par = catalog.lookup(code).par  # type: ignore[union-attr]
    assert answer.json() == {
        "date": today.isoformat(),
        "code": None,  # today's deal is secret until the day ends
        "par": par,
        "next_at": d.next_at(today),
    }
    assert (await _get(daily_server.base, f"/api/daily/{today}")).json() == answer.json()
    past = await _get(daily_server.base, "/api/daily/2026-01-01")
    assert past.json()["code"] == "BK1-C4-AAAAAZG"
    for path, status, code_ in [
        (f"/api/daily/{today + timedelta(days=1)}", 404, "no_daily"),
        ("/api/daily/2025-12-31", 404, "no_daily"),
        ("/api/daily/2026-02-30", 400, "bad_date"),
        ("/api/daily/yesterday", 400, "bad_date"),
        (f"/api/daily/{today + timedelta(days=1)}/leaderboard", 404, "no_daily"),
        (f"/api/daily/{today}/leaderboard?limit=0", 400, "bad_message"),
        (f"/api/daily/{today}/leaderboard?limit=101", 400, "bad_message"),
        (f"/api/daily/{today}/leaderboard?offset=-1", 400, "bad_message"),
        (f"/api/daily/{today}/leaderboard?limit=ten", 400, "bad_message"),
        (f"/api/daily/{today}/records/999999", 404, "unknown_entry"),
        (f"/api/daily/{today}/records/x", 404, "unknown_entry"),
        (f"/api/daily/{today}/me", 400, "bad_player_key"),
    ]:
        refused = await _get(daily_server.base, path)
        assert (refused.status_code, refused.json()["error"]["code"]) == (status, code_), path


async def test_bad_attempt_requests(daily_server: AppServer) -> None:
    today = _today()
    async with httpx.AsyncClient(base_url=daily_server.base) as http:
        for body, code in [
            ({}, "bad_player_key"),
            ({"player_key": "short"}, "bad_player_key"),
            ({"player_key": "x" * 20 + " y"}, "bad_player_key"),
            ({"player_key": _key(), "name": "   "}, "bad_name"),
            ({"player_key": _key(), "name": "x" * 25}, "bad_name"),
            ({"player_key": _key(), "colour": "red"}, "bad_message"),
        ]:
            answer = await http.post(f"/api/daily/{today}/attempts", json=body)
            assert (answer.status_code, answer.json()["error"]["code"]) == (400, code), body
        future = await http.post(
            f"/api/daily/{today + timedelta(days=1)}/attempts", json={"player_key": _key()}
        )
        assert future.status_code == 404


# -- attempts, the leaderboard, streaks and records ---------------------------


async def test_first_attempt_is_ranked_later_ones_are_practice(
    daily_server: AppServer, winning_actions: list[dict]
) -> None:
    base, ws_base, today = daily_server.base, daily_server.ws_base, _today()
    ann, bo, cy = _key(), _key(), _key()

    first = await _attempt(base, ann)
    assert first["ranked"] is True and first["code"] is None
    # Asked again before a result: the same ranked race (a reload loses nothing).
    again = await _attempt(base, ann)
    assert (again["race_id"], again["host_key"], again["ranked"]) == (
        first["race_id"],
        first["host_key"],
        True,
    )
    mine = (await _get(base, f"/api/daily/{today}/me", headers={"X-Player-Key": ann})).json()
    assert mine["rank"] is None and mine["attempt"]["race_id"] == first["race_id"]

    won = await _play(ws_base, first, "Ann", winning_actions)
    assert won["status"] == "won"
    # Bo resigns after two moves, Cy at once: same cards, same score, fewer actions first.
    two_moves = [{"src": "col1", "dst": "cell1"}, {"src": "col2", "dst": "cell2"}]
    await _play(ws_base, await _attempt(base, bo, "Bo"), "Bo", two_moves)
    await _play(ws_base, await _attempt(base, cy, "Cy"), "Cy", [])

    async def board_of_three() -> dict | None:
        page = (await _get(base, f"/api/daily/{today}/leaderboard")).json()
        return page if page["total"] == 3 else None

    page = await _eventually(board_of_three)
    assert [e["name"] for e in page["entries"]] == ["Ann", "Cy", "Bo"]
    top = page["entries"][0]
    assert top == {
        "rank": 1,
        "entry_id": top["entry_id"],
        "name": "Ann",
        "result": "won",
        "time_ms": won["time_ms"],
        "actions": len(winning_actions),
        "score": won["score"],
        "foundation_cards": 52,
        "review": None,
    }
    assert [e["result"] for e in page["entries"]] == ["won", "resigned", "resigned"]
    assert [e["actions"] for e in page["entries"][1:]] == [0, 2]
    second = (await _get(base, f"/api/daily/{today}/leaderboard?limit=1&offset=1")).json()
    assert [(e["rank"], e["name"]) for e in second["entries"]] == [(2, "Cy")]
    assert second["total"] == 3 and (second["limit"], second["offset"]) == (1, 1)
    for key in (ann, bo, cy):  # no player key, no hash of one
        assert key not in json.dumps(page) and secret_hash(key) not in json.dumps(page)

    # The winner's standing, streak and share line (no code, no link).
    mine = (await _get(base, f"/api/daily/{today}/me", headers={"X-Player-Key": ann})).json()
    assert (mine["rank"], mine["total"], mine["streak"]) == (1, 3, 1)
    assert mine["entry"] == top
    number = d.day_number(today) + 1
    assert mine["share"].startswith(f"Baker's Game daily #{number}\nWon in ")
    assert mine["share"].endswith(f"{base}/daily/{today}")  # the day's page, not the game
    assert "BK1-" not in mine["share"] and "/race/" not in mine["share"]
    cys = (await _get(base, f"/api/daily/{today}/me", headers={"X-Player-Key": cy})).json()
    assert (cys["rank"], cys["streak"]) == (2, 0)
    # Today's records are nobody's until the day ends (the first winner's is a solution).
    refused = await _get(base, f"/api/daily/{today}/records/{top['entry_id']}")
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "not_yet")
    if daily_server.broker_url.startswith("redis://"):  # kept, with times, and replays
        opened = open_store(daily_server.broker_url)
        await opened.start()
        try:
            record = await opened.daily.game_record(today, top["entry_id"])
        finally:
            await opened.close()
        assert record is not None and record["code"] == str(d.game_code(today))
        assert len(record["actions"]) == len(winning_actions)
        replayed = subprocess.run(
            [sys.executable, "-m", "boulanger", "replay", "-"],
            input=json.dumps(record),
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(replayed.stdout)["won"] is True

    # Later attempts are practice: a new race each time, never recorded.
    practice = await _attempt(base, ann)
    assert practice["ranked"] is False and practice["race_id"] != first["race_id"]
    await _play(ws_base, practice, "Ann", [])
    past = await _attempt_on(base, ann, today - timedelta(days=1))
    assert past["ranked"] is False and past["code"] == str(d.game_code(today - timedelta(days=1)))
    # Di's ranked result, seen on the board, was recorded after Ann's practice race
    # was over: had that one been recorded, it would be on the board by now too.
    await _play(ws_base, await _attempt(base, _key(), "Di"), "Di", [])

    async def board_of_four() -> dict | None:
        page = (await _get(base, f"/api/daily/{today}/leaderboard")).json()
        return page if page["total"] >= 4 else None

    page = await _eventually(board_of_four)
    assert sorted(e["name"] for e in page["entries"]) == ["Ann", "Bo", "Cy", "Di"]
    assert page["total"] == 4 and page["entries"][0]["time_ms"] == won["time_ms"]


async def _attempt_on(base: str, key: str, day: d.date) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post(f"/api/daily/{day}/attempts", json={"player_key": key})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


# -- the live leaderboard ---------------------------------------------------------


class Watcher:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []
        self.close_code: int | None = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.messages.append(json.loads(frame))
        except ConnectionClosed:
            pass
        self.close_code = self.ws.close_code

    def leaderboards(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == "daily_leaderboard"]

    async def until(self, check: Any, timeout: float = 10.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                for message in self.leaderboards():
                    if check(message):
                        return message
                await asyncio.sleep(0.02)

    async def close(self) -> None:
        await self.ws.close()
        await self._reader


@pytest.fixture
async def watchers() -> AsyncIterator[list[Watcher]]:
    opened: list[Watcher] = []
    yield opened
    for watcher in opened:
        await watcher.close()


async def _watch(ws_base: str, opened: list[Watcher]) -> Watcher:
    watcher = Watcher(await connect(f"{ws_base}/ws/daily/{_today()}"))
    opened.append(watcher)
    await watcher.until(lambda m: True)
    return watcher


async def test_live_leaderboard_reaches_a_watcher_on_another_process_and_survives_redis_restart(
    own_redis: RedisProcess,
    two_apps: tuple[AppServer, AppServer],
    watchers: list[Watcher],
) -> None:
    a, b = two_apps
    watcher = await _watch(b.ws_base, watchers)
    assert watcher.leaderboards()[0] == {
        "type": "daily_leaderboard",
        "date": _today().isoformat(),
        "total": 0,
        "entries": [],
        "recent": [],
    }
    # Ann plays on A; the watcher, on B, hears of it through Redis.
    await _play(a.ws_base, await _attempt(a.base, _key(), "Ann"), "Ann", [])
    seen = await watcher.until(lambda m: m["total"] == 1)
    assert [e["name"] for e in seen["entries"]] == ["Ann"]
    assert [(e["name"], e["rank"]) for e in seen["recent"]] == [("Ann", 1)]

    # Entries are durable; pub/sub reconnects by itself. (In a thread: the servers in
    # this loop run on meanwhile, as processes would.)
    await asyncio.to_thread(own_redis.restart)
    answer = await _eventually(
        lambda: _ok(_get(b.base, f"/api/daily/{_today()}/leaderboard")), timeout=15
    )
    assert [e["name"] for e in answer.json()["entries"]] == ["Ann"]
    # B's subscription comes back by itself, some time after Redis: a result
    # recorded before that reaches B's watchers with the next one. So results
    # keep coming (a bounded few) until the watcher hears of them.
    names = ["Ann"]
    for name in ("Bo", "Cy", "Di", "Ed", "Flo"):
        await _play(a.ws_base, await _attempt(a.base, _key(), name), name, [])
        names.append(name)
        total = len(names)
        with contextlib.suppress(TimeoutError):
            seen = await watcher.until(lambda m, total=total: m["total"] == total, timeout=3)
            break
    else:
        raise AssertionError("the watcher on B never heard of a result after the restart")
    assert sorted(e["name"] for e in seen["entries"]) == sorted(names)


async def _ok(request: Any) -> httpx.Response | None:
    try:
        answer: httpx.Response = await request
    except httpx.HTTPError:
        return None
    return answer if answer.status_code == 200 else None


async def test_live_updates_are_coalesced(own_redis: RedisProcess, watchers: list[Watcher]) -> None:
    server = AppServer(own_redis.url, env=FAST)
    await server.start()
    opened = open_store(own_redis.url)
    await opened.start()
    try:
        watcher = await _watch(server.ws_base, watchers)
        store = opened.daily
        started = time.monotonic()
        for i in range(60):
            entry = d.DailyEntry(f"p{i}", "resigned", 1000, i, 0, 0)
            await store.record(_today(), f"h{i}", entry, {"code": "x", "actions": []})
        last = await watcher.until(lambda m: m["total"] == 60)
        elapsed = time.monotonic() - started
        updates = watcher.leaderboards()[1:]
        # Sixty entries, a handful of messages: at most two a second (plus one).
        assert len(updates) <= 2 * elapsed + 2 and len(updates) < 60
        assert [e["name"] for e in last["entries"]] == [f"p{i}" for i in range(20)]
        assert len(last["recent"]) <= 20
    finally:
        await opened.close()
        await server.stop()


async def test_live_socket_answers_pings_and_refuses_the_rest(
    daily_server: AppServer, watchers: list[Watcher]
) -> None:
    watcher = await _watch(daily_server.ws_base, watchers)
    await watcher.ws.send(json.dumps({"type": "ping", "t": 5}))
    await watcher.ws.send("not json")
    await watcher.ws.send(json.dumps({"type": "move", "action_id": "a"}))
    await watcher.ws.send(json.dumps({"type": "ping", "t": "five"}))
    async with asyncio.timeout(5):
        while len(watcher.messages) < 5:
            await asyncio.sleep(0.02)
    rest = watcher.messages[1:]
    assert rest[0] == {"type": "pong", "t": 5}
    assert [m.get("code") for m in rest[1:]] == ["bad_json", "unknown_type", "bad_message"]
    await watcher.ws.send(b"binary")
    await asyncio.wait_for(watcher._reader, 5)
    assert watcher.close_code == 1003


async def test_live_socket_for_a_day_without_challenge_closes_with_4404(
    daily_server: AppServer,
) -> None:
    tomorrow = _today() + timedelta(days=1)
    for path in (f"/ws/daily/{tomorrow}", "/ws/daily/someday"):
        async with connect(f"{daily_server.ws_base}{path}") as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


def test_retention_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().daily_retention_days == 90
    monkeypatch.setenv("BOULANGER_DAILY_RETENTION_DAYS", "30")
    assert Settings.from_env().daily_retention_days == 30
