"""Accounts in Chromium: a passkey (Chromium's virtual authenticator, through the DevTools
protocol's WebAuthn domain) and a password, a race of signed-in players and a guest, one
ranked daily, the profile seen from another browser, sign out and in again; screenshots
of the account pages at 390x844 and 1280x800; a rated race's point on each player's
rating chart (390x844 and 1440x900, English and Polish)."""

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
from .test_browser import (
    DEAL,
    create_race,
    join,
    play_line,
    race_code,
    solve,
    wait_playing,
)

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
WIDE = {"viewport": {"width": 1440, "height": 900}}


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
    # Signed up, she is back on the daily's page, where she was.
    expect(ann.page).to_have_url(base + "/daily")
    expect(ann.page.locator(".daily-play .playing-as")).to_have_text(f"Playing as {ann_name}")
    expect(ann.page.locator("#account-link")).to_have_text(ann_name)
    stored = cdp.send("WebAuthn.getCredentials", {"authenticatorId": device})["credentials"]
    assert len(stored) == 1 and stored[0]["isResidentCredential"]

    # Bo makes one with a password; Cy stays a guest.
    bo = players("Bo", base=base, **DESKTOP)
    bo.page.goto(base + "/account")
    bo.page.fill("#up-name", bo_name)
    bo.page.fill("#up-password", "correct horse battery")
    bo.page.click("#up-submit")
    expect(bo.page.locator("#account-link")).to_have_text(bo_name)
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
        play_line(p, line)
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
    play_line(ann, solve(code))
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
    expect(dee.page.locator(f".calendar-grid .day.won[data-date='{today}']")).to_have_count(1)
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
    expect(ann.page.locator("#account-link")).to_have_text(ann_name)
    bo_phone = players("BoPhone", base=base, **PHONE)
    bo_phone.page.goto(base + "/account")
    shoot(bo_phone, "account-sign-up-phone")
    bo_phone.page.fill("#in-name", bo_name)
    bo_phone.page.fill("#in-password", "correct horse battery")
    bo_phone.page.click("#in-submit")
    expect(bo_phone.page.locator("#account-link")).to_have_text(bo_name)
    bo_phone.page.click("#account-link")  # his profile, which links to his settings
    bo_phone.page.click(".profile a.settings")
    expect(bo_phone.page.locator("main h1")).to_have_text(bo_name)
    expect(bo_phone.page.locator("#sign-out")).to_be_visible()
    shoot(bo_phone, "account-phone")


@pytest.mark.timeout(240)
def test_a_rated_race_draws_a_point_on_each_player_s_rating_chart(
    players: Any, site: ServerProcess
) -> None:
    """Two signed-in players race a rated race (each plays enough); each profile's
    rating chart then has one point, the rating the profile states, said in words
    under it; seen on a phone and a desktop, in English and in Polish."""
    names = {"Ann": "Ann" + secrets.token_hex(2), "Bo": "Bo" + secrets.token_hex(2)}
    ann, bo = (players(who, **WIDE) for who in names)
    for p in (ann, bo):
        signed = p.page.request.post(
            f"{p.base}/api/accounts",
            data={"name": names[p.name], "password": "correct horse battery"},
            headers={"origin": p.base},
        )
        assert signed.status == 201, signed.text()
    link = create_race(ann, code=DEAL, account=names["Ann"])
    bo.page.goto(link)
    bo.page.click("form.join button[type=submit]")
    bo.page.wait_for_selector(".lobby")
    ann.page.click("button.start")
    for p in (ann, bo):
        wait_playing(p)
    line = solve(race_code(ann))[:RATED_MIN_ACTIONS]
    for p in (ann, bo):
        play_line(p, line)
    for p in (bo, ann):
        resign(p)
    expect(ann.page.locator(".results")).to_be_visible()

    said = re.compile(r"^4 cells: (\d+) after 1 change \(lowest \1, highest \1\)$")
    for who in ("Bo", "Ann"):
        page = ann.page if who == "Ann" else bo.page
        # The ratings are written as the race ends: the profile is read once they are.
        page.wait_for_function(
            """async (name) => {
              const answer = await fetch(`/api/players/${encodeURIComponent(name)}`);
              return ((await answer.json()).rating_history['4'] || []).length === 1;
            }""",
            arg=names[who],
            polling=250,
        )
        page.goto(f"{ann.base}/@/{names[who]}")
        chart = page.locator(".rating-chart")
        expect(chart.locator("circle")).to_have_count(1)
        expect(chart.locator("figcaption")).to_have_text(said)
        rating = re.search(r"^(\d+) ", page.locator(".ratings").inner_text())
        assert rating is not None
        caption = said.match(chart.locator("figcaption").inner_text())
        assert caption is not None and caption.group(1) == rating.group(1)
        assert chart.locator("svg").get_attribute("aria-label") == caption.group(0)
    chart = ann.page.locator(".rating-chart")
    chart.scroll_into_view_if_needed()
    shoot(ann, "profile-rating-desktop")
    phone = players("Phone", **PHONE)
    phone.page.goto(f"{ann.base}/@/{names['Ann']}")
    phone.page.locator(".rating-chart").scroll_into_view_if_needed()
    expect(phone.page.locator(".rating-chart figcaption")).to_have_text(said)
    shoot(phone, "profile-rating-phone")
    for options, tag in ((PHONE, "phone"), (WIDE, "desktop")):
        polish = players("Pl", locale="pl-PL", **options)
        polish.page.goto(f"{ann.base}/@/{names['Ann']}")
        expect(polish.page.locator(".rating-chart figcaption")).to_have_text(
            re.compile(r"^4 wolne pola: \d+ po 1 zmianie")
        )
        polish.page.locator(".rating-chart").scroll_into_view_if_needed()
        shoot(polish, f"profile-rating-pl-{tag}")


