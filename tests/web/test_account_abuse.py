"""Accounts under attack, through the real HTTP routes: limits that hold under any
concurrency, bounded password work, re-authentication, sessions a password change
ends, the owner's device, ceremonies used once, look-alike and reserved names.

Requests "sent at once" are ``asyncio.gather``-ed real HTTP requests; "across
processes" are two apps on one store, each with its own connections.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import secrets
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from boulanger.race import accounts as a
from support.apps import CHEAP_HASHING, AppServer
from support.authenticator import SoftPasskey
from support.racer import Racer, create_race
from support.servers import RedisProcess

ENV = {
    **CHEAP_HASHING,
    "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "1000",
    "BOULANGER_SIGNUPS_PER_ADDRESS": "1000",
    "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "1000",
    "BOULANGER_CEREMONIES_PER_ADDRESS": "1000",
    # However slow the machine, every attempt the limits let through is checked
    # (the pool's own refusals have a test of their own).
    "BOULANGER_ARGON2_WAIT_S": "120",
    "BOULANGER_ARGON2_WAITING_MAX": "1000",
}
PASSWORD = "correct horse"


def _name() -> str:
    return "p" + secrets.token_hex(4)


def _client(server: AppServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=server.base,
        headers={"origin": server.settings.public_origin or server.base},
        timeout=60,
        limits=httpx.Limits(max_connections=200),
    )


async def _sign_up(http: httpx.AsyncClient, name: str, password: str = PASSWORD) -> None:
    answer = await http.post("/api/accounts", json={"name": name, "password": password})
    assert answer.status_code == 201, answer.text


def _answers(responses: list[httpx.Response]) -> collections.Counter[str]:
    def one(r: httpx.Response) -> str:
        return f"{r.status_code} {r.json()['error']['code'] if r.status_code >= 400 else 'ok'}"

    return collections.Counter(one(r) for r in responses)


@pytest.fixture
def fresh_redis() -> Iterator[RedisProcess]:
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def pair(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[AppServer, AppServer]]:
    """Two apps on one Redis, each with its own connections (two processes); on the
    memory and SQLite stores, whose file one process holds, one app served twice."""
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ACCOUNT": "10"}
    if request.param == "redis":
        url = request.getfixturevalue("fresh_redis").url
        one, two = AppServer(url, env=env), AppServer(url, env=env)
        # One site, as behind a proxy: the same origin (a passkey's, an Origin header's).
        for app in (one, two):
            app.settings = dataclasses.replace(app.settings, public_origin=one.base)
        async with one, two:
            yield one, two
        return
    url = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'boulanger.db'}"
    async with AppServer(url, env=env) as one:
        yield one, one


# -- 1. limits that hold under any concurrency -----------------------------------------


async def test_guesses_sent_at_once_are_counted_before_any_password_is_checked(
    pair: tuple[AppServer, AppServer],
) -> None:
    one, two = pair
    name = _name()
    async with _client(one) as http:
        await _sign_up(http, name)
    async with _client(one) as first, _client(two) as second:
        answers = _answers(
            await asyncio.gather(
                *(
                    (first if i % 2 else second).post(
                        "/api/session", json={"name": name, "password": f"wrong {i:04}"}
                    )
                    for i in range(60)
                )
            )
        )
    # Ten attempts per name, whichever process they reach: the other fifty are refused
    # before any password work.
    assert answers["429 too_many_attempts"] == 50, answers
    assert answers["401 bad_credentials"] == 10, answers


async def test_made_up_names_sent_at_once_are_counted_per_address() -> None:
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "30"}
    async with AppServer("memory://", env=env) as server, _client(server) as http:
        answers = _answers(
            await asyncio.gather(
                *(
                    http.post("/api/session", json={"name": _name(), "password": "wrong one"})
                    for _ in range(40)
                )
            )
        )
    assert answers == {"401 bad_credentials": 30, "429 too_many_attempts": 10}


async def test_successful_sign_ins_are_counted_per_address() -> None:
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "3"}
    async with AppServer("memory://", env=env) as server:
        name = _name()
        async with _client(server) as http:
            await _sign_up(http, name)
        codes = []
        for _ in range(4):
            async with _client(server) as http:
                answer = await http.post("/api/session", json={"name": name, "password": PASSWORD})
                codes.append(answer.status_code)
    assert codes == [200, 200, 200, 429]


async def test_sign_ups_are_limited_per_address() -> None:
    env = {**ENV, "BOULANGER_SIGNUPS_PER_ADDRESS": "2"}
    async with AppServer("memory://", env=env) as server, _client(server) as http:
        made = [
            await http.post("/api/accounts", json={"name": _name(), "password": PASSWORD})
            for _ in range(3)
        ]
    assert [m.status_code for m in made] == [201, 201, 429]
    assert made[2].json()["error"]["code"] == "too_many_accounts"


class HeldHasher:
    """Checks passwords only when let go, and notes how many it checks at once."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.lock = threading.Lock()
        self.now = self.most = self.checked = 0

    def verify(self, stored: str, password: str) -> bool:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        self.go.wait(30)
        with self.lock:
            self.now -= 1
            self.checked += 1
        return False


