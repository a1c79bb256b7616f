"""The race WebSocket served by picows beside uvicorn (bench/picows_trial.py), one process.

The trial measured in docs/performance/2026-12-04-picows-trial.md must
serve the same protocol as uvicorn does: the race tests that take the
``server`` fixture run here again with ``ws_base`` on the picows port (HTTP
stays on uvicorn), on the embedded broker. A few more check what the
trial's adapter does itself: frames written straight to picows' transport,
a fragmented message reassembled, invalid UTF-8 closed with 1007.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("picows")

from conftest import FAST_TEST_ENV
from support.apps import AppServer
from support.racer import Racer, create_race

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.picows_trial import listen

# The same tests, through picows (they take the ``server`` fixture below).
from .test_answers import (  # noqa: F401
    test_a_player_may_watch_only_as_the_document_says,
    test_a_resign_shows_in_the_game_and_reaches_the_watchers,
    test_every_direct_answer_echoes_the_ref,
    test_resync_answers_end_with_resync_done,
)
from .test_bad_input import (  # noqa: F401
    test_binary_frame_closes_with_1003,
    test_malformed_messages_get_typed_errors_and_the_connection_survives,
    test_oversized_frame_closes_with_1009,
    test_spectators_cannot_act,
    test_unknown_race_is_closed_with_4404,
)
from .test_race_flow import (  # noqa: F401
    test_full_race,
    test_names_are_trimmed_unique_and_bounded,
    test_reconnect_with_token_resumes_and_resyncs,
    test_rematch_moves_everyone_to_a_new_race,
    winning_actions,
)

CODE = "BK1-C4-AAAAAAB"


class PicowsAppServer(AppServer):
    """An :class:`AppServer` whose race WebSockets are served by picows on a port of
    their own, in the same event loop."""

    def __init__(self, broker_url: str = "memory://", env: dict[str, str] | None = None) -> None:
        super().__init__(broker_url, env)
        self._sockets: asyncio.Server | None = None
        self.ws_port = 0

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.ws_port}"

    async def start(self) -> None:
        await super().start()
        assert self.app is not None
        self._sockets = await listen(
            self.app, "127.0.0.1", 0, self.settings.max_frame_bytes, "127.0.0.1"
        )
        self.ws_port = int(self._sockets.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        try:
            await super().stop()
        finally:
            if self._sockets is not None:
                self._sockets.close()
                await asyncio.wait_for(self._sockets.wait_closed(), 10)


@pytest.fixture
async def server() -> AsyncIterator[AppServer]:
    async with PicowsAppServer("memory://", env=FAST_TEST_ENV) as served:
        yield served


async def _joined(server: AppServer) -> tuple[dict, Racer]:
    created = await create_race(server.base, code=CODE)
    racer = await Racer(server.ws_base, created["race_id"]).connect()
    assert (await racer.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    return created, racer


async def test_frames_go_straight_to_the_picows_transport(server: PicowsAppServer) -> None:
    created, racer = await _joined(server)
    hub = await server.services.hubs.get(created["race_id"])
    assert [conn.direct is not None for conn in hub.connections] == [True]
    await racer.close()


async def test_a_fragmented_message_is_one_message(server: PicowsAppServer) -> None:
    _created, racer = await _joined(server)
    assert racer.ws is not None
    text = json.dumps({"type": "ping", "t": 41, "ref": "r" * 60})
    await racer.ws.send(iter([text[:10], text[10:50], text[50:]]))
    pong = await racer.expect("pong")
    assert (pong["t"], pong["ref"]) == (41, "r" * 60)
    await racer.close()


async def test_invalid_utf8_closes_with_1007(server: PicowsAppServer) -> None:
    _created, racer = await _joined(server)
    assert racer.ws is not None
    # A text frame whose bytes are not UTF-8: written below the library's checks.
    await racer.ws.send(b'{"type": "ping", "t": 1, "ref": "\xff"}', text=True)
    with pytest.raises(ConnectionError):
        await racer.expect("never")
    assert racer.close_code == 1007


async def test_http_is_not_served_on_the_picows_port(server: PicowsAppServer) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"http://127.0.0.1:{server.ws_port}/healthz")
    assert answer.status_code == 404
