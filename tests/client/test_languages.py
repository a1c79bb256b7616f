"""The client in each of its languages: every page a player sees, at a phone
size (390x844, touch) and a desktop size, opened by a browser that prefers
the language (navigator.languages).

On each page: <html lang> is the language, the title is the catalog's, no
English words are left (the English catalog's words that differ from the
language's, looked for in the visible text and in aria-labels, titles and
placeholders), no button label is cut, nothing scrolls sideways at 320, 390
and 768 px, and axe finds nothing serious or critical. Polish and Russian
plural forms are checked in the browser (Intl.PluralRules).

One browser, one context per language and size; the pages are a practice
game on BK1-C4-AAAAAAC (running, then resigned: results), its replay, today's
daily challenge, a profile, the rules and the home page. Run with
BOULANGER_UPDATE_SCREENSHOTS=1 to write docs/screenshots/<lang>-<size>-<page>.png.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import REPO, SCREENSHOTS, Player
from .test_accessibility import serious
from .test_browser import wait_playing
from .test_bugs import DEAL, PHONE

LANG = REPO / "client" / "lang"
LANGUAGES = ("en", "da", "sv", "pl", "ro", "ru")
SIZES = {"phone": PHONE, "desktop": {"viewport": {"width": 1280, "height": 860}}}
WIDTHS = (320, 390, 768)
# Screenshots kept in docs/: every page at phone size in these languages, and a
# few at desktop size.
DOC_PHONE = ("en", "da", "pl", "ru")
DOC_DESKTOP = {"pl": ("home", "race", "rules"), "ru": ("home", "results", "rules")}
PLACEHOLDER = re.compile(r"\{\w+\}")
# How many cards move at once, by empty free cells (rows): onto a card with 0,
# 1, 2 empty columns, then into an empty column with 1, 2 empty in all.
GROUP_TABLE = [
    [1, 2, 4, 1, 2],
    [2, 4, 8, 2, 4],
    [3, 6, 12, 3, 6],
    [4, 8, 16, 4, 8],
    [5, 10, 20, 5, 10],
]


def catalog(code: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((LANG / f"{code}.json").read_text())
    return loaded


def forms(value: Any) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [value]


def english_left(code: str) -> list[str]:
    """English words that must not be on a page in `code`: the literal parts of
    every English message the language says otherwise (five letters or more)."""
    if code == "en":
        return []
    english, own = catalog("en"), catalog(code)
    theirs = {form for value in own.values() for form in forms(value)}
    found = set()
    for key, value in english.items():
        if key.startswith("card.rank.") or forms(value) == forms(own.get(key)):
            continue
        for form in forms(value):
            for part in PLACEHOLDER.split(form):
                part = part.strip(" .,:;!?()—-·")
                letters = sum(ch.isalpha() for ch in part)
                # A word both languages share (a name, "FreeCell") is no leftover.
                if letters >= 5 and not any(part in text for text in theirs):
                    found.add(part)
    return sorted(found, key=len, reverse=True)


def page_words(p: Player) -> str:
    """What the page says: its visible text, and its labels, titles and placeholders."""
    return str(
        p.page.evaluate(
            """() => {
                const said = [document.title, document.body.innerText];
                for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
                    if (el.closest('[hidden]')) continue;
                    for (const name of ['aria-label', 'title', 'placeholder']) {
                        if (el.hasAttribute(name)) said.push(el.getAttribute(name));
                    }
                }
                return said.join('\\n');
            }"""
        )
    )


def cut_labels(p: Player) -> list[str]:
    """Buttons (and links drawn as buttons) whose label does not fit them."""
    cut: list[str] = p.page.evaluate(
        """() => [...document.querySelectorAll('button, a.button, summary')]
            .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
            .map((el) => el.textContent.trim())"""
    )
    return cut


def sideways(p: Player, size: str) -> list[str]:
    """Widths at which the page is wider than the window (phone size only:
    the desktop one is wider than all of them)."""
    if size != "phone":
        return []
    wide = []
    for width in WIDTHS:
        p.page.set_viewport_size({"width": width, "height": 844})
        over = p.page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if over:
            wide.append(f"{width}px: {over}px too wide")
    p.page.set_viewport_size(PHONE["viewport"])
    return wide


def shoot(p: Player, code: str, size: str, page: str) -> None:
    keep = (size == "phone" and code in DOC_PHONE) or page in DOC_DESKTOP.get(code, ())
    if os.environ.get("BOULANGER_UPDATE_SCREENSHOTS") and keep:
        folder = REPO / "docs" / "screenshots"
    else:
        folder = SCREENSHOTS / "languages"
    folder.mkdir(parents=True, exist_ok=True)
    p.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    p.page.wait_for_function(
        "() => document.getAnimations().every((a) => a.playState !== 'running')"
    )
    p.page.screenshot(path=str(folder / f"{code}-{size}-{page}.png"))


def check(p: Player, code: str, size: str, page: str, title: str) -> list[str]:
    """Every problem of the page as it is now."""
    where = f"{code} {size} {page}"
    problems = []
    lang = p.page.evaluate("() => document.documentElement.lang")
    if lang != code:
        problems.append(f"{where}: html lang is {lang!r}")
    if p.page.title() != title:
        problems.append(f"{where}: title {p.page.title()!r}, not {title!r}")
    words = page_words(p)
    left = [w for w in english_left(code) if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", words)]
    if left:
        problems.append(f"{where}: English left: {left[:5]}")
    cut = cut_labels(p)
    if cut:
        problems.append(f"{where}: cut labels: {cut}")
    problems += [f"{where}: {wide}" for wide in sideways(p, size)]
    problems += serious(p, where)
    shoot(p, code, size, page)
    return problems


@pytest.fixture(scope="module")
def profile_name(server: Any) -> str:
    """An account whose profile the pages open."""
    name = "lang" + secrets.token_hex(3)
    request = urllib.request.Request(
        server.base + "/api/accounts",
        data=json.dumps({"name": name, "password": "correct horse"}).encode(),
        headers={"Content-Type": "application/json", "Origin": server.base},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 201
    return name


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("code", LANGUAGES)
def test_every_page_speaks_the_language(
    players: Any, profile_name: str, code: str, size: str
) -> None:
    words = catalog(code)

    def titled(key: str) -> str:
        return str(words["title.page"]).replace("{title}", str(words[key]))

    problems: list[str] = []
    options = SIZES[size]
    # At phone size a first-timer: the first-game guide comes before the race.
    locale = {"en": "en-GB", "pl": "pl-PL"}.get(code, code)
    p = players(f"{code}-{size}", locale=locale, guide=size == "phone", **options)
    base = p.base
    p.page.goto(base + "/")
    p.page.wait_for_selector("main h1")
    problems += check(p, code, size, "home", str(words["title.home"]))

    p.page.goto(base + "/rules")
    p.page.wait_for_selector(".rules-page .group-table")
    # The group-move table: docs/rules.md's numbers, in every language.
    cells = p.page.locator(".group-table tbody td").all_text_contents()
    assert cells == [str(n) for row in GROUP_TABLE for n in row], cells
    problems += check(p, code, size, "rules", titled("title.rules"))

    p.page.goto(base + "/daily")
    p.page.wait_for_selector(".daily-board table, .daily-board p")
    problems += check(p, code, size, "daily", titled("title.daily"))

    p.page.goto(f"{base}/@/{profile_name}")
    p.page.wait_for_selector(".profile")
    problems += check(p, code, size, "profile", f"{profile_name} · Boulanger")

    p.page.goto(f"{base}/practice?code={DEAL}")
    if size == "phone":  # a first game: the guide comes before the start
        p.page.wait_for_selector(".guide .guide-next")
        problems += check(p, code, size, "guide", titled("title.race"))
        p.page.click(".guide .guide-skip")
    wait_playing(p)
    problems += check(p, code, size, "race", titled("title.race"))

    p.page.click(".stats button.resign")
    p.page.click(".stats button.resign.armed")
    expect(p.page.locator(".results")).to_be_visible()
    problems += check(p, code, size, "results", titled("title.race"))

    race_id, me = p.page.evaluate("() => [window.boulanger.raceId, window.boulanger.me]")
    p.page.goto(f"{base}/race/{race_id}/replay/{me}")
    p.page.wait_for_selector(".replay-game .board .card")
    p.page.wait_for_selector(".review .finding, .review p:not(.loading)")
    problems += check(p, code, size, "replay", titled("title.replay"))
    p.context.close()
    assert problems == []


PLURALS = {
    # count: the word for "card" after it
    "pl": {1: "karta", 2: "karty", 5: "kart", 12: "kart", 21: "kart", 22: "karty", 25: "kart"},
    "ru": {1: "карта", 2: "карты", 5: "карт", 12: "карт", 21: "карта", 22: "карты", 25: "карт"},
}


@pytest.mark.parametrize("code", sorted(PLURALS))
def test_polish_and_russian_counts_take_their_plural_forms(players: Any, code: str) -> None:
    p = players(f"plural-{code}")
    p.page.goto(f"{p.base}/rules?lang={code}")
    p.page.wait_for_selector(".rules-page")
    said = p.page.evaluate(
        """async (counts) => {
            const { t, language } = await import('/static/i18n.js');
            return [language(), counts.map((count) => t('board.column_cards', { count, cards: '' }))];
        }""",
        list(PLURALS[code]),
    )
    assert said[0] == code
    for (count, word), text in zip(PLURALS[code].items(), said[1], strict=True):
        assert text.startswith(f"{count} {word},"), (count, text)


def test_the_choice_is_kept_and_a_link_carries_one(players: Any) -> None:
    """The picker's choice outlives a reload; ?lang=xx wins and is kept."""
    p = players("Chooser")
    p.page.goto(p.base + "/")
    expect(p.page.locator("html")).to_have_attribute("lang", "en")
    p.page.click("#lang summary")
    p.page.click("#lang a[data-lang=da]")
    expect(p.page.locator("html")).to_have_attribute("lang", "da")
    expect(p.page.locator("main h1")).to_have_text(str(catalog("da")["home.title"]))
    p.page.reload()
    expect(p.page.locator("html")).to_have_attribute("lang", "da")
    p.page.goto(p.base + "/rules?lang=ru")
    expect(p.page.locator("main h1")).to_have_text(str(catalog("ru")["rules.title"]))
    p.page.goto(p.base + "/")
    expect(p.page.locator("html")).to_have_attribute("lang", "ru")


