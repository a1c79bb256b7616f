"""The solver's processes shared fairly: one request at a time per address or account, a
bounded queue, refusals at once, race creation's checks in a lane of their own, and a
day's cap on the reviews an address has computed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from boulanger.engine import GameCode
from boulanger.race.errors import Refused
from boulanger.solver import catalog
from boulanger.web.solving import Lane
from conftest import FAST_TEST_ENV
from support.apps import AppServer
from support.racer import Racer

CODE = "BK1-C4-AAAAAAB"  # deal 1, a practice game's deal
ATTACKER = {"X-Forwarded-For": "10.0.0.2"}
OTHER = {"X-Forwarded-For": "10.0.0.3"}


def threads(lane: Lane) -> ThreadPoolExecutor:
    """The lane's workers as threads of this process: jobs the test holds and lets go."""
    pool = ThreadPoolExecutor(lane.workers)
    lane._pool = pool  # type: ignore[assignment]
    return pool


async def until(check: Any) -> None:
    async with asyncio.timeout(10):
        while not check():
            await asyncio.sleep(0.005)


async def test_one_request_per_owner_a_bounded_queue_and_first_come_first_served() -> None:
    lane = Lane("answers", workers=1, queue=2)
    pool = threads(lane)
    gates = {name: threading.Event() for name in ("a", "b", "c")}
    order: list[str] = []

    def job(name: str) -> str:
        gates[name].wait(10)
        order.append(name)
        return name

    try:
        running = asyncio.create_task(lane.run(["address:a"], job, "a"))
        await until(lambda: lane.running == 1)
        # The same address again, or the same account from elsewhere: refused at once.
        with pytest.raises(Refused) as refused:
            await lane.run(["address:a"], job, "x")
        assert refused.value.code == "solver_busy"
        waiting = [
            asyncio.create_task(lane.run(["address:b", "account:b"], job, "b")),
            asyncio.create_task(lane.run(["address:c"], job, "c")),
        ]
        await until(lambda: lane.waiting == 2)
        with pytest.raises(Refused):
            await lane.run(["address:z", "account:b"], job, "x")
        # The queue is full: anyone else is refused at once, not queued.
        with pytest.raises(Refused) as full:
            await lane.run(["address:d"], job, "d")
        assert full.value.code == "solver_busy"
        for gate in gates.values():
            gate.set()
        assert await running == "a"
        assert [await task for task in waiting] == ["b", "c"]
        assert order == ["a", "b", "c"]  # in the order they came
        assert lane.busy == set() and lane.running == 0 and lane.waiting == 0
        assert await lane.run(["address:a"], lambda: "again") == "again"
    finally:
        for gate in gates.values():
            gate.set()
        pool.shutdown(wait=True)


async def test_an_asker_gone_frees_its_place_only_when_its_search_ends() -> None:
    lane = Lane("answers", workers=1, queue=1)
    pool = threads(lane)
    gate = threading.Event()
    try:
        asker = asyncio.create_task(lane.run(["address:a"], gate.wait, 10))
        await until(lambda: lane.running == 1)
        asker.cancel()  # the connection closed; the worker still searches
        with pytest.raises(asyncio.CancelledError):
            await asker
        assert lane.running == 1 and "address:a" in lane.busy
        with pytest.raises(Refused):
            await lane.run(["address:a"], gate.wait, 10)
        gate.set()
        await until(lambda: lane.running == 0)
        assert lane.busy == set()
    finally:
        gate.set()
        pool.shutdown(wait=True)


@pytest.fixture
async def server() -> AsyncIterator[AppServer]:
    env = {
        **FAST_TEST_ENV,
        "BOULANGER_SOLVER_WORKERS": "2",
        "BOULANGER_SOLVER_QUEUE": "2",
        "BOULANGER_REVIEWS_PER_DAY_PER_ADDRESS": "2",
    }
    async with AppServer("memory://", env=env) as app:
        yield app


async def practice(
    app: AppServer, http: httpx.AsyncClient, headers: dict[str, str], code: str = CODE
) -> Racer:
    created = await http.post("/api/races", json={"code": code, "practice": True}, headers=headers)
    assert created.status_code == 201, created.text
    racer = await Racer(app.ws_base, created.json()["race_id"], headers=headers).connect()
    await racer.join("P", host_key=created.json()["host_key"])
    await racer.start()
    return racer


async def finished(
    app: AppServer, http: httpx.AsyncClient, headers: dict[str, str], code: str
) -> str:
    """A practice game on ``code``, resigned at once: its review's path."""
    racer = await practice(app, http, headers, code)
    assert (await racer.act("resign"))["type"] == "ack"
    await racer.close()
    return f"/api/races/{racer.race_id}/records/{racer.player_id}/review"


def outside_catalog() -> str:
    deal = 1000
    while catalog.lookup(GameCode(deal, 4)) is not None:
        deal += 1
    return str(GameCode(deal, 4))


async def test_a_busy_address_is_refused_at_once_and_others_are_answered(
    server: AppServer,
) -> None:
    solver = server.services.solver
    pool = threads(solver.answers)
    release = threading.Event()
    async with httpx.AsyncClient(base_url=server.base, timeout=60) as http:
        review = await finished(server, http, ATTACKER, CODE)
        mine = await practice(server, http, ATTACKER)
        other = await practice(server, http, OTHER)
        # The attacker's address has a search running (as if its first hint of a burst).
        held = asyncio.create_task(solver.answers.run(["address:10.0.0.2"], release.wait, 60))
        try:
            await until(lambda: solver.answers.running == 1)
            await mine.send(type="hint", ref="h1")
            refused = await mine.expect("hint_result", "error", timeout=10)
            assert refused["type"] == "error" and refused["code"] == "solver_busy", refused
            assert refused["ref"] == "h1"
            busy = await http.get(review, headers=ATTACKER)
            assert busy.status_code == 429 and busy.json()["error"]["code"] == "solver_busy"
            # Another user is answered meanwhile: their hint, a race on a code of
            # their own (judged in the checks' own lane).
            await other.send(type="hint", ref="h2")
            answered = await other.expect("hint_result", "error", timeout=60)
            assert answered["type"] == "hint_result" and answered["result"] == "won", answered
            created = await http.post("/api/races", json={"code": outside_catalog()}, headers=OTHER)
            assert created.status_code == 201, created.text
        finally:
            release.set()
            await held
        await mine.send(type="hint", ref="h3")
        again = await mine.expect("hint_result", "error", timeout=60)
        assert again["type"] == "hint_result", again
        # The review refused for a busy solver was not counted against the day.
        assert (await http.get(review, headers=ATTACKER)).status_code == 200
        for racer in (mine, other):
            await racer.close()
    pool.shutdown(wait=True)


async def test_an_address_has_a_days_share_of_reviews_and_cached_ones_are_free(
    server: AppServer,
) -> None:
    today = server.services.daily.deal_today()
    deals = [str(e.code) for e in catalog.entries(4) if e.code.deal != today][:3]
    async with httpx.AsyncClient(base_url=server.base, timeout=60) as http:
        paths = [await finished(server, http, ATTACKER, code) for code in deals]
        for path in paths[:2]:
            assert (await http.get(path, headers=ATTACKER)).status_code == 200
        third = await http.get(paths[2], headers=ATTACKER)
        assert third.status_code == 429, third.text
        assert third.json()["error"]["code"] == "too_many_reviews"
        # A review already made still opens; another address has its own share.
        assert (await http.get(paths[0], headers=ATTACKER)).status_code == 200
        assert (await http.get(paths[2], headers=OTHER)).status_code == 200
