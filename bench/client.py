"""The web client as a player meets it, in Debian's Chromium against a real
``boulanger serve`` on a free loopback port.

Prints, as medians over several runs:

- first visit: bytes on the wire (gzipped bodies and headers, as Chrome
  counts them) for the home page with an empty cache, and the same for the
  next visit (the page is revalidated, the files come from the cache);
- time to interactive: from the start of navigation to the home page's form
  ready, and to a practice game's board ready for input (a fresh race each
  time, so it includes creating the race, the socket and the welcome);
- move to landed card: from the key press (``1`` twice: the ace of spades of
  deal BK1-C4-AAAAAAC to its foundation) to the card drawn on the
  foundation, to the end of its slide and landing (the animation), and to
  the server's ack; then ``u`` takes it back, and again.

    .venv/bin/python bench/client.py [--runs 15]

Not a test: it prints figures. Chromium runs headless with no throttling, on
the same machine as the server.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from typing import Any

from playwright.sync_api import sync_playwright

DEAL = "BK1-C4-AAAAAAC"  # the ace of spades is on top of column 1
CHROMIUM = os.environ.get("BOULANGER_CHROMIUM", "/usr/bin/chromium")

MOVE = """async () => {
    const el = document.querySelector('[data-card="AS"]');
    const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const t0 = performance.now();
    key('1');
    key('1');
    const acking = (async () => {
        while (window.boulanger.predictions.length) await new Promise((r) => setTimeout(r, 0));
        return performance.now() - t0;
    })();
    while (!el.closest('.foundation-slot')) await frame();
    const shown = performance.now() - t0;
    await Promise.all(el.getAnimations().map((a) => a.finished));
    const landed = performance.now() - t0;
    const acked = await acking;
    key('u');
    while (!el.closest('.column') || window.boulanger.predictions.length) await frame();
    await Promise.all(document.getAnimations().map((a) => a.finished));
    return {shown, landed, acked};
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "100000"}
    # The memory broker: what is timed is the client, and nothing is left behind.
    args = [
        sys.executable, "-m", "boulanger", "serve", "--port", str(port),
        "--broker", "memory://", "--log-level", "warning",
    ]  # fmt: skip
    proc = subprocess.Popen(
        args,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as answer:
                if json.load(answer).get("ok"):
                    return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def wire_bytes(context: Any, page: Any, url: str) -> int:
    """Bytes that came over the network (not from the cache) while loading ``url``."""
    cdp = context.new_cdp_session(page)
    sizes: dict[str, int] = {}
    cached: set[str] = set()
    cdp.on("Network.requestServedFromCache", lambda e: cached.add(e["requestId"]))
    cdp.on(
        "Network.loadingFinished",
        lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]),
    )
    cdp.send("Network.enable")
    page.goto(url, wait_until="networkidle")
    cdp.detach()
    return int(sum(v for k, v in sizes.items() if k not in cached))


def median(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    proc, base = serve()
    figures: dict[str, list[float]] = {
        k: [] for k in ("first", "next", "home", "board", "shown", "landed", "acked")
    }
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            for _ in range(args.runs):
                context = browser.new_context(
                    viewport={"width": 390, "height": 844}, has_touch=True
                )
                context.add_init_script(
                    "localStorage.setItem('boulanger.guide', 'done'); localStorage.setItem('boulanger.name', 'Bench')"
                )
                page = context.new_page()
                figures["first"].append(wire_bytes(context, page, base + "/"))
                figures["next"].append(wire_bytes(context, page, base + "/"))
                page.goto("about:blank")
                page.goto(base + "/")
                figures["home"].append(
                    page.wait_for_function(
                        "() => document.querySelector('#home-name') && document.querySelector('button[name=quick]') && performance.now()"
                    ).json_value()
                )
                page.goto(f"{base}/practice?code={DEAL}")
                figures["board"].append(
                    page.wait_for_function(
                        "() => window.boulanger && window.boulanger.canPlay() && document.querySelectorAll('.board .card').length === 52 && performance.now()"
                    ).json_value()
                )
                for _ in range(3):
                    move = page.evaluate(MOVE)
                    for key in ("shown", "landed", "acked"):
                        figures[key].append(move[key])
                context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"web client, {args.runs} runs (medians), Chromium headless, 390x844, loopback server")
    print(f"first visit, bytes on the wire (gzipped):      {median(figures['first'])}")
    print(f"next visit, bytes on the wire (page 304 etc.): {median(figures['next'])}")
    print(f"time to interactive, home page (ms):           {median(figures['home'])}")
    print(f"time to interactive, practice board (ms):      {median(figures['board'])}")
    print(f"move to card drawn on its foundation (ms):     {median(figures['shown'])}")
    print(f"move to landed card, slide done (ms):          {median(figures['landed'])}")
    print(f"move to the server's ack (ms):                 {median(figures['acked'])}")


if __name__ == "__main__":
    main()