async def test_password_work_is_bounded_off_the_loop_and_waiters_are_refused() -> None:
    env = {
        **ENV,
        "BOULANGER_ARGON2_SLOTS": "1",
        "BOULANGER_ARGON2_WAIT_S": "0.3",
        "BOULANGER_ARGON2_WAITING_MAX": "2",
    }
    async with AppServer("memory://", env=env) as server, _client(server) as http:
        accounts = server.services.accounts
        held = HeldHasher()
        accounts.hasher = held
        tasks = [
            asyncio.create_task(
                http.post("/api/session", json={"name": _name(), "password": "wrong one"})
            )
            for _ in range(6)
        ]
        # One is being checked, in a thread: the event loop answers meanwhile...
        async with asyncio.timeout(20):
            while held.now < 1:
                await asyncio.sleep(0.01)
        assert (await http.get("/healthz")).status_code == 200
        # ...two wait their turn a moment, three find the queue full: all five refused.
        async with asyncio.timeout(20):
            while sum(t.done() for t in tasks) < 5:
                await asyncio.sleep(0.01)
        held.go.set()
        answers = _answers(await asyncio.gather(*tasks))
    assert answers == {"401 bad_credentials": 1, "429 try_again": 5}
    assert held.most == 1 and held.checked == 1


# -- 2. re-authentication, sessions, the owner's device ---------------------------------


async def test_what_takes_an_account_over_needs_the_current_password() -> None:
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        name = _name()
        await _sign_up(http, name)
        key = SoftPasskey(server.base)
        # A stolen session alone adds no passkey, sets no password, deletes nothing.
        for body in ({}, {"current": "not the password"}):
            assert (await http.post("/api/me/passkeys/options", json=body)).status_code == 403
            changed = await http.post("/api/me/password", json={**body, "password": "taken over"})
            assert changed.status_code == 403
            gone = await http.request("DELETE", "/api/me", json={"name": name, **body})
            assert gone.status_code == 403
            assert gone.json()["error"]["code"] == "bad_credentials"
        begun = await http.post("/api/me/passkeys/options", json={"current": PASSWORD})
        assert begun.status_code == 200, begun.text
        options = begun.json()
        added = await http.post(
            "/api/me/passkeys",
            json={"ceremony": options["ceremony"], "credential": key.create(options["options"])},
        )
        assert added.status_code == 200, added.text
        gone = await http.request("DELETE", "/api/me", json={"name": name, "current": PASSWORD})
        assert gone.status_code == 200


async def test_a_passkey_only_account_confirms_with_a_passkey_assertion() -> None:
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        name, key = _name(), SoftPasskey(server.base)
        begun = (await http.post("/api/accounts/passkey/options", json={"name": name})).json()
        made = await http.post(
            "/api/accounts/passkey",
            json={"ceremony": begun["ceremony"], "credential": key.create(begun["options"])},
        )
        assert made.status_code == 201, made.text

        async def assertion() -> dict[str, Any]:
            begun = (await http.post("/api/session/passkey/options", json={})).json()
            return {"ceremony": begun["ceremony"], "credential": key.get(begun["options"])}

        bare = await http.post("/api/me/password", json={"password": "a new password"})
        assert bare.status_code == 403
        set_one = await http.post(
            "/api/me/password", json={"password": "a new password", "passkey": await assertion()}
        )
        assert set_one.status_code == 200, set_one.text
        assert set_one.json()["password"] is True
        # An assertion is used once.
        used = await assertion()
        gone = await http.request("DELETE", "/api/me", json={"name": name, "passkey": used})
        assert gone.status_code == 200, gone.text


