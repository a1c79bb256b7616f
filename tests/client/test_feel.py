"""Motion and feel: moves slide, cards land, refusals shake, a win cascades,
Finish sends the last cards up; sound and vibration unless turned off (and
off by default under prefers-reduced-motion, with no motion then).

The deal is named: BK1-C4-AAAAAAC (Microsoft deal 2, 4 cells).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from .conftest import Player
from .test_browser import grab_point, key_move, settled, solve, view
from .test_bugs import DEAL, PHONE, practise_deal

# Records every Web Animation started on a card, every oscillator started and
# every vibration asked for.
RECORDER = """
(() => {
  window.feel = {animations: [], sounds: 0, buzzes: 0};
  const animate = Element.prototype.animate;
  Element.prototype.animate = function (frames, options) {
    if (this.classList && this.classList.contains('card')) {
      const keys = Array.isArray(frames) ? Object.keys(frames[0] || {}) : Object.keys(frames || {});
      window.feel.animations.push({card: this.dataset.card, keys, flying: this.classList.contains('flying')});
    }
    return animate.call(this, frames, options);
  };
  const Context = window.AudioContext;
  if (Context) {
    const make = Context.prototype.createOscillator;
    Context.prototype.createOscillator = function () { window.feel.sounds += 1; return make.call(this); };
  }
  navigator.vibrate = () => { window.feel.buzzes += 1; return true; };
})();
"""


def animations(p: Player) -> list[dict[str, Any]]:
    return p.page.evaluate("() => window.feel.animations")


def tap(p: Player, card: str) -> None:
    point = grab_point(p.page.locator(f'[data-card="{card}"]'))
    if p.page.evaluate("() => navigator.maxTouchPoints > 0"):
        p.page.touchscreen.tap(*point)
    else:
        p.page.mouse.click(*point)


def test_moves_slide_land_and_refusals_shake(players: Any) -> None:
    for options in ({}, PHONE):
        p = players("Mover", **options)
        p.context.add_init_script(RECORDER)
        practise_deal(p)
        tap(p, "AS")  # up it goes
        settled(p)
        moved = [a for a in animations(p) if a["card"] == "AS"]
        assert any("transform" in a["keys"] for a in moved), moved  # it slides ...
        assert any("scale" in a["keys"] for a in moved), moved  # ... and lands
        tap(p, "5S")  # nowhere to go: a shake and a word
        expect(p.page.locator(".board-note")).to_contain_text("5♠")
        assert any(a["card"] == "5S" and "translate" in a["keys"] for a in animations(p))
        p.context.close()


def test_nothing_moves_under_reduced_motion(players: Any) -> None:
    p = players("Still", reduced_motion="reduce")
    p.context.add_init_script(RECORDER)
    practise_deal(p)
    tap(p, "AS")
    settled(p)
    tap(p, "5S")
    expect(p.page.locator(".board-note")).to_be_visible()
    assert animations(p) == []


def play_until_finish(p: Player) -> int:
    """Play the solution until the Finish button shows; return the moves played."""
    solution = solve(DEAL)
    for number, move in enumerate(solution):
        if p.page.locator(".stats button.finish").count():
            return number
        assert p.page.evaluate(
            "async () => (await import('/static/rules.js')).finishMoves(window.boulanger.view().board) === null"
        ), "Finish should have shown"
        key_move(p, move)
    raise AssertionError("no Finish button before the end of the solution")


def test_finish_sends_the_last_cards_and_the_win_cascades(players: Any) -> None:
    p = players("Winner")
    p.context.add_init_script(RECORDER)
    practise_deal(p)
    # Sound and vibration are on by default (they play after the first gesture).
    expect(p.page.locator("#sound")).to_have_attribute("aria-pressed", "true")
    played = play_until_finish(p)
    left = 52 - view(p)["foundation_cards"]
    sent = len([m for m in p.sent if m.get("type") == "move"])
    p.page.click(".stats button.finish")
    expect(p.page.locator(".banner.status-won")).to_contain_text("You won", timeout=20_000)
    # Each card went up as a move of its own, checked by the server.
    ups = [m for m in p.sent if m.get("type") == "move"][sent:]
    assert len(ups) == left and all(m["dst"] == "foundation" for m in ups)
    assert view(p)["actions"] == played + left
    # The cascade: copies of the foundation cards fly.
    p.page.wait_for_function("() => window.feel.animations.some((a) => a.flying)")
    assert p.page.evaluate("() => window.feel.sounds") > 0
    assert p.page.evaluate("() => window.feel.buzzes") > 0
    p.page.click("#sound")  # turned off ...
    expect(p.page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    p.page.reload()
    expect(p.page.locator("#sound")).to_have_attribute("aria-pressed", "false")  # ... remembered


def test_no_cascade_and_no_sound_by_default_under_reduced_motion(players: Any) -> None:
    p = players("Quiet", reduced_motion="reduce")
    p.context.add_init_script(RECORDER)
    practise_deal(p)
    expect(p.page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    play_until_finish(p)
    p.page.click(".stats button.finish")
    expect(p.page.locator(".banner.status-won")).to_contain_text("You won", timeout=20_000)
    assert p.page.locator(".cascade").count() == 0
    assert animations(p) == []
    assert p.page.evaluate("() => window.feel.sounds + window.feel.buzzes") == 0


def test_sound_is_on_by_default_and_waits_for_the_first_gesture(players: Any) -> None:
    p = players("Ear")
    # Playwright's evaluate() counts as a gesture for the browser: the page's
    # own ear (a key or a pointer pressed) is what is tested here.
    p.context.add_init_script(
        "Object.defineProperty(navigator, 'userActivation', {value: {hasBeenActive: false}})"
    )
    p.page.goto(f"{p.base}/practice?code={DEAL}")  # no click, no key yet
    expect(p.page.locator("#sound")).to_have_attribute("aria-pressed", "true")
    p.page.wait_for_selector(".race-page[data-phase=running] .board .card")
    # Browsers refuse audio before a gesture: nothing is played, nothing counted.
    p.page.evaluate("() => window.boulanger.event('one', true)")
    assert p.page.evaluate("() => window.boulangerSounds.event || 0") == 0
    p.page.keyboard.press("Shift")
    p.page.evaluate("() => window.boulanger.event('two', true)")
    assert p.page.evaluate("() => window.boulangerSounds.event || 0") == 1
