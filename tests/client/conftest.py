"""Browser tests of the web client against a real ``boulanger serve`` process.

Chromium is Debian's: its headless shell (``chromium-headless-shell``, built
from the same source as ``chromium``, the browser Playwright itself runs
headless tests in) where it is installed, else ``chromium``; the browser tests
pass on both, and the shell takes about a third less CPU for them.
``BOULANGER_CHROMIUM`` names another. Playwright's own browser downloads are
not used. Screenshots go to test-artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.servers import ServerProcess

playwright_sync = pytest.importorskip("playwright.sync_api")
# Assertions wait for their condition this long (Playwright's default is 5 s).
playwright_sync.expect.set_options(timeout=10_000)

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# A countdown long enough to be seen on a busy machine, short enough to keep
# the suite quick; the budget lets a scripted winner play a whole solution
# without pausing (a person never comes near it), and no review holds its
# result (review_server below has the review on).
SERVER_ENV = {
    "BOULANGER_COUNTDOWN_MS": "3000",
    "BOULANGER_MESSAGES_PER_SECOND": "100",
    "BOULANGER_MESSAGE_BURST": "200",
    "BOULANGER_PING_INTERVAL_S": "2",  # so that the tests see pings answered
    "BOULANGER_QUICK_RACE_WAIT_S": "2",  # a quick race starts 2 s after its second player
    "BOULANGER_REVIEW_MIN_ACTIONS": "1000000",
    # Every browser of the suite creates its races (practice games, rematches
    # and daily attempts included) from 127.0.0.1: the per-address limit has
    # tests of its own (tests/web).
    "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "1000",
    # The same for the accounts they make and sign in to.
    "BOULANGER_SIGNUPS_PER_ADDRESS": "1000",
    "BOULANGER_SIGNIN_ATTEMPTS_PER_ADDRESS": "1000",
}


NETWORK_NOISE = ("WebSocket connection to", "Failed to load resource")


def _chromium() -> str:
    path = (
        os.environ.get("BOULANGER_CHROMIUM")
        or shutil.which("chromium-headless-shell")
        or shutil.which("chromium")
        or "/usr/bin/chromium"
    )
    if not Path(path).exists():
        pytest.skip("Debian's chromium is not installed (make system-deps installs it)")
    return path


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    """One ``boulanger serve`` for the browser tests (its deals: see TEST_CATALOG_SEED)."""
    proc = ServerProcess("memory://", env=SERVER_ENV)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def review_server() -> Iterator[ServerProcess]:
    """A server that reviews results (the default limits of human play)."""
    proc = ServerProcess("memory://", env={**SERVER_ENV, "BOULANGER_REVIEW_MIN_ACTIONS": "10"})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope: Playwright's sync API must not outlive into other
    # modules' asyncio tests.
    chromium = _chromium()
    with playwright_sync.sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class Player:
    """One browser context and its page, with what the page said and sent."""

    def __init__(
        self, browser: Any, base: str, name: str, guide: bool = False, **options: Any
    ) -> None:
        self.name = name
        self.base = base
        options.setdefault("viewport", {"width": 1280, "height": 860})
        # English unless a test asks for another language (navigator.languages).
        options.setdefault("locale", "en-US")
        self.context = browser.new_context(**options)
        if not guide:
            # This player has seen the first-game guide (tests of it ask for it).
            self.context.add_init_script("localStorage.setItem('boulanger.guide', 'done')")
        self.context.set_default_timeout(10_000)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.sent: list[dict[str, Any]] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", self._console)
        self.page.on("dialog", self._dialog)
        self.page.on("websocket", self._socket)

    def _console(self, msg: Any) -> None:
        # Network noise the tests cause on purpose (dropped sockets, offline).
        if msg.type == "error" and not msg.text.startswith(NETWORK_NOISE):
            self.errors.append(msg.text)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _socket(self, ws: Any) -> None:
        def sent(payload: Any) -> None:
            with contextlib.suppress(ValueError, TypeError):
                self.sent.append(json.loads(payload))

        ws.on("framesent", sent)

    def sent_types(self) -> list[str]:
        return [m.get("type", "?") for m in self.sent]

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def players(browser: Any, server: ServerProcess) -> Iterator[Callable[..., Player]]:
    """Make players (browser contexts); closed after the test, which fails on page errors.

    ``base`` makes a player of another server (``review_server``).
    """
    made: list[Player] = []

    def make(name: str, base: str | None = None, **options: Any) -> Player:
        player = Player(browser, base or server.base, name, **options)
        made.append(player)
        return player

    yield make
    errors = {p.name: p.errors for p in made if p.errors}
    for player in made:
        player.context.close()
    assert not errors, f"browser errors: {errors}"
