"""One account on two devices: during its ranked daily the second device is not offered a
practice game that would lead into the first device's race; and a profile's past race
opens on its results in a browser that did not play it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from support.days import clear_of_midnight
from support.servers import ServerProcess

from .conftest import SERVER_ENV
from .test_browser import wait_playing


@pytest.fixture(scope="module")
def site() -> Iterator[ServerProcess]:
    """A server that ranks only signed-in players' dailies (the default)."""
    proc = ServerProcess("memory://", env={**SERVER_ENV, "BOULANGER_DAILY_GUESTS_RANKED": "0"})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def resign(page: Any) -> None:
    page.click(".stats button.resign")  # the first click arms it
    page.click(".stats button.resign")


@pytest.mark.timeout(240)
def test_a_second_device_and_a_past_race_on_another_browser(
    players: Any, site: ServerProcess
) -> None:
    clear_of_midnight(120)
    base = site.base
    name = "Two" + secrets.token_hex(2)
    password = "correct horse battery"
    phone, laptop = players("Phone", base=base), players("Laptop", base=base)
    made = phone.page.request.post(
        f"{base}/api/accounts",
        data={"name": name, "password": password},
        headers={"origin": base},
    )
    assert made.status == 201, made.text()
    signed = laptop.page.request.post(
        f"{base}/api/session",
        data={"name": name, "password": password},
        headers={"origin": base},
    )
    assert signed.status == 200, signed.text()

    # A race of one, over: a past race of the profile.
    created = phone.page.request.post(
        f"{base}/api/races", data={"cells": 4}, headers={"origin": base}
    ).json()
    phone.page.goto(base + "/")
    phone.page.evaluate(
        "([id, key]) => localStorage.setItem(`boulanger.race.${id}`, JSON.stringify({host_key: key}))",
        [created["race_id"], created["host_key"]],
    )
    phone.page.goto(f"{base}/race/{created['race_id']}")
    phone.page.click("button.start")
    wait_playing(phone)
    resign(phone.page)
    expect(phone.page.locator(".results")).to_be_visible()

    # The phone starts its ranked daily; the laptop, signed in as the same account,
    # is told it is under way elsewhere and offered nothing to play meanwhile.
    phone.page.goto(base + "/daily")
    expect(phone.page.locator(".daily-play button")).to_have_text("Play today's deal")
    phone.page.click(".daily-play button[type=submit]")
    wait_playing(phone)
    laptop.page.goto(base + "/daily")
    expect(laptop.page.locator(".my-result.elsewhere")).to_contain_text("another device")
    expect(laptop.page.locator(".daily-play")).to_be_hidden()
    expect(laptop.page.get_by_text("Play it again (practice)")).to_be_hidden()
    # The phone itself may go back and continue it.
    phone.page.goto(base + "/daily")
    expect(phone.page.locator(".my-result")).to_contain_text("under way")
    expect(phone.page.locator(".my-result a")).to_have_text("Continue it")

    # A guest's browser opens the past race from the profile: its results, no join form.
    guest = players("Guest", base=base)
    guest.page.goto(f"{base}/@/{name}")
    guest.page.click(f".history a[href='/race/{created['race_id']}']")
    expect(guest.page.locator(".results")).to_be_visible()
    expect(guest.page.locator("form.join")).to_have_count(0)
