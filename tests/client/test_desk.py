"""The review desk in Chromium, at a phone's size (390x844) and a desktop's (1280x800):
a moderator reads a held daily result's signals, confirms it with a note, reverses
it; its player sees the decision and its reason; a player who is no moderator sees
no desk. Screenshots: test-artifacts/screenshots/desk-phone.png and desk-desktop.png,
and with BOULANGER_UPDATE_SCREENSHOTS=1 into docs/screenshots/ too."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from boulanger.race import daily as d
from boulanger.solver import solve
from support.days import clear_of_midnight
from support.racer import Racer
from support.servers import RedisProcess, ServerProcess

from .conftest import REPO, SCREENSHOTS, SERVER_ENV, Player

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


@pytest.fixture(scope="module")
def site() -> Iterator[ServerProcess]:
    """A server on a Redis of its own (the command line grants the role there), that
    reviews results and ranks guests' dailies."""
    redis = RedisProcess()
    redis.start()
    env = {
        **SERVER_ENV,
        "BOULANGER_REVIEW_MIN_ACTIONS": "10",
        "BOULANGER_DAILY_GUESTS_RANKED": "1",
        "BOULANGER_COUNTDOWN_MS": "0",
    }
    proc = ServerProcess(redis.url, env=env)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
        redis.cleanup()


def _today() -> str:
    return d.today(int(time.time() * 1000)).isoformat()


async def _held_daily(site: ServerProcess, key: str, name: str) -> None:
    """A guest's ranked daily of today, won by the solver's line at the message budget."""
    async with httpx.AsyncClient(base_url=site.base) as http:
        attempt = (
            await http.post(f"/api/daily/{_today()}/attempts", json={"player_key": key})
        ).json()
    bot = await Racer(site.ws_base, attempt["race_id"]).connect()
    await bot.join(name, host_key=attempt["host_key"])
    await bot.send(type="start")
    starting = await bot.wait_event("race_starting")
    await bot.until_started()
    for move in solve(starting["code"], budget=60).actions:
        assert (await bot.move(move["src"], move["dst"], move["count"]))["type"] == "ack"
    await bot.wait_event("race_over")
    await bot.close()
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=site.base) as http:
        while True:
            me = (await http.get(f"/api/daily/{_today()}/me", headers={"X-Player-Key": key})).json()
            if me["entry"] is not None:
                assert me["entry"]["review"]["status"] == "held", me
                return
            assert time.monotonic() < deadline, "the held entry is never recorded"
            await asyncio.sleep(0.1)


