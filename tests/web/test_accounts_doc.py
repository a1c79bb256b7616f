"""docs/protocol.md's "Accounts" table lists exactly the routes the server has."""

from __future__ import annotations

import json
import re

from starlette.routing import Route

from boulanger.broker.desk import AuditEntryDict
from boulanger.web import accounts_http, desk_http, passkeys
from boulanger.web.desk import DeskResult
from boulanger.web.profiles import Profile, ProfileDaily, ProfileRace
from support.protocol_doc import section


def test_every_account_route_is_documented() -> None:
    table = set(re.findall(r"^\| `([A-Z]+) (/[^`?]+)(?:\?[^`]*)?` \|", section("Accounts"), re.M))
    served = set()
    for route in (*accounts_http.routes(), *passkeys.routes()):
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                served.add((method, re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)))
    assert table == served


def test_the_documented_shapes_are_the_servers() -> None:
    text = section("Accounts")
    blocks = re.findall(r"```json\n(.*?)\n```", text, re.S)
    assert len(blocks) == 2
    account, profile = (json.loads(b) for b in blocks)
    assert set(account) == {"name", "password", "passkeys", "url", "language"}
    assert set(profile) == set(Profile.__annotations__)
    # A race's "held" is there only for a result held (the example's is not).
    assert set(profile["races"][0]) == set(ProfileRace.__annotations__) - {"held"}
    assert set(profile["dailies"][0]) == set(ProfileDaily.__annotations__)
    assert set(profile["stats"]["races"]) == {
        "played", "won", "first", "win_rate", "best_ms", "median_ms",
    }  # fmt: skip


def test_every_desk_route_is_documented() -> None:
    text = section("Review desk")
    table = set(re.findall(r"^\| `([A-Z]+) (/[^`?]+)(?:\?[^`]*)?` \|", text, re.M))
    served = set()
    for route in desk_http.routes():
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                served.add((method, route.path))
    assert table == served
    result, audit = (json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", text, re.S))
    # A daily result: every field but a race's page.
    assert set(result) == set(DeskResult.__annotations__) - {"race"}
    assert set(audit) == set(AuditEntryDict.__required_keys__)
