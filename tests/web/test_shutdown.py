"""A stopped server leaves no process behind.

The solver runs in a worker process (boulanger.web.solving), which brings
multiprocessing's resource tracker with it. Both must end with the server:
when it is stopped (SIGTERM, as a service manager does) and when it is
killed (SIGKILL: no clean-up code runs at all).
"""

from __future__ import annotations

import signal

import pytest

from conftest import FAST_TEST_ENV
from support.processes import descendants, wait_gone
from support.racer import Racer, create_race
from support.servers import ServerProcess

CODE = "BK1-C4-AAAAAAB"  # deal 1: in the catalog
OFF_CATALOG = "BK1-C1-AAAAAAB"  # deal 1 with one cell: not in the catalog, so the solver judges it


async def _hint(server: ServerProcess) -> None:
    """A hint in a practice race: the solver's worker answers it."""
    created = await create_race(server.base, code=CODE, practice=True)
    solo = await Racer(server.ws_base, created["race_id"]).connect()
    await solo.join("Solo", host_key=created["host_key"])
    await solo.start()
    await solo.send(type="hint")
    answer = await solo.expect("hint_result", timeout=30)
    assert answer["result"] == "won"
    await solo.close()


async def _judge(server: ServerProcess) -> None:
    """A race on a code outside the catalog: the solver's worker judges the deal."""
    created = await create_race(server.base, code=OFF_CATALOG)
    assert created["winnable"] in (False, None)


@pytest.mark.parametrize("use", [_hint, _judge], ids=["hint", "off-catalog-code"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_a_stopped_server_leaves_no_process_behind(use, stop: signal.Signals) -> None:
    server = ServerProcess("memory://", env=FAST_TEST_ENV)
    server.start()
    try:
        assert server.proc is not None
        await use(server)
        below = descendants(server.proc.pid)
        # The solver's worker and the resource tracker: what must not stay.
        assert len(below) >= 2, [p.describe() for p in below]
        server.stop(kill=stop == signal.SIGKILL)
        left = wait_gone(below, timeout=10)
        assert left == [], [p.describe() for p in left]
    finally:
        server.stop()
