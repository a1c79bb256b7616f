"""The client under its Content-Security-Policy, in Chromium: no violation anywhere.

The policy (boulanger.web.headers) has no 'unsafe-inline': an inline script
or a ``style`` attribute in the page would be refused and reported. Every
page is loaded, a race is created, joined and played over its WebSocket,
and no violation may be reported; a planted inline script shows that
violations are seen when there are some.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from .test_browser import create_race, practise, settled, view, wait_playing

# Records every violation the browser reports, from before the page's own scripts run.
RECORD = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || ''));
});
"""


def _violations(page: Any) -> list[str]:
    return list(page.evaluate("window.__violations"))


def test_the_client_runs_under_its_policy_without_violations(players: Any) -> None:
    ann = players("Ann")
    page = ann.page
    page.add_init_script(RECORD)
    policies = []
    page.on(
        "response",
        lambda r: (
            policies.append(r.headers.get("content-security-policy"))
            if r.request.resource_type == "document"
            else None
        ),
    )
    for path in ["/", "/daily", "/practice"]:
        page.goto(ann.base + path)
        expect(page.locator("main#main > *").first).to_be_visible()
        page.wait_for_load_state("networkidle")
        assert _violations(page) == [], path
    assert policies and all(p and "unsafe-inline" not in p for p in policies)

    # A race: created, joined and started over fetch and a WebSocket; then a
    # practice game played (the board's styles are set through the CSSOM).
    link = create_race(ann)
    assert "/race/" in link
    page.click("button.start")
    wait_playing(ann)
    practise(ann)
    page.keyboard.press("1")
    page.keyboard.press("a")
    settled(ann)
    assert any(card is not None for card in view(ann)["board"]["cells"])
    assert _violations(page) == []

    # The policy is enforced: an inline script planted in the page does not run.
    ran = page.evaluate(
        """() => {
        window.__ran = false;
        const s = document.createElement('script');
        s.textContent = 'window.__ran = true';
        document.body.appendChild(s);
        return window.__ran;
    }"""
    )
    assert ran is False
    page.wait_for_function("window.__violations.length > 0")
    assert any("script-src" in v for v in _violations(page))
    # That violation is reported on the console too: not an error of the test's.
    ann.errors = [e for e in ann.errors if "Content Security Policy" not in e]