def _in_a_thread(coroutine: Any) -> Any:
    """Run ``coroutine`` on an event loop of its own (Playwright's sync API has this one)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=120)


def _session(site: ServerProcess, name: str) -> str:
    with httpx.Client(base_url=site.base, headers={"origin": site.base}) as http:
        answer = http.post("/api/accounts", json={"name": name, "password": "correct horse"})
        assert answer.status_code == 201, answer.text
        return str(http.cookies["bk_session"])


def _signed_in(p: Player, site: ServerProcess, session: str) -> Player:
    p.context.add_cookies([{"name": "bk_session", "value": session, "url": site.base}])
    return p


def _shoot(p: Player, name: str, full_page: bool = False) -> None:
    p.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    width = p.page.evaluate("() => document.documentElement.scrollWidth")
    wide = p.page.evaluate(
        "() => [...document.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right"
        " > innerWidth - 1).map((e) => e.tagName + '.' + e.className + ':' + e.getBoundingClientRect().right).slice(0, 8)"
    )
    assert width <= p.page.viewport_size["width"], f"{name} scrolls sideways: {wide}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    p.page.screenshot(path=str(path), full_page=full_page)
    if os.environ.get("BOULANGER_UPDATE_SCREENSHOTS"):  # as test_screenshots.py does
        shutil.copy(path, REPO / "docs" / "screenshots" / f"{name}.png")


@pytest.mark.timeout(300)
def test_the_desk_at_phone_and_desktop_size(players: Any, site: ServerProcess) -> None:
    clear_of_midnight(180)
    key, bot = secrets.token_urlsafe(24), "Bot" + secrets.token_hex(2)
    _in_a_thread(_held_daily(site, key, bot))
    moderator = "Mod" + secrets.token_hex(2)
    session = _session(site, moderator)
    granted = subprocess.run(
        [
            sys.executable,
            "-m",
            "boulanger.cli",
            "moderators",
            "add",
            moderator,
            "--broker",
            site.broker_url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert granted.returncode == 0, granted.stderr

    # A signed-in player who is no moderator: no link, and the desk says so.
    other = _signed_in(
        players("Other", base=site.base, **DESKTOP),
        site,
        _session(site, "Oth" + secrets.token_hex(2)),
    )
    other.page.goto(f"{site.base}/")
    expect(other.page.locator("#account-link")).not_to_have_text("Sign in")
    expect(other.page.locator("#desk-link")).to_be_hidden()
    other.page.goto(f"{site.base}/desk")
    expect(other.page.locator(".desk [role=alert]")).to_have_text(
        "The review desk is for moderators."
    )

    desk = _signed_in(players("Desk", base=site.base, **DESKTOP), site, session)
    desk.page.goto(f"{site.base}/")
    expect(desk.page.locator("#desk-link")).to_be_visible()
    desk.page.click("#desk-link")
    card = desk.page.locator(".desk-result", has_text=bot)
    expect(card).to_have_count(1)
    expect(card.locator(".desk-status")).to_have_text("held")
    expect(card.locator(".desk-signals")).to_contain_text("decisions on a solver’s line")
    expect(card.locator(".desk-signals")).to_contain_text("held from")  # the line's limits
    _shoot(desk, "desk-desktop")
    # The replay of today's entry opens in the viewer, from the desk's own routes.
    card.locator("a", has_text="Replay and review").click()
    expect(desk.page.locator(".board").first).to_be_visible()
    desk.page.go_back()
    card = desk.page.locator(".desk-result", has_text=bot)
    card.locator("button.desk-confirm").click()  # no note yet: nothing is sent
    expect(card.locator(".desk-status")).to_have_text("held")
    card.locator("textarea").fill("Read the replay: a fast human.")
    card.locator("button.desk-confirm").click()
    card = desk.page.locator(".desk-result", has_text=bot)
    expect(card.locator(".desk-status")).to_have_text("confirmed")
    expect(card.locator(".desk-decision")).to_contain_text("Read the replay: a fast human.")
    expect(desk.page.locator(".audit-table tbody tr").first).to_contain_text(moderator)

    # On a phone: the same desk, and the decision reversed.
    phone = _signed_in(players("Phone", base=site.base, **PHONE), site, session)
    phone.page.goto(f"{site.base}/desk")
    card = phone.page.locator(".desk-result", has_text=bot)
    expect(card.locator(".desk-status")).to_have_text("confirmed")
    expect(phone.page.locator(".audit-table tbody tr")).to_have_count(1)
    _shoot(phone, "desk-phone", full_page=True)
    card.locator("textarea").fill("Looked again: the solver's line, move for move.")
    card.locator("button.desk-disqualify").click()
    expect(phone.page.locator(".desk-result", has_text=bot).locator(".desk-status")).to_have_text(
        "disqualified"
    )
    first = phone.page.locator(".audit-table tbody tr").first
    expect(first).to_contain_text("(reversal)")
    expect(first).to_contain_text("the solver's line, move for move")

    # The player sees the decision and its reason on the daily page.
    player = players("Player", base=site.base, **PHONE)
    player.context.add_init_script(f"localStorage.setItem('boulanger.player_key', '{key}')")
    player.page.goto(f"{site.base}/daily")
    expect(player.page.locator(".my-result")).to_contain_text("disqualified after review")
    expect(player.page.locator("p.review-disqualified")).to_contain_text(
        "the solver's line, move for move"
    )
