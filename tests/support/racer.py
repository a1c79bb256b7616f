"""A scripted race client speaking the real WebSocket protocol."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

EVENT_TYPES = {
    "player_joined",
    "player_left",
    "race_starting",
    "progress",
    "race_over",
    "rematch",
}


async def create_race(base: str, **body: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post("/api/races", json=body)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())


class Racer:
    """One connection: sends messages, collects everything the server says."""

    _ids = itertools.count(1)

    def __init__(
        self,
        ws_base: str,
        race_id: str,
        headers: dict[str, str] | None = None,
        answer_pings: bool = False,
    ) -> None:
        self.url = f"{ws_base}/ws/races/{race_id}"
        self.headers = headers  # a signed-in player's cookie and Origin
        self.race_id = race_id
        self.ws: ClientConnection | None = None
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.events: list[dict[str, Any]] = []
        self.last_seq = 0
        self.player_id: str | None = None
        self.token: str | None = None
        self.welcome: dict[str, Any] | None = None
        self.close_code: int | None = None
        self._reader: asyncio.Task[None] | None = None
        # When the race starts, on this loop's clock (from its race_starting event).
        self.starts_at: float | None = None
        # A real client answers the server's pings; a racer that sits out a long
        # browser test must too, or it is closed as idle (4408).
        self.answer_pings = answer_pings

    async def connect(self) -> Racer:
        self.ws = await connect(self.url, max_size=2**22, additional_headers=self.headers)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for frame in self.ws:
                message = json.loads(frame)
                if self.answer_pings and message["type"] == "ping":
                    await self.ws.send(json.dumps({"type": "pong", "t": message.get("t")}))
                if message["type"] == "race_starting":
                    wait = max(0, message["start_at"] - message["now"]) / 1000
                    self.starts_at = asyncio.get_running_loop().time() + wait
                if message["type"] in EVENT_TYPES:
                    self.events.append(message)
                    self.last_seq = max(self.last_seq, message["seq"])
                await self.inbox.put(message)
        except Exception:
            pass
        finally:
            self.close_code = self.ws.close_code
            await self.inbox.put({"type": "_closed", "code": self.close_code})

    async def send(self, **message: Any) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(message))

    async def send_raw(self, data: str | bytes) -> None:
        assert self.ws is not None
        await self.ws.send(data)

    async def _next(self) -> dict[str, Any]:
        message = await self.inbox.get()
        if message["type"] == "_closed":
            await self.inbox.put(message)  # stays closed for later calls
            raise ConnectionError(f"connection closed with {message['code']}")
        return message

    async def expect(self, *types: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next message of one of ``types`` (others are skipped)."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self._next()
                if message["type"] in types:
                    return message

    async def answer(
        self, until: str, *, events: bool = False, timeout: float = 10.0, **message: Any
    ) -> list[dict[str, Any]]:
        """Send ``message``; every message received until one of type ``until``, that one last.

        What was received before the message was sent is dropped first, and
        the server's pings are left out, and so are events unless ``events``
        (the answer to a resync has some; live events may come any time).
        """
        while not self.inbox.empty():
            if self.inbox.get_nowait()["type"] == "_closed":
                raise ConnectionError(f"connection closed with {self.close_code}")
        await self.send(**message)
        received = []
        async with asyncio.timeout(timeout):
            while True:
                reply = await self._next()
                if reply["type"] != "ping" and (events or reply["type"] not in EVENT_TYPES):
                    received.append(reply)
                if reply["type"] == until:
                    return received

    async def join(self, name: str | None = None, **extra: Any) -> dict[str, Any]:
        await self.send(type="join", role="player", name=name, **extra)
        welcome = await self.expect("welcome", "error")
        if welcome["type"] == "welcome":
            self.welcome = welcome
            self.player_id = welcome["player_id"]
            self.token = welcome["token"] or self.token
            self.last_seq = max(self.last_seq, welcome["race"]["seq"])
        return welcome

    async def spectate(self) -> dict[str, Any]:
        await self.send(type="join", role="spectator")
        welcome = await self.expect("welcome", "error")
        self.welcome = welcome
        return welcome

    async def act(self, kind: str, **fields: Any) -> dict[str, Any]:
        action_id = fields.pop("action_id", None) or f"a{next(self._ids)}"
        await self.send(type=kind, action_id=action_id, **fields)
        async with asyncio.timeout(15):
            while True:
                message = await self._next()
                if message["type"] in ("ack", "reject") and message["action_id"] == action_id:
                    return message

    async def act_through_try_again(
        self, kind: str, timeout: float = 60, **fields: Any
    ) -> dict[str, Any]:
        """An action sent again under the same id while the answer is ``try_again``, as a
        client does while the store is away (``timeout`` seconds at most)."""
        fields.setdefault("action_id", f"{self.player_id}-{next(self._ids)}")
        async with asyncio.timeout(timeout):
            while True:
                answer = await self.act(kind, **fields)
                if answer["type"] == "ack" or answer["code"] != "try_again":
                    return answer
                await asyncio.sleep(0.1)

    async def move(self, src: str, dst: str, count: int = 1, **extra: Any) -> dict[str, Any]:
        return await self.act("move", src=src, dst=dst, count=count, **extra)

    async def wait_event(self, type_: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Wait until an event of that type (matching ``match`` on its player) was seen."""
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events:
                    if event["type"] == type_ and all(
                        event.get("player", {}).get(k) == v for k, v in match.items()
                    ):
                        return event
                await asyncio.sleep(0.01)

    async def start(self) -> None:
        """As host: start the race and wait out the countdown."""
        await self.send(type="start")
        await self.until_started()

    async def until_started(self) -> None:
        """Wait for the race to start (its countdown over): at once if it has."""
        await self.wait_event("race_starting")
        assert self.starts_at is not None
        await asyncio.sleep(max(0, self.starts_at - asyncio.get_running_loop().time()) + 0.05)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