async def test_a_password_change_ends_every_other_session() -> None:
    async with AppServer("memory://", env=ENV) as server:
        name, key = _name(), SoftPasskey(server.base)
        async with _client(server) as owner:
            await _sign_up(owner, name)
            begun = (
                await owner.post("/api/me/passkeys/options", json={"current": PASSWORD})
            ).json()
            added = await owner.post(
                "/api/me/passkeys",
                json={"ceremony": begun["ceremony"], "credential": key.create(begun["options"])},
            )
            assert added.status_code == 200
            async with _client(server) as thief, _client(server) as by_passkey:
                signed = await thief.post("/api/session", json={"name": name, "password": PASSWORD})
                assert signed.status_code == 200
                begun = (await by_passkey.post("/api/session/passkey/options", json={})).json()
                signed = await by_passkey.post(
                    "/api/session/passkey",
                    json={"ceremony": begun["ceremony"], "credential": key.get(begun["options"])},
                )
                assert signed.status_code == 200
                changed = await owner.post(
                    "/api/me/password", json={"current": PASSWORD, "password": "a new password"}
                )
                assert changed.status_code == 200, changed.text
                for other in (thief, by_passkey):
                    assert (await other.get("/api/me")).json()["account"] is None
                    assert (
                        await other.post("/api/me/passkeys/options", json={})
                    ).status_code == 401
            assert (await owner.get("/api/me")).json()["account"]["name"] == name


async def test_strangers_failures_do_not_lock_out_a_device_that_signed_in_before() -> None:
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ACCOUNT": "3"}
    async with AppServer("memory://", env=env) as server:
        name = _name()
        async with _client(server) as owner, _client(server) as stranger:
            await _sign_up(owner, name)
            assert (await owner.delete("/api/session")).status_code == 200
            guesses = [
                await stranger.post("/api/session", json={"name": name, "password": f"guess {i}"})
                for i in range(5)
            ]
            assert [g.status_code for g in guesses] == [401, 401, 401, 429, 429]
            # The stranger is shut out, right password or not; the owner's device is not.
            shut = await stranger.post("/api/session", json={"name": name, "password": PASSWORD})
            assert shut.status_code == 429
            back = await owner.post("/api/session", json={"name": name, "password": PASSWORD})
            assert back.status_code == 200, back.text
            # The device's own attempts are limited too (its cookie is new with each
            # sign-in: three more).
            await owner.delete("/api/session")
            mine = [
                await owner.post("/api/session", json={"name": name, "password": f"typo {i}"})
                for i in range(4)
            ]
            assert [m.status_code for m in mine] == [401, 401, 401, 429]


async def test_wrong_current_passwords_are_counted() -> None:
    env = {**ENV, "BOULANGER_SIGNIN_ATTEMPTS_PER_ACCOUNT": "3"}
    async with AppServer("memory://", env=env) as server, _client(server) as http:
        await _sign_up(http, _name())
        answers = await asyncio.gather(
            *(
                http.post("/api/me/password", json={"current": f"guess {i}", "password": "x" * 12})
                for i in range(8)
            )
        )
        assert _answers(answers) == {"403 bad_credentials": 3, "429 too_many_attempts": 5}
        right = await http.post(
            "/api/me/password", json={"current": PASSWORD, "password": "x" * 12}
        )
        assert right.status_code == 429


async def test_passkey_ceremonies_are_limited_per_address() -> None:
    env = {**ENV, "BOULANGER_CEREMONIES_PER_ADDRESS": "3"}
    async with AppServer("memory://", env=env) as server, _client(server) as http:
        codes = [
            (await http.post("/api/session/passkey/options", json={})).status_code for _ in range(2)
        ]
        codes += [
            (await http.post("/api/accounts/passkey/options", json={"name": _name()})).status_code
            for _ in range(2)
        ]
    assert codes == [200, 200, 200, 429]


# -- 3. a passkey assertion is used once ------------------------------------------------


