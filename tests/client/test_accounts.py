"""Accounts in Chromium: a passkey (Chromium's virtual authenticator, through the DevTools
protocol's WebAuthn domain) and a password, a race of signed-in players and a guest, one
ranked daily, the profile seen from another browser, sign out and in again; screenshots
of the account pages at 390x844 and 1280x800."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from boulanger.race import daily as d
from boulanger.race.accounts import RATED_MIN_ACTIONS
from support.days import clear_of_midnight
from support.servers import ServerProcess

from .conftest import SCREENSHOTS, SERVER_ENV, Player
from .test_browser import create_race, join, key_move, race_code, solve, wait_playing

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


@pytest.fixture(scope="module")
def site() -> Iterator[ServerProcess]:
    """A server that ranks only signed-in players' dailies (the default)."""
    proc = ServerProcess("memory://", env={**SERVER_ENV, "BOULANGER_DAILY_GUESTS_RANKED": "0"})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def passkey_device(p: Player) -> tuple[Any, str]:
    """A virtual platform authenticator in this browser context (resident keys, verified
    user): the CDP session and the authenticator's id."""
    cdp = p.context.new_cdp_session(p.page)
    cdp.send("WebAuthn.enable")
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(added["authenticatorId"])


def shoot(p: Player, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    p.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    width = p.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= p.page.viewport_size["width"], f"{name} scrolls sideways"
    p.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def resign(p: Player) -> None:
    p.page.click(".stats button.resign")  # the first click arms it
    p.page.click(".stats button.resign")


@pytest.mark.timeout(420)
def test_accounts_race_daily_and_profile(players: Any, site: ServerProcess) -> None:
    clear_of_midnight(180)
    # A passkey's relying party is a domain, never an IP address: the pages are
    # opened at localhost (a secure context over plain HTTP too).
    base = site.base.replace("127.0.0.1", "localhost")
    ann_name, bo_name = "Ann" + secrets.token_hex(2), "Bo" + secrets.token_hex(2)

    # Ann makes an account with a passkey.
    ann = players("Ann", base=base, **DESKTOP)
    cdp, device = passkey_device(ann)
    ann.page.goto(base + "/daily")
    expect(ann.page.locator(".unranked")).to_contain_text("As a guest you play unranked")
    expect(ann.page.locator(".daily-play button")).to_have_text("Play today's deal (unranked)")
    ann.page.click("header a#account-link")
    expect(ann.page.locator("#sign-up")).to_be_visible()
    shoot(ann, "account-sign-up-desktop")
    ann.page.fill("#up-name", ann_name)
    ann.page.click("#up-passkey")
    expect(ann.page.locator("main h1")).to_have_text(ann_name)
    expect(ann.page.locator("#account-link")).to_have_text(ann_name)
    stored = cdp.send("WebAuthn.getCredentials", {"authenticatorId": device})["credentials"]
    assert len(stored) == 1 and stored[0]["isResidentCredential"]

    # Bo makes one with a password; Cy stays a guest.
    bo = players("Bo", base=base, **DESKTOP)
    bo.page.goto(base + "/account")
    bo.page.fill("#up-name", bo_name)
    bo.page.fill("#up-password", "correct horse battery")
    bo.page.click("#up-submit")
    expect(bo.page.locator("main h1")).to_have_text(bo_name)
    cy = players("Cy", base=base, **DESKTOP)

    # A race of friends: each signed-in player is marked, with their rating beside
    # their name; a guest cannot take an account's name.
    link = create_race(ann, code=None, account=ann_name)
    # Signed in, nobody is asked a name on the home page either.
    bo.page.goto(base + "/")
    expect(bo.page.locator(".who .playing-as")).to_have_text(f"Playing as {bo_name}")
    expect(bo.page.locator("#home-name")).to_have_attribute("type", "hidden")
    shoot(bo, "home-playing-as-desktop")
    bo.page.set_viewport_size(PHONE["viewport"])
    shoot(bo, "home-playing-as-phone")
    bo.page.set_viewport_size(DESKTOP["viewport"])
    # Signed in, Bo is not asked for a name: he plays as his account.
    bo.page.goto(link)
    expect(bo.page.locator("form.join .playing-as")).to_have_text(f"Playing as {bo_name} Join")
    expect(bo.page.locator("#join-name")).to_have_count(0)
    shoot(bo, "join-playing-as-desktop")
    bo.page.set_viewport_size(PHONE["viewport"])
    shoot(bo, "join-playing-as-phone")
    bo.page.set_viewport_size(DESKTOP["viewport"])
    bo.page.click("form.join button[type=submit]")
    bo.page.wait_for_selector(".lobby")
    cy.page.goto(link)
    cy.page.fill("#join-name", bo_name.upper())
    cy.page.click("form.join button[type=submit]")
    expect(cy.page.locator("form.join .problem")).to_contain_text(bo_name.upper())
    join(cy, link)
    lobby = ann.page.locator(".standings")
    for name in (ann_name, bo_name):
        line = lobby.locator("li.player", has_text=name)
        expect(line.locator(".tag.signed-in")).to_be_visible()
        expect(line.locator(".rating")).to_have_text("rating 0")
    guest = lobby.locator("li.player", has_text="Cy")
    expect(guest).to_be_visible()
    expect(guest.locator(".tag.signed-in, .rating")).to_have_count(0)
    shoot(ann, "lobby-signed-in-desktop")
    phone = players("Phone", base=base, **PHONE)
    phone.page.goto(link + "?watch=1")
    expect(phone.page.locator("li.player .tag.signed-in")).to_have_count(2)
    shoot(phone, "lobby-signed-in-phone")
    ann.page.click("button.start")
    for p in (ann, bo, cy):
        wait_playing(p)
    # Ann and Bo play before they resign: a race counts for ratings once every
    # signed-in player played (docs/fair-play.md).
    line = solve(race_code(ann))[:RATED_MIN_ACTIONS]
    for p in (ann, bo):
        for move in line:
            key_move(p, move)
    for p in (cy, bo, ann):
        resign(p)
    expect(ann.page.locator(".results")).to_be_visible()
    expect(ann.page.locator(".results-table .who .tag.signed-in")).to_have_count(2)
    shoot(ann, "results-signed-in-desktop")
    expect(phone.page.locator(".results-table .who .tag.signed-in")).to_have_count(2)
    shoot(phone, "results-signed-in-phone")

    # Ann's one ranked daily: won; a second one is practice.
    code = str(d.game_code(d.today(int(time.time() * 1000))))
    ann.page.goto(base + "/daily")
    expect(ann.page.locator(".daily-play button")).to_have_text("Play today's deal")
    expect(ann.page.locator(".daily-play .playing-as")).to_have_text(f"Playing as {ann_name}")
    expect(ann.page.locator("#daily-name")).to_have_attribute("type", "hidden")
    shoot(ann, "daily-playing-as-desktop")
    ann.page.click(".daily-play button[type=submit]")
    wait_playing(ann)
    expect(ann.page.locator(".race-head .badge")).to_have_text("ranked")
    for move in solve(code):
        key_move(ann, move)
    expect(ann.page.locator(".results")).to_be_visible()
    ann.page.goto(base + "/daily")
    expect(ann.page.locator(".my-result")).to_contain_text("won")
    expect(ann.page.locator(".daily-board tr.me")).to_contain_text(ann_name)
    expect(ann.page.locator(".daily-play button")).to_have_text("Play it again (practice)")
    today = d.today(int(time.time() * 1000)).isoformat()
    again = ann.page.request.post(
        f"{base}/api/daily/{today}/attempts", data={}, headers={"origin": base}
    ).json()
    assert again["ranked"] is False and again["unranked"] == "played_today"

    # Another browser (a phone) sees her profile: the daily, the streak, the rating.
    dee = players("Dee", base=base, **PHONE)
    dee.page.goto(f"{base}/@/{ann_name}")
    expect(dee.page.locator("main h1")).to_have_text(ann_name)
    expect(dee.page.locator(".streak")).to_have_text("1 day")
    expect(dee.page.locator(".ratings")).to_contain_text(re.compile(r"\d+ \(4 cells, 1 race\)"))
    expect(dee.page.locator(".calendar")).to_contain_text(today[5:])
    expect(dee.page.locator(".history li")).to_have_count(2)
    shoot(dee, "profile-phone")
    desk = players("Desk", base=base, **DESKTOP)
    desk.page.goto(f"{base}/@/{ann_name}")
    expect(desk.page.locator(".streak")).to_have_text("1 day")
    shoot(desk, "profile-desktop")

    # Ann signs out and in again with her passkey; Bo with his password, on a phone.
    ann.page.goto(base + "/account")
    shoot(ann, "account-desktop")
    ann.page.click("#sign-out")
    expect(ann.page.locator("#sign-in")).to_be_visible()
    expect(ann.page.locator("#account-link")).to_have_text("Sign in")
    ann.page.click("#in-passkey")
    expect(ann.page.locator("main h1")).to_have_text(ann_name)
    bo_phone = players("BoPhone", base=base, **PHONE)
    bo_phone.page.goto(base + "/account")
    shoot(bo_phone, "account-sign-up-phone")
    bo_phone.page.fill("#in-name", bo_name)
    bo_phone.page.fill("#in-password", "correct horse battery")
    bo_phone.page.click("#in-submit")
    expect(bo_phone.page.locator("main h1")).to_have_text(bo_name)
    shoot(bo_phone, "account-phone")


@pytest.mark.timeout(180)
def test_deleting_an_account_asks_for_its_password_again(players: Any, site: ServerProcess) -> None:
    name = "Del" + secrets.token_hex(2)
    p = players("Del", base=site.base, **DESKTOP)
    p.page.goto(site.base + "/account")
    p.page.fill("#up-name", name)
    p.page.fill("#up-password", "correct horse battery")
    p.page.click("#up-submit")
    expect(p.page.locator("main h1")).to_have_text(name)
    p.page.remove_listener("dialog", p._dialog)  # this one confirms
    p.page.on("dialog", lambda dialog: dialog.accept())
    # No password typed: nothing is sent, the field asks for it.
    p.page.click("#delete-account")
    expect(p.page.locator("#pw-current")).to_be_focused()
    expect(p.page.locator("#toast")).to_have_text("Type your current password first.")
    p.page.fill("#pw-current", "not the password")
    p.page.click("#delete-account")
    expect(p.page.locator("#toast")).to_have_text("wrong name or password")
    expect(p.page.locator("main h1")).to_have_text(name)
    p.page.fill("#pw-current", "correct horse battery")
    p.page.click("#delete-account")
    expect(p.page).to_have_url(re.compile(r"/$"))
    expect(p.page.locator("#account-link")).to_have_text("Sign in")