@pytest.mark.timeout(180)
def test_deleting_an_account_asks_for_its_password_again(players: Any, site: ServerProcess) -> None:
    name = "Del" + secrets.token_hex(2)
    p = players("Del", base=site.base, **DESKTOP)
    p.page.goto(site.base + "/account")
    p.page.fill("#up-name", name)
    p.page.fill("#up-password", "correct horse battery")
    p.page.click("#up-submit")
    expect(p.page.locator("#account-link")).to_have_text(name)
    p.page.goto(site.base + "/account")
    expect(p.page.locator("main h1")).to_have_text(name)
    p.page.remove_listener("dialog", p._dialog)  # this one confirms
    p.page.on("dialog", lambda dialog: dialog.accept())
    # The delete button waits behind a closed disclosure.
    expect(p.page.locator("details.danger-zone")).not_to_have_attribute("open", "")
    expect(p.page.locator("#delete-account")).to_be_hidden()
    p.page.click("details.danger-zone summary")
    expect(p.page.locator("#delete-account")).to_be_visible()
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


WIDE = {"viewport": {"width": 1440, "height": 900}}


@pytest.fixture(scope="module")
def reviewing_site() -> Iterator[ServerProcess]:
    """A server that reviews results (from 10 actions) and ranks a new account's daily
    however many accounts this address made today."""
    env = {
        **SERVER_ENV,
        "BOULANGER_REVIEW_MIN_ACTIONS": "10",
        "BOULANGER_DAILY_NEW_ACCOUNTS_PER_ADDRESS": "0",
    }
    proc = ServerProcess("memory://", env=env)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("size", "language"), [("phone", "en"), ("desktop", "en"), ("phone", "da")]
)
def test_signed_up_back_where_i_was_and_a_profile_that_says_why(
    players: Any, reviewing_site: ServerProcess, size: str, language: str
) -> None:
    clear_of_midnight(180)
    base = reviewing_site.base
    name = "Re" + secrets.token_hex(3)
    locale = "da-DK" if language == "da" else "en-US"
    p = players("Re", base=base, locale=locale, **(PHONE if size == "phone" else WIDE))
    tag = f"{language}-{size}"

    # Signing up from the daily's page leads back to it, signed in.
    p.page.goto(base + "/daily")
    expect(p.page.locator(".daily-play button")).to_be_visible()
    p.page.click("header a#account-link")
    p.page.fill("#up-name", name)
    p.page.fill("#up-password", "correct horse battery")
    p.page.click("#up-submit")
    expect(p.page).to_have_url(base + "/daily")
    expect(p.page.locator(".daily-play .playing-as strong")).to_have_text(name)

    # The ranked daily, won at a machine's pace: held for review.
    code = str(d.game_code(d.today(int(time.time() * 1000))))
    p.page.click(".daily-play button[type=submit]")
    wait_playing(p)
    play_line(p, solve(code))
    pill = p.page.locator(".result-card .tag.held")
    expect(pill).to_be_visible()
    expect(p.page.locator(".cascade")).to_have_count(0)  # the win's cards have landed
    # The pill stays inside its tile; the day's date is one line.
    outside = pill.evaluate(
        """(el) => {
            const box = el.getBoundingClientRect();
            const tile = el.closest('.result-card > div').getBoundingClientRect();
            return box.left < tile.left || box.right > tile.right || box.bottom > tile.bottom;
        }"""
    )
    assert outside is False
    assert p.page.locator(".race-head h1 .date").evaluate("(el) => el.getClientRects().length") == 1
    p.page.locator(".result-card").scroll_into_view_if_needed()
    shoot(p, f"profile-held-result-{tag}")

    # A race of one, resigned: its replay is on the profile.
    created = p.page.request.post(base + "/api/races", data={}, headers={"origin": base}).json()
    creds = {"host_key": created["host_key"], "autostart": True}
    p.page.evaluate(
        "([id, creds]) => localStorage.setItem(`boulanger.race.${id}`, JSON.stringify(creds))",
        [created["race_id"], creds],
    )
    p.page.goto(f"{base}/race/{created['race_id']}")  # the host joins, and it starts
    wait_playing(p)
    resign(p)
    expect(p.page.locator(".results")).to_be_visible()

    p.page.goto(f"{base}/@/{name}")
    expect(p.page.locator(".profile h1")).to_have_text(name)
    expect(p.page.locator(".streak")).to_have_text("0 dage" if language == "da" else "0 days")
    why = p.page.locator(".streak-why.held")
    expect(why).to_be_visible()
    if language == "en":
        expect(why).to_contain_text("is under review: it joins the streak once a moderator")
    today = d.today(int(time.time() * 1000)).isoformat()
    expect(p.page.locator(f".calendar-grid .day.held[data-date='{today}']")).to_have_count(1)
    expect(p.page.locator(".calendar-grid .day")).to_have_count(42)
    expect(p.page.locator(".times-chart svg circle.dot.held")).to_have_count(1)
    history = p.page.locator(".history > li")
    expect(history).to_have_count(2)
    expect(p.page.locator(".history .held-why")).to_have_count(1)
    replay = p.page.locator(".history a.replay-link")
    expect(replay).to_have_count(1)  # today's daily has none until the day ends
    href = replay.get_attribute("href") or ""
    assert href.startswith(f"/race/{created['race_id']}/replay/")
    shoot(p, f"profile-{tag}")
    p.page.screenshot(path=str(SCREENSHOTS / f"profile-{tag}-full.png"), full_page=True)
    if size == "phone":  # nor at 320 px does the calendar push the page sideways
        p.page.set_viewport_size({"width": 320, "height": 780})
        width = p.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 320, width
        p.page.set_viewport_size(PHONE["viewport"])
    replay.click()
    expect(p.page).to_have_url(base + href)

    # Settings: deleting the account waits behind a closed disclosure.
    p.page.goto(f"{base}/@/{name}")
    p.page.click(".profile a.settings")
    expect(p.page.locator("#sign-out")).to_be_visible()
    expect(p.page.locator("details.danger-zone")).not_to_have_attribute("open", "")
    expect(p.page.locator("#delete-account")).to_be_hidden()
    shoot(p, f"profile-account-{tag}")
    p.page.click("details.danger-zone summary")
    expect(p.page.locator("#delete-account")).to_be_visible()
    shoot(p, f"profile-account-danger-{tag}")

    # Signed out, signing in from the daily's page leads back to it too.
    p.page.click("#sign-out")
    expect(p.page.locator("#sign-in")).to_be_visible()
    # This time the sign-in page is a page load (a link followed before the app
    # runs is one): the referrer says where the player was.
    p.page.goto(base + "/daily")
    expect(p.page.locator(".daily-play button")).to_be_visible()
    with p.page.expect_navigation():
        p.page.evaluate("() => { window.location.href = '/account'; }")
    expect(p.page.locator("#sign-in")).to_be_visible()
    assert p.page.evaluate("() => document.referrer") == base + "/daily"
    p.page.fill("#in-name", name)
    p.page.fill("#in-password", "correct horse battery")
    p.page.click("#in-submit")
    expect(p.page).to_have_url(base + "/daily")
    expect(p.page.locator("#account-link")).to_have_text(name)