async def test_one_assertion_sent_six_times_at_once_gives_one_session(
    pair: tuple[AppServer, AppServer],
) -> None:
    one, two = pair
    name, key = _name(), SoftPasskey(one.base)
    async with _client(one) as http:
        begun = (await http.post("/api/accounts/passkey/options", json={"name": name})).json()
        made = await http.post(
            "/api/accounts/passkey",
            json={"ceremony": begun["ceremony"], "credential": key.create(begun["options"])},
        )
        assert made.status_code == 201, made.text
        begun = (await http.post("/api/session/passkey/options", json={})).json()
    body = {"ceremony": begun["ceremony"], "credential": key.get(begun["options"])}
    clients = [_client(one if i % 2 else two) for i in range(6)]
    try:
        # Each client's connection open first: the six posts leave together.
        await asyncio.gather(*(c.get("/healthz") for c in clients))
        answers = await asyncio.gather(
            *(c.post("/api/session/passkey", json=body) for c in clients)
        )
    finally:
        for c in clients:
            await c.aclose()
    assert _answers(answers) == {"200 ok": 1, "400 bad_ceremony": 5}


# -- 4. names -----------------------------------------------------------------------------


async def test_a_name_in_capitals_is_the_accounts_name() -> None:
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        await _sign_up(http, "Philibert")
        for taken in ("PHILIBERT", "philibert", "PHILIBERT\u0301"):
            answer = await http.post("/api/accounts", json={"name": taken, "password": PASSWORD})
            assert answer.status_code == 409, (taken, answer.text)
        # Signed in and found by its name in any case.
        signed = await http.post("/api/session", json={"name": "PHILIBERT", "password": PASSWORD})
        assert signed.json()["name"] == "Philibert"
        assert (await http.get("/api/players/PHILIBERT")).json()["name"] == "Philibert"
        race = await create_race(server.base)
        guest = await Racer(server.ws_base, race["race_id"]).connect()
        try:
            refused = await guest.join("PHILIBERT", host_key=race["host_key"])
            assert refused["type"] == "error" and refused["code"] == "name_reserved"
        finally:
            await guest.close()


async def test_no_account_takes_the_name_guests_are_given() -> None:
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        for name in ("Player", "PLAYER", "P1ayer", "Gracz", "\u0418\u0433\u0440\u043e\u043a"):
            answer = await http.post("/api/accounts", json={"name": name, "password": PASSWORD})
            assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_name"
        race = await create_race(server.base)
        guest = await Racer(server.ws_base, race["race_id"]).connect()
        try:
            assert (await guest.join("Player", host_key=race["host_key"]))["type"] == "welcome"
        finally:
            await guest.close()


async def test_profile_links_encode_the_name() -> None:
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        await _sign_up(http, "Ann/Bo #1?")
        me = (await http.get("/api/me")).json()["account"]
        assert me["url"] == "/@/Ann%2FBo%20%231%3F"
        page = await http.get(me["url"])
        assert page.status_code == 200
        profile = await http.get("/api/players/" + me["url"].removeprefix("/@/"))
        assert profile.status_code == 200 and profile.json()["name"] == "Ann/Bo #1?"


def test_the_reserved_names_are_the_clients() -> None:
    client = Path(__file__).resolve().parents[2] / "client"
    assert "saveName(t('name.default'))" in (client / "app.js").read_text()
    given = {json.loads(path.read_text())["name.default"] for path in client.glob("lang/*.json")}
    assert given == set(a.GUEST_DEFAULTS)


async def test_an_account_kept_under_the_old_name_key_is_still_found() -> None:
    """Before the name key folded case first, an account was kept under what is now
    its shape key alone: it is still found by any name of that key ("Ivan", "IVAN"; not
    "ivan", which the old key did not find either)."""
    async with AppServer("memory://", env=ENV) as server, _client(server) as http:
        await _sign_up(http, "Ivan")
        keys = a.account_keys("Ivan")
        assert len(keys) == 2  # "ivan", and "lvan" (a capital I looks like l)
        await server.services.accounts.store.release_name(keys[0])  # as it was kept
        for name in ("Ivan", "IVAN"):
            signed = await http.post("/api/session", json={"name": name, "password": PASSWORD})
            assert signed.status_code == 200 and signed.json()["name"] == "Ivan"
        assert (await http.get("/api/players/IVAN")).json()["name"] == "Ivan"