def test_the_language_follows_the_account_to_another_device(players: Any) -> None:
    """Chosen while signed in on one device, the language is the account's:
    signing in on another switches that one to it."""
    name = "poly" + secrets.token_hex(3)
    phone = players("Phone", **PHONE)
    phone.page.goto(phone.base + "/account")
    phone.page.fill("#up-name", name)
    phone.page.fill("#up-password", "correct horse")
    phone.page.click("#up-submit")
    expect(phone.page.locator("#account-link")).to_have_text(name)
    phone.page.click("#lang summary")
    phone.page.click("#lang a[data-lang=pl]")
    expect(phone.page.locator("html")).to_have_attribute("lang", "pl")
    phone.page.wait_for_function(
        "async () => (await (await fetch('/api/me')).json()).account.language === 'pl'"
    )
    laptop = players("Laptop")
    laptop.page.goto(laptop.base + "/account")
    expect(laptop.page.locator("html")).to_have_attribute("lang", "en")
    laptop.page.fill("#in-name", name)
    laptop.page.fill("#in-password", "correct horse")
    laptop.page.click("#in-submit")
    expect(laptop.page.locator("html")).to_have_attribute("lang", "pl")
    expect(laptop.page.locator("#account-link")).to_have_text(name)
    laptop.page.goto(laptop.base + "/account")
    expect(laptop.page.locator("#sign-out")).to_have_text(str(catalog("pl")["account.sign_out"]))
    laptop.page.reload()  # kept in this browser too
    expect(laptop.page.locator("html")).to_have_attribute("lang", "pl")
