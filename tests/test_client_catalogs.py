"""The client's catalogs (client/lang/<code>.json): one per language, the same keys.

Fails on a key missing from a language or left over in one, a key the client
never uses or uses without defining, placeholders that differ between
languages, plural forms that are not the language's own (CLDR), and a server
error code with no message. Run it as a script to list every problem:
``python tests/test_client_catalogs.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "client"
LANG = CLIENT / "lang"
SERVER = REPO / "server" / "boulanger"

# CLDR plural categories (what Intl.PluralRules answers), cardinal and ordinal.
CARDINAL = {
    "en": {"one", "other"},
    "da": {"one", "other"},
    "sv": {"one", "other"},
    "pl": {"one", "few", "many", "other"},
    "ro": {"one", "few", "other"},
    "ru": {"one", "few", "many", "other"},
}
ORDINAL = {
    "en": {"one", "two", "few", "other"},
    "da": {"other"},
    "sv": {"one", "other"},
    "pl": {"other"},
    "ro": {"one", "other"},
    "ru": {"other"},
}
ORDINAL_KEYS = {"place.ordinal"}
# Messages of the client's own, under error.* (no server code).
CLIENT_ERRORS = {"unreachable", "status", "refused", "http"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
FILES = {"js", "json", "css", "html", "png"}  # 'race.js' names a file, not a key

Catalog = dict[str, Any]


def languages() -> list[str]:
    """The codes in i18n.js's LANGUAGES, in order."""
    text = (CLIENT / "i18n.js").read_text()
    block = text[text.index("export const LANGUAGES") : text.index("];", text.index("LANGUAGES"))]
    return re.findall(r"\['([a-z]{2,3})',", block)


def catalogs() -> dict[str, Catalog]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(LANG.glob("*.json"))}


def placeholders(value: Any) -> set[str]:
    forms = value.values() if isinstance(value, dict) else [value]
    return {name for form in forms for name in PLACEHOLDER.findall(str(form))}


def client_sources() -> str:
    files = [*sorted(CLIENT.glob("*.js")), CLIENT / "index.html"]
    return "\n".join(path.read_text() for path in files)


def used_keys(namespaces: set[str]) -> tuple[set[str], list[re.Pattern[str]]]:
    """Keys the client names: literals ('home.title'), data-i18n attributes, and
    template literals (`card.rank.${x}`) as patterns."""
    source = client_sources()
    literal = {
        key
        for key in re.findall(r"""['"]([a-z_]+(?:\.[a-z0-9_]+)+)['"]""", source)
        if key.split(".")[0] in namespaces and key.rsplit(".", 1)[1] not in FILES
    }
    patterns = []
    for template in re.findall(r"`([a-z_]+\.[^`]*\$\{[^`]*)`", source):
        if template.split(".")[0] not in namespaces:
            continue
        parts = re.split(r"\$\{[^}]*\}", template)
        patterns.append(re.compile("^" + "[A-Za-z0-9_]+".join(re.escape(p) for p in parts) + "$"))
    return literal, patterns


def server_codes() -> set[str]:
    """Every code the server may refuse with: raised, listed, or given an HTTP status."""
    codes: set[str] = set()
    for path in SERVER.rglob("*.py"):
        codes |= set(re.findall(r"""Refused\(\s*["']([a-z_]+)["']""", path.read_text()))
    errors = (SERVER / "race" / "errors.py").read_text()
    block = errors[errors.index("ERROR_CODES") :]
    codes |= set(re.findall(r'"([a-z_]+)"', block[: block.index(")")]))
    refusals = (SERVER / "web" / "refusals.py").read_text()
    block = refusals[refusals.index("HTTP_STATUS: dict") :]
    codes |= set(re.findall(r'"([a-z_]+)":', block[: block.index("}")]))
    return codes


def problems() -> list[str]:
    found: list[str] = []
    cats = catalogs()
    codes = languages()
    if set(codes) != set(cats):
        found.append(f"LANGUAGES {sorted(codes)} and the files {sorted(cats)} differ")
    english = cats.get("en", {})
    for code, catalog in cats.items():
        for key in sorted(set(english) - set(catalog)):
            found.append(f"{code}: missing {key}")
        for key in sorted(set(catalog) - set(english)):
            found.append(f"{code}: {key} is not in en")
        for key in sorted(set(catalog) & set(english)):
            value, reference = catalog[key], english[key]
            if isinstance(value, dict) != isinstance(reference, dict):
                found.append(
                    f"{code}: {key} is {'plural' if isinstance(value, dict) else 'plain'} here, not in en"
                )
            if isinstance(value, dict):
                wanted = (ORDINAL if key in ORDINAL_KEYS else CARDINAL).get(code)
                if wanted is not None and set(value) != wanted:
                    found.append(
                        f"{code}: {key} has the forms {sorted(value)}, not {sorted(wanted)}"
                    )
            if placeholders(value) != placeholders(reference):
                found.append(
                    f"{code}: {key} has the placeholders {sorted(placeholders(value))}, "
                    f"en {sorted(placeholders(reference))}"
                )
            forms = value.values() if isinstance(value, dict) else [value]
            if any(not isinstance(form, str) or not form.strip() for form in forms):
                found.append(f"{code}: {key} is empty")
    namespaces = {key.split(".")[0] for key in english}
    literal, patterns = used_keys(namespaces)
    for key in sorted(literal - set(english)):
        found.append(f"the client uses {key}, which en lacks")
    for key in sorted(english):
        if key not in literal and not any(p.match(key) for p in patterns):
            found.append(f"en: {key} is never used")
    server = server_codes()
    for key in sorted(english):
        if key.startswith("error.") and key[6:] not in server | CLIENT_ERRORS:
            found.append(f"en: {key} is no server error code")
    for code in sorted(server - {k[6:] for k in english if k.startswith("error.")}):
        found.append(f"the server code {code} has no message (error.{code})")
    return found


def test_catalogs_have_the_same_keys_and_placeholders_and_are_all_used() -> None:
    assert problems() == []


def test_every_language_has_a_catalog_and_a_line() -> None:
    codes = languages()
    assert codes[0] == "en"
    assert sorted(path.stem for path in LANG.glob("*.json")) == sorted(codes)


def test_the_checker_sees_what_is_wrong(tmp_path: Path, monkeypatch: Any) -> None:
    """A key missing, a placeholder renamed and a wrong plural form are each told."""
    lang = tmp_path / "lang"
    lang.mkdir()
    english = json.loads((LANG / "en.json").read_text())
    polish = dict(english)
    del polish["home.title"]
    polish["feed.joined"] = "{who} dołączył(a)"
    polish["cells.count"] = {"one": "{count} komórka", "other": "{count} komórki"}
    (lang / "en.json").write_text(json.dumps(english))
    (lang / "pl.json").write_text(json.dumps(polish))
    monkeypatch.setattr(sys.modules[__name__], "LANG", lang)
    monkeypatch.setattr(sys.modules[__name__], "languages", lambda: ["en", "pl"])
    found = problems()
    assert "pl: missing home.title" in found
    assert any(p.startswith("pl: feed.joined has the placeholders ['who']") for p in found)
    assert any(p.startswith("pl: cells.count has the forms") for p in found)


if __name__ == "__main__":
    for problem in problems():
        print(problem)
