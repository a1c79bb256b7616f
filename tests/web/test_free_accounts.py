"""What free accounts cannot farm: ranked dailies (one a day per address from accounts made
that day, none after the deal was dealt to a guest of the address) and ratings (only from
races in which every rated player played at least RATED_MIN_ACTIONS actions)."""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from boulanger.race import daily as d
from boulanger.race.accounts import RATED_MIN_ACTIONS
from boulanger.solver import solve
from support.apps import CHEAP_HASHING, AppServer
from support.days import clear_of_midnight
from support.racer import Racer, create_race

CODE = "BK1-C4-AAAAAAB"  # deal 1
ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_REVIEW_MIN_ACTIONS": "1000000",
    "BOULANGER_DAILY_GUESTS_RANKED": "0",
    "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "1000",
    **CHEAP_HASHING,
}


@pytest.fixture
async def site() -> AsyncIterator[AppServer]:
    async with AppServer("memory://", env=ENV) as server:
        yield server


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AppServer]:
    """On each store: the address rules are counted in the store's limits and keys."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_proc").url
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    else:
        url = "memory://"
    async with AppServer(url, env=ENV) as server:
        yield server


_ADDRESSES = itertools.count(1)


def fresh_address() -> str:
    """An address no other test of this session used (the session's Redis keeps counts)."""
    n = next(_ADDRESSES)
    return f"10.77.{n // 250}.{n % 250 + 1}"


def client(site: AppServer, address: str) -> httpx.AsyncClient:
    """A browser at ``address`` (X-Forwarded-For, as uvicorn trusts it from 127.0.0.1)."""
    return httpx.AsyncClient(
        base_url=site.base, headers={"origin": site.base, "X-Forwarded-For": address}
    )


async def sign_up(http: httpx.AsyncClient) -> str:
    name = "f" + secrets.token_hex(4)
    answer = await http.post("/api/accounts", json={"name": name, "password": "correct horse"})
    assert answer.status_code == 201, answer.text
    return name


async def attempt(http: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    today = d.today(int(time.time() * 1000)).isoformat()
    answer = await http.post(f"/api/daily/{today}/attempts", json=body)
    assert answer.status_code == 201, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def test_one_ranked_daily_a_day_per_address_from_accounts_made_that_day(
    any_store: AppServer,
) -> None:
    clear_of_midnight(60)
    site, address = any_store, fresh_address()
    async with client(site, address) as first, client(site, address) as second:
        await sign_up(first)
        await sign_up(second)
        assert (await attempt(first))["ranked"] is True
        # The same account again: its own attempt, still ranked (not a second one).
        again = await attempt(first)
        assert again["ranked"] is True
        refused = await attempt(second)
        assert refused["ranked"] is False and refused["unranked"] == "new_account"
        assert (await attempt(second))["unranked"] == "new_account"
    async with client(site, fresh_address()) as elsewhere:
        await sign_up(elsewhere)
        assert (await attempt(elsewhere))["ranked"] is True  # another address: its own


async def test_no_ranked_daily_from_an_address_that_saw_the_deal_as_a_guest(
    any_store: AppServer,
) -> None:
    clear_of_midnight(60)
    site = any_store
    async with client(site, fresh_address()) as http:
        guest = await attempt(http, player_key=secrets.token_urlsafe(24))
        assert guest["ranked"] is False and guest["unranked"] == "sign_in"
        await sign_up(http)
        after = await attempt(http)
        assert after["ranked"] is False and after["unranked"] == "seen_as_guest"
    async with client(site, fresh_address()) as other:
        await sign_up(other)
        assert (await attempt(other))["ranked"] is True


async def race(
    site: AppServer, actions: list[dict[str, Any]], moves: tuple[int, int]
) -> tuple[str, str]:
    """Two accounts race on CODE; each plays ``moves`` of ``actions`` and resigns."""
    async with client(site, "10.3.0.1") as h_ann, client(site, "10.3.0.2") as h_bo:
        names = (await sign_up(h_ann), await sign_up(h_bo))
        created = await create_race(site.base, code=CODE)
        racers = []
        for http, extra in ((h_ann, {"host_key": created["host_key"]}), (h_bo, {})):
            cookie = f"bk_session={http.cookies['bk_session']}"
            headers = {"origin": site.base, "cookie": cookie}
            racer = await Racer(site.ws_base, created["race_id"], headers).connect()
            assert (await racer.join("x", **extra))["type"] == "welcome"
            racers.append(racer)
        await racers[0].start()
        for racer, count in zip(racers, moves, strict=True):
            for action in actions[:count]:
                answer = await racer.move(action["src"], action["dst"], action.get("count", 1))
                assert answer["type"] == "ack", answer
        for racer in racers:
            assert (await racer.act("resign"))["type"] == "ack"
        await racers[0].wait_event("race_over")
        for racer in racers:
            await racer.close()
    return names


async def profile(site: AppServer, name: str, races: int) -> dict[str, Any]:
    """The account's profile once its history holds ``races`` races (written before ratings)."""
    async with asyncio.timeout(10), httpx.AsyncClient(base_url=site.base) as http:
        while True:
            found: dict[str, Any] = (await http.get(f"/api/players/{name}")).json()
            if found["stats"]["races"]["played"] >= races:
                return found
            await asyncio.sleep(0.02)


async def test_ratings_move_only_when_every_rated_player_played(site: AppServer) -> None:
    actions = solve(CODE, budget=30).actions
    # One card up, then both resign: nobody's rating moves.
    idle = await race(site, actions, (1, 0))
    # Both play RATED_MIN_ACTIONS actions, then resign: rated.
    played = await race(site, actions, (RATED_MIN_ACTIONS, RATED_MIN_ACTIONS))
    # The second race's ratings are written after the first race was over and
    # counted (its history holds it): by then the first race's hook has ended.
    for name in played:
        async with asyncio.timeout(10):
            while "4" not in (await profile(site, name, 1)).get("ratings", {}):
                await asyncio.sleep(0.02)
    for name in idle:
        found = await profile(site, name, 1)
        assert "4" not in found.get("ratings", {}), found["ratings"]
