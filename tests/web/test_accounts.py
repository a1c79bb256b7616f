"""Accounts end to end: real server processes on each broker, real Redis, scripted clients.

Sign up (password, passkey), sessions and their cookie, the Origin rule, the
sign-in limits that never tell whether a name exists, the signed-in player on
the race WebSocket, one ranked daily per account, profiles and ratings, and
everything still there after a restart.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from boulanger.race import daily as d
from boulanger.race.accounts import RATED_MIN_ACTIONS
from boulanger.solver import solve
from support.apps import AppServer
from support.authenticator import SoftPasskey
from support.days import clear_of_midnight
from support.racer import Racer, create_race
from support.servers import RedisProcess, ServerProcess

CODE = "BK1-C4-AAAAAAB"  # deal 1
ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_REVIEW_MIN_ACTIONS": "1000000",
    "BOULANGER_DAILY_GUESTS_RANKED": "0",
    # The address rules of ranked dailies are tests/web/test_free_accounts.py's: here
    # every test's accounts play from one address, on a Redis the module shares.
    "BOULANGER_DAILY_NEW_ACCOUNTS_PER_ADDRESS": "0",
    "BOULANGER_DAILY_GUEST_SEEN_UNRANKS": "0",
    "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "1000",
    "BOULANGER_SIGNIN_ATTEMPTS_PER_ACCOUNT": "3",
    "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "1000",
    "BOULANGER_SIGNUPS_PER_ADDRESS": "1000",
}


@pytest.fixture(scope="module", autouse=True)
def same_day_throughout() -> None:
    clear_of_midnight(10 * 60)


@pytest.fixture(scope="module")
def module_redis() -> Iterator[RedisProcess]:
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AppServer]:
    if request.param == "redis":
        url = request.getfixturevalue("module_redis").url
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    else:
        url = "memory://"
    async with AppServer(url, env=ENV) as server:
        yield server


@pytest.fixture(scope="module")
def winning_actions() -> list[dict]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


def _name() -> str:
    return "p" + secrets.token_hex(4)


def _client(server: AppServer | ServerProcess, origin: bool = True) -> httpx.AsyncClient:
    headers = {"origin": server.base} if origin else {}
    return httpx.AsyncClient(base_url=server.base, headers=headers)


async def _sign_up(http: httpx.AsyncClient, name: str, password: str = "correct horse") -> None:
    answer = await http.post("/api/accounts", json={"name": name, "password": password})
    assert answer.status_code == 201, answer.text


def _ws_headers(server: AppServer, http: httpx.AsyncClient) -> dict[str, str]:
    return {"origin": server.base, "cookie": f"bk_session={http.cookies['bk_session']}"}


# -- sign up, sign in, cookie, Origin ------------------------------------------------


async def test_password_account_and_its_session_cookie(site: AppServer) -> None:
    name = _name()
    async with _client(site) as http:
        answer = await http.post("/api/accounts", json={"name": name, "password": "hunter2hunter2"})
        assert answer.status_code == 201, answer.text
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
        assert "secure" not in cookie  # served over HTTP here: cookie_secure is off
        me = (await http.get("/api/me")).json()["account"]
        assert me == {
            "name": name,
            "password": True,
            "passkeys": 0,
            "url": f"/@/{name}",
            "language": None,
            "moderator": False,
        }
        # Sign out: the session is gone from the store, not only from this browser.
        old = http.cookies["bk_session"]
        assert (await http.delete("/api/session")).status_code == 200
        assert (await http.get("/api/me")).json()["account"] is None
    async with _client(site) as replay:
        replay.cookies.set("bk_session", old)
        assert (await replay.get("/api/me")).json()["account"] is None
    async with _client(site) as http:
        good = await http.post("/api/session", json={"name": name, "password": "hunter2hunter2"})
        assert good.status_code == 200 and good.json()["name"] == name
        assert (await http.get("/api/me")).json()["account"]["name"] == name


async def test_the_cookie_is_secure_when_the_setting_is_on() -> None:
    env = {**ENV, "BOULANGER_COOKIE_SECURE": "1"}
    async with AppServer("memory://", env=env) as proc, _client(proc) as http:
        answer = await http.post("/api/accounts", json={"name": _name(), "password": "p" * 8})
        assert answer.status_code == 201, answer.text
        cookie = [part.strip() for part in answer.headers["set-cookie"].lower().split(";")]
        assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie
        # Signing out clears the cookie with the same attributes.
        http.cookies.set("bk_session", answer.cookies["bk_session"])
        out = await http.delete("/api/session")
        assert "secure" in [p.strip() for p in out.headers["set-cookie"].lower().split(";")]


async def test_sessions_are_stored_hashed(module_redis: RedisProcess) -> None:
    """The store holds no cookie value in clear, and a stolen row signs no one in."""
    import redis.asyncio as aioredis

    proc = AppServer(module_redis.url, env=ENV)
    await proc.start()
    raw = aioredis.from_url(module_redis.url, decode_responses=True)
    try:
        name = _name()
        async with _client(proc) as http:
            await _sign_up(http, name)
            cookie = http.cookies["bk_session"]
            assert (await _me(proc, cookie) or {}).get("name") == name
        rows = {key: await raw.get(key) async for key in raw.scan_iter("bk:sess:*")}
        assert rows
        everything = [key async for key in raw.scan_iter("*")]
        assert not any(cookie in key for key in everything)
        for key, value in rows.items():
            assert cookie not in key and cookie not in (value or "")
            stolen = key.removeprefix("bk:sess:").strip("{}")
            assert await _me(proc, stolen) is None  # the row's key is not a cookie
            assert await _me(proc, value or "") is None  # nor its value
        assert (await _me(proc, cookie) or {}).get("name") == name
    finally:
        await raw.aclose()
        await proc.stop()


async def test_names_and_passwords_follow_the_policy(site: AppServer) -> None:
    name = _name()
    async with _client(site) as http:
        await _sign_up(http, name)
        for bad, code in (
            ({"name": "ab", "password": "long enough"}, "bad_name"),
            ({"name": "x" * 21, "password": "long enough"}, "bad_name"),
            ({"name": _name(), "password": "short"}, "bad_password"),
            ({"name": _name(), "password": "x" * 129}, "bad_password"),
            ({"name": name.upper(), "password": "long enough"}, "name_taken"),
            # Cyrillic р looks like p: taken.
            ({"name": "\u0440" + name[1:], "password": "long enough"}, "name_taken"),
        ):
            answer = await http.post("/api/accounts", json=bad)
            assert answer.json()["error"]["code"] == code, (bad, answer.text)


async def test_state_changing_requests_need_this_sites_origin(site: AppServer) -> None:
    name = _name()
    async with _client(site) as http:
        await _sign_up(http, name)
        cookie = http.cookies["bk_session"]
    for headers in ({}, {"origin": "https://evil.example"}, {"origin": "null"}):
        async with httpx.AsyncClient(base_url=site.base, headers=headers) as other:
            other.cookies.set("bk_session", cookie)
            for method, path, body in (
                ("POST", "/api/accounts", {"name": _name(), "password": "long enough"}),
                ("POST", "/api/session", {"name": name, "password": "correct horse"}),
                ("DELETE", "/api/session", None),
                ("DELETE", "/api/me", {"name": name}),
                ("POST", "/api/me/password", {"password": "another one"}),
                ("POST", "/api/me/language", {"language": "pl"}),
                ("POST", "/api/session/passkey/options", {}),
            ):
                answer = await other.request(method, path, json=body)
                assert answer.status_code == 403, (headers, path, answer.text)
                assert answer.json()["error"]["code"] == "bad_origin"
    async with _client(site) as http:
        http.cookies.set("bk_session", cookie)
        assert (await http.get("/api/me")).json()["account"]["name"] == name  # still there


async def test_sign_in_answers_never_tell_whether_a_name_exists(site: AppServer) -> None:
    name, unknown = _name(), _name()
    async with _client(site) as http:
        await _sign_up(http, name)
    async with _client(site) as http:
        wrong = await http.post("/api/session", json={"name": name, "password": "not it at all"})
        missing = await http.post("/api/session", json={"name": unknown, "password": "not it"})
        assert wrong.status_code == missing.status_code == 401
        assert wrong.json() == missing.json()
        # Three failures per name (this server's setting), then 429 for both alike,
        # even with the right password.
        for who in (name, unknown):
            for _ in range(2):
                await http.post("/api/session", json={"name": who, "password": "still wrong"})
        shut = await http.post("/api/session", json={"name": name, "password": "correct horse"})
        shut_missing = await http.post("/api/session", json={"name": unknown, "password": "x"})
        assert shut.status_code == shut_missing.status_code == 429
        assert shut.json() == shut_missing.json()
        assert "bk_session" not in http.cookies


async def test_sign_in_is_limited_per_address(tmp_path: Any) -> None:
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "4"}
    async with AppServer("memory://", env=env) as proc:
        name = _name()
        async with _client(proc) as http:
            await _sign_up(http, name)
        async with _client(proc) as http:  # a browser that never signed in to it
            for i in range(4):  # four names, one attempt each: the address's limit
                answer = await http.post("/api/session", json={"name": f"n{i}xx", "password": "p"})
                assert answer.status_code == 401
            late = await http.post("/api/session", json={"name": name, "password": "correct horse"})
            assert late.status_code == 429


async def test_change_password_and_delete_account(site: AppServer) -> None:
    name = _name()
    async with _client(site) as http:
        await _sign_up(http, name)
        refused = await http.post(
            "/api/me/password", json={"current": "wrong one!", "password": "new password"}
        )
        assert refused.status_code == 403
        changed = await http.post(
            "/api/me/password", json={"current": "correct horse", "password": "new password"}
        )
        assert changed.status_code == 200, changed.text
    async with _client(site) as http:
        old = await http.post("/api/session", json={"name": name, "password": "correct horse"})
        assert old.status_code == 401
        new = await http.post("/api/session", json={"name": name, "password": "new password"})
        assert new.status_code == 200
        cookie = http.cookies["bk_session"]
        nope = {"name": "nope", "current": "new password"}
        assert (await http.request("DELETE", "/api/me", json=nope)).status_code == 400
        gone = await http.request(
            "DELETE", "/api/me", json={"name": name, "current": "new password"}
        )
        assert gone.status_code == 200
    async with _client(site) as http:
        http.cookies.set("bk_session", cookie)  # a session of a deleted account: over
        assert (await http.get("/api/me")).json()["account"] is None
        assert (await http.get(f"/api/players/{name}")).status_code == 404
        await _sign_up(http, name)  # the name is free again


async def test_the_language_chosen_follows_the_account(site: AppServer) -> None:
    """Chosen on one device, the client's language is the account's on another."""
    name = _name()
    async with _client(site) as phone:
        await _sign_up(phone, name)
        for bad in ("", "PL", "polish", "p1", 7, None):
            refused = await phone.post("/api/me/language", json={"language": bad})
            assert refused.status_code == 400, (bad, refused.text)
            assert refused.json()["error"]["code"] == "bad_language"
        chosen = await phone.post("/api/me/language", json={"language": "pl"})
        assert chosen.status_code == 200 and chosen.json()["language"] == "pl"
    async with _client(site) as laptop:
        signed = await laptop.post("/api/session", json={"name": name, "password": "correct horse"})
        assert signed.json()["language"] == "pl"
        assert (await laptop.get("/api/me")).json()["account"]["language"] == "pl"
    async with _client(site) as guest:
        answer = await guest.post("/api/me/language", json={"language": "ru"})
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "signed_out"


# -- passkeys --------------------------------------------------------------------------


async def test_passkey_sign_up_sign_in_and_add_to_a_password_account(site: AppServer) -> None:
    name = _name()
    passkey = SoftPasskey(site.base)
    async with _client(site) as http:
        begun = (await http.post("/api/accounts/passkey/options", json={"name": name})).json()
        assert begun["options"]["rp"]["id"] == "127.0.0.1"
        answer = await http.post(
            "/api/accounts/passkey",
            json={"ceremony": begun["ceremony"], "credential": passkey.create(begun["options"])},
        )
        assert answer.status_code == 201, answer.text
        assert answer.json() == {
            "name": name,
            "password": False,
            "passkeys": 1,
            "url": f"/@/{name}",
            "language": None,
        }
        # A ceremony is used once.
        again = await http.post(
            "/api/accounts/passkey",
            json={"ceremony": begun["ceremony"], "credential": passkey.create(begun["options"])},
        )
        assert again.json()["error"]["code"] == "bad_ceremony"
    async with _client(site) as http:
        begun = (await http.post("/api/session/passkey/options", json={})).json()
        signed = await http.post(
            "/api/session/passkey",
            json={"ceremony": begun["ceremony"], "credential": passkey.get(begun["options"])},
        )
        assert signed.status_code == 200, signed.text
        assert (await http.get("/api/me")).json()["account"]["name"] == name
    # A forged signature (another key, same credential id) is refused.
    forger = SoftPasskey(site.base)
    forger.credential_id, forger.user_handle = passkey.credential_id, passkey.user_handle
    async with _client(site) as http:
        begun = (await http.post("/api/session/passkey/options", json={})).json()
        forged = await http.post(
            "/api/session/passkey",
            json={"ceremony": begun["ceremony"], "credential": forger.get(begun["options"])},
        )
        assert forged.status_code == 401 and "bk_session" not in http.cookies
    # A password account adds a passkey, then signs in with it.
    other, key = _name(), SoftPasskey(site.base)
    async with _client(site) as http:
        await _sign_up(http, other)
        begun = (
            await http.post("/api/me/passkeys/options", json={"current": "correct horse"})
        ).json()
        added = await http.post(
            "/api/me/passkeys",
            json={"ceremony": begun["ceremony"], "credential": key.create(begun["options"])},
        )
        assert added.status_code == 200 and added.json()["passkeys"] == 1, added.text
    async with _client(site) as http:
        begun = (await http.post("/api/session/passkey/options", json={})).json()
        signed = await http.post(
            "/api/session/passkey",
            json={"ceremony": begun["ceremony"], "credential": key.get(begun["options"])},
        )
        assert signed.json()["name"] == other


# -- the race WebSocket, the daily, profiles, ratings --------------------------------


async def test_signed_in_players_race_guests_and_are_rated(
    site: AppServer, winning_actions: list[dict]
) -> None:
    ann, bo = _name(), _name()
    async with _client(site) as h_ann, _client(site) as h_bo:
        await _sign_up(h_ann, ann)
        await _sign_up(h_bo, bo)
        created = await create_race(site.base, code=CODE)
        r_ann = await Racer(site.ws_base, created["race_id"], _ws_headers(site, h_ann)).connect()
        r_bo = await Racer(site.ws_base, created["race_id"], _ws_headers(site, h_bo)).connect()
        guest = await Racer(site.ws_base, created["race_id"]).connect()
        # The name sent is ignored for a signed-in player: the account's is shown.
        assert (await r_ann.join("Whoever", host_key=created["host_key"]))["type"] == "welcome"
        assert (await r_bo.join("Bob"))["type"] == "welcome"
        welcome = await guest.join("Guest")
        names = [p["name"] for p in welcome["race"]["players"]]
        assert names == [ann, bo, "Guest"]
        # The lobby shows the signed-in players' ratings (the guest has none).
        async with _client(site) as http:
            lobby = (await http.get(f"/api/races/{created['race_id']}/ratings")).json()
        assert [(p["name"], p["races"]) for p in lobby["players"]] == [(ann, 0), (bo, 0)]
        await r_ann.start()
        # Bo plays before he resigns: a race counts for ratings once everyone played.
        for action in winning_actions[:RATED_MIN_ACTIONS]:
            await r_bo.move(action["src"], action["dst"], action.get("count", 1))
        for action in winning_actions:
            answer = await r_ann.move(action["src"], action["dst"], action.get("count", 1))
        assert answer["status"] == "won"
        await r_bo.act("resign")
        await guest.act("resign")
        await r_ann.wait_event("race_over")
        for racer in (r_ann, r_bo, guest):
            await racer.close()

    async def rated() -> dict[str, Any] | None:
        async with _client(site) as http:
            found = (await http.get(f"/api/players/{ann}")).json()
        return found if found.get("ratings", {}).get("4") else None

    profile = await _eventually(rated)
    assert profile["stats"]["races"]["played"] == 1 and profile["stats"]["races"]["won"] == 1
    assert profile["stats"]["cells"]["4"]["best_ms"] is not None
    assert profile["races"][0]["race_id"] == created["race_id"]
    assert profile["races"][0]["place"] == 1
    player_id = profile["races"][0]["player_id"]
    assert profile["races"][0]["replay"] == f"/race/{created['race_id']}/replay/{player_id}"
    assert profile["dailies"] == []
    async with _client(site) as http:
        loser = (await http.get(f"/api/players/{bo}")).json()
        page = await http.get(f"/@/{ann}")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        top = (await http.get("/api/ratings?cells=4")).json()["top"]
        assert (await http.get("/api/ratings?cells=3")).status_code == 400
    assert loser["ratings"]["4"]["races"] == 1
    assert profile["ratings"]["4"]["rating"] > loser["ratings"]["4"]["rating"]
    order = [t["name"] for t in top]
    assert order.index(ann) < order.index(bo)


async def test_signed_in_players_carry_a_mark_and_a_rating_guests_cannot_take_their_names(
    site: AppServer,
) -> None:
    ann = _name()
    async with _client(site) as h_ann:
        await _sign_up(h_ann, ann)
        created = await create_race(site.base, code=CODE)
        r_ann = await Racer(site.ws_base, created["race_id"], _ws_headers(site, h_ann)).connect()
        await r_ann.join("whatever", host_key=created["host_key"])
        guest = await Racer(site.ws_base, created["race_id"]).connect()
        # An account's name, as sent, upper-cased, or with a Cyrillic look-alike:
        for taken in (ann, ann.upper(), ann.replace("p", "\u0440"), "Deleted Player"):
            refused = await guest.join(taken)
            assert refused["type"] == "error" and refused["code"] == "name_reserved", taken
        joined = await guest.join("Guest")
        assert joined["type"] == "welcome"
        event = await r_ann.wait_event("player_joined")
        players = {p["name"]: p for p in joined["race"]["players"]}
        assert players[ann]["signed_in"] is True and players[ann]["rating"] == 0
        assert "signed_in" not in players["Guest"] and "rating" not in players["Guest"]
        assert "signed_in" not in event["player"]  # a guest's event: as it always was
        for racer in (r_ann, guest):
            await racer.close()


async def test_one_ranked_daily_per_account_guests_unranked(site: AppServer) -> None:
    today = d.today(int(time.time() * 1000)).isoformat()
    guest_key = secrets.token_urlsafe(24)
    async with _client(site) as http:
        guest = await http.post(f"/api/daily/{today}/attempts", json={"player_key": guest_key})
        assert guest.json()["ranked"] is False and guest.json()["unranked"] == "sign_in"
        # Signing up in the same browser claims the guest key (once).
        name = _name()
        answer = await http.post(
            "/api/accounts",
            json={"name": name, "password": "correct horse", "player_key": guest_key},
        )
        assert answer.status_code == 201
        first = (await http.post(f"/api/daily/{today}/attempts", json={})).json()
        assert first["ranked"] is True
        racer = await Racer(site.ws_base, first["race_id"], _ws_headers(site, http)).connect()
        welcome = await racer.join("ignored", host_key=first["host_key"])
        assert welcome["race"]["players"][0]["name"] == name
        await racer.start()
        await racer.act("resign")
        await racer.wait_event("race_over")
        await racer.close()
        second = (await http.post(f"/api/daily/{today}/attempts", json={})).json()
        assert second["ranked"] is False and second["unranked"] == "played_today"
        assert second["race_id"] != first["race_id"]
    # Another browser, the same account: still refused a second ranked attempt.
    async with _client(site) as other:
        signed = await other.post("/api/session", json={"name": name, "password": "correct horse"})
        assert signed.status_code == 200
        third = (await other.post(f"/api/daily/{today}/attempts", json={})).json()
        assert third["ranked"] is False
        me = (await other.get(f"/api/daily/{today}/me")).json()
        assert me["entry"]["name"] == name and me["attempt"]["race_id"] == first["race_id"]

    async def on_profile() -> dict[str, Any] | None:
        async with _client(site) as http:
            found = (await http.get(f"/api/players/{name}")).json()
        return found if found["stats"]["dailies"]["played"] else None

    profile = await _eventually(on_profile)
    assert profile["calendar"] == [today]
    assert profile["races"][0]["daily"] == today and profile["races"][0]["ranked"] is True
    assert profile["races"][0]["replay"] is None  # today's deal: no replay until the day ends
    [daily] = profile["dailies"]
    assert daily["date"] == today and daily["won"] is False and daily["counted"] is False


async def test_a_deleted_accounts_past_results_show_deleted_player(site: AppServer) -> None:
    """Its race (read over HTTP and by a new spectator) and its daily entry."""
    today = d.today(int(time.time() * 1000)).isoformat()
    ann = _name()
    async with _client(site) as http:
        await _sign_up(http, ann)
        created = await create_race(site.base, code=CODE)
        r_ann = await Racer(site.ws_base, created["race_id"], _ws_headers(site, http)).connect()
        guest = await Racer(site.ws_base, created["race_id"]).connect()
        await r_ann.join("ignored", host_key=created["host_key"])
        await guest.join("Guest")
        await r_ann.start()
        await r_ann.act("resign")
        await guest.act("resign")
        await r_ann.wait_event("race_over")
        attempt = (await http.post(f"/api/daily/{today}/attempts", json={})).json()
        assert attempt["ranked"] is True
        daily = await Racer(site.ws_base, attempt["race_id"], _ws_headers(site, http)).connect()
        await daily.join("ignored", host_key=attempt["host_key"])
        await daily.start()
        await daily.act("resign")
        await daily.wait_event("race_over")
        for racer in (r_ann, guest, daily):
            await racer.close()

        async def entry_of_ann() -> dict[str, Any] | None:
            page = (await http.get(f"/api/daily/{today}/leaderboard?limit=100")).json()
            return next((e for e in page["entries"] if e["name"] == ann), None)

        entry = await _eventually(entry_of_ann)
        gone = await http.request(
            "DELETE", "/api/me", json={"name": ann, "current": "correct horse"}
        )
        assert gone.status_code == 200

        race = (await http.get(f"/api/races/{created['race_id']}")).json()
        assert [p["name"] for p in race["players"]] == ["deleted player", "Guest"]
        page = (await http.get(f"/api/daily/{today}/leaderboard?limit=100")).json()
        shown = [e for e in page["entries"] if e["entry_id"] == entry["entry_id"]]
        assert [e["name"] for e in shown] == ["deleted player"]
        assert not [e for e in page["entries"] if e["name"] == ann]
    spectator = await Racer(site.ws_base, created["race_id"]).connect()
    welcome = await spectator.spectate()
    assert [p["name"] for p in welcome["race"]["players"]] == ["deleted player", "Guest"]
    await spectator.close()


# -- persistence -----------------------------------------------------------------------


async def test_accounts_and_sessions_survive_restarts_and_are_shared(
    own_redis: RedisProcess, tmp_path: Any
) -> None:
    # Two replicas on one Redis: a session opened on one is read by the other.
    one, two = ServerProcess(own_redis.url, env=ENV), ServerProcess(own_redis.url, env=ENV)
    one.start()
    two.start()
    name = _name()
    try:
        async with _client(one) as http:
            await _sign_up(http, name)
            cookie = http.cookies["bk_session"]
        async with _client(two) as http:
            http.cookies.set("bk_session", cookie)
            assert (await http.get("/api/me")).json()["account"]["name"] == name
        own_redis.restart()
        async with _client(two) as http:
            http.cookies.set("bk_session", cookie)
            me = await _eventually(lambda: _me(two, cookie))
            assert me["name"] == name
            ok = await http.post("/api/session", json={"name": name, "password": "correct horse"})
            assert ok.status_code == 200
    finally:
        one.stop()
        two.stop()
    # The embedded SQLite broker: a server restart keeps accounts and sessions.
    url = f"sqlite:///{tmp_path / 'boulanger.db'}"
    proc = ServerProcess(url, env=ENV)
    proc.start()
    try:
        async with _client(proc) as http:
            await _sign_up(http, name)
            cookie = http.cookies["bk_session"]
        proc.stop()
        proc = ServerProcess(url, env=ENV)
        proc.start()
        me = await _me(proc, cookie)
        assert me is not None and me["name"] == name
    finally:
        proc.stop()


async def _me(server: AppServer | ServerProcess, cookie: str) -> dict[str, Any] | None:
    async with _client(server) as http:
        http.cookies.set("bk_session", cookie)
        try:
            answer = await http.get("/api/me")
        except httpx.HTTPError:
            return None
        if answer.status_code != 200:
            return None
        found: dict[str, Any] | None = answer.json()["account"]
        return found


async def _eventually(check: Any, timeout: float = 10.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            found = await check()
            if found:
                return found
            await asyncio.sleep(0.05)


async def test_a_guest_key_is_claimed_once_with_its_daily() -> None:
    # A server that ranks guests too: the guest's ranked attempt becomes the account's.
    async with AppServer("memory://", env={**ENV, "BOULANGER_DAILY_GUESTS_RANKED": "1"}) as proc:
        today = d.today(int(time.time() * 1000)).isoformat()
        key = secrets.token_urlsafe(24)
        async with _client(proc) as http:
            attempt = await http.post(f"/api/daily/{today}/attempts", json={"player_key": key})
            attempt_race = attempt.json()["race_id"]
            assert attempt.json()["ranked"] is True
            racer = await Racer(proc.ws_base, attempt_race).connect()
            await racer.join("Guest", host_key=attempt.json()["host_key"])
            await racer.start()
            await racer.act("resign")
            await racer.wait_event("race_over")
            await racer.close()
            name = _name()
            answer = await http.post(
                "/api/accounts", json={"name": name, "password": "correct horse", "player_key": key}
            )
            assert answer.status_code == 201
            me = (await http.get(f"/api/daily/{today}/me")).json()
            assert me["signed_in"] and me["attempt"]["race_id"] == attempt_race
            again = (await http.post(f"/api/daily/{today}/attempts", json={})).json()
            assert again["ranked"] is False and again["unranked"] == "played_today"
        async with _client(proc) as http:  # a second account cannot claim the key again
            await http.post(
                "/api/accounts",
                json={"name": _name(), "password": "correct horse", "player_key": key},
            )
            me = (await http.get(f"/api/daily/{today}/me")).json()
            assert me["signed_in"] and me["attempt"] is None
