"""A profile's ranked dailies and replay links (``GET /api/players/{name}``): a win held
for review is listed as not counted, with its review, so that the profile can say why
the streak is 0; today's games have no replay until the day ends, a race's has one;
a rated race makes a point of each player's rating history."""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx

from boulanger.race import daily as d
from boulanger.race.accounts import RATED_MIN_ACTIONS
from boulanger.solver import solve
from support.apps import AppServer
from support.days import clear_of_midnight
from support.racer import Racer, create_race

from .test_accounts import CODE, ENV, _eventually, _sign_up

# Results are reviewed from 10 actions on: a solver's line at machine speed is held.
REVIEWED = {**ENV, "BOULANGER_REVIEW_MIN_ACTIONS": "10"}


def _headers(server: AppServer, http: httpx.AsyncClient) -> dict[str, str]:
    return {"origin": server.base, "cookie": f"bk_session={http.cookies['bk_session']}"}


async def test_a_held_daily_win_is_listed_uncounted_with_its_review() -> None:
    clear_of_midnight(120)
    today = d.today(int(time.time() * 1000))
    name = "p" + secrets.token_hex(4)
    async with (
        AppServer("memory://", env=REVIEWED) as site,
        httpx.AsyncClient(base_url=site.base, headers={"origin": site.base}) as http,
    ):
        signed = await http.post("/api/accounts", json={"name": name, "password": "correct horse"})
        assert signed.status_code == 201
        attempt = (await http.post(f"/api/daily/{today}/attempts", json={})).json()
        assert attempt["ranked"] is True
        racer = await Racer(site.ws_base, attempt["race_id"], _headers(site, http)).connect()
        await racer.join("ignored", host_key=attempt["host_key"])
        await racer.start()
        await racer.until_started()
        for move in solve(str(d.game_code(today)), budget=60).actions:
            answer = await racer.move(move["src"], move["dst"], move["count"])
        assert answer["status"] == "won"
        player_id = (await racer.wait_event("race_over"))["standings"][0]["player_id"]
        await racer.close()

        # A race of friends, for a replay link: resigned at once.
        created = await create_race(site.base, code=CODE)
        friend = await Racer(site.ws_base, created["race_id"], _headers(site, http)).connect()
        joined = await friend.join("ignored", host_key=created["host_key"])
        await friend.start()
        await friend.act("resign")
        await friend.wait_event("race_over")
        await friend.close()

        async def listed() -> dict[str, Any] | None:
            found = (await http.get(f"/api/players/{name}")).json()
            return found if len(found["races"]) == 2 else None

        profile = await _eventually(listed)
    assert profile["streak"] == 0
    [day] = profile["dailies"]
    assert day["date"] == today.isoformat() and day["won"] is True and day["counted"] is False
    assert day["time_ms"] > 0
    assert day["review"]["status"] == "held"
    [daily] = [r for r in profile["races"] if r["daily"]]
    [race] = [r for r in profile["races"] if not r["daily"]]
    assert daily["daily"] == today.isoformat() and daily["player_id"] == player_id
    assert daily["replay"] is None  # today's deal: secret until the day ends
    assert race["replay"] == f"/race/{created['race_id']}/replay/{joined['player_id']}"


async def test_a_rated_race_makes_a_point_of_each_player_s_rating_history() -> None:
    names = ["p" + secrets.token_hex(4) for _ in range(2)]
    actions = solve(CODE, budget=30).actions
    async with (
        AppServer("memory://", env=ENV) as site,
        httpx.AsyncClient(base_url=site.base, headers={"origin": site.base}) as h_ann,
        httpx.AsyncClient(base_url=site.base, headers={"origin": site.base}) as h_bo,
    ):
        await _sign_up(h_ann, names[0])
        await _sign_up(h_bo, names[1])
        created = await create_race(site.base, code=CODE)
        ann = await Racer(site.ws_base, created["race_id"], _headers(site, h_ann)).connect()
        bo = await Racer(site.ws_base, created["race_id"], _headers(site, h_bo)).connect()
        await ann.join("ignored", host_key=created["host_key"])
        await bo.join("ignored")
        await ann.start()
        await ann.until_started()
        for action in actions[:RATED_MIN_ACTIONS]:  # enough actions for a rated race
            await bo.move(action["src"], action["dst"], action.get("count", 1))
        for action in actions:
            answer = await ann.move(action["src"], action["dst"], action.get("count", 1))
        assert answer["status"] == "won"
        await bo.act("resign")
        await ann.wait_event("race_over")
        for racer in (ann, bo):
            await racer.close()

        profiles = []
        for name in names:

            async def rated(name: str = name) -> dict[str, Any] | None:
                found = (await h_ann.get(f"/api/players/{name}")).json()
                return found if found["rating_history"] else None

            profiles.append(await _eventually(rated))
    for profile in profiles:
        [point] = profile["rating_history"]["4"]
        assert set(profile["rating_history"]) == {"4"}
        assert point["shown"] == profile["ratings"]["4"]["rating"]
        assert point["cells"] == 4 and point["race_id"] == created["race_id"]
        assert point["at"] > 0
