"""One process on one SQLite file: killed and started again, it serves the same races,
daily leaderboard and streaks; a second process on the file is refused."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from boulanger.broker import open_store
from boulanger.broker.sqlite import SqliteBroker
from boulanger.race import daily as d
from boulanger.race.ids import secret_hash
from boulanger.race.race import RaceMeta
from boulanger.solver import solve
from support.racer import Racer, create_race
from support.servers import ServerProcess

CODE = "BK1-C4-AAAAAAB"
# No review: the scripted winner's result must rank (tests/web/test_fair_play.py has
# such results held).
FAST = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_REVIEW_MIN_ACTIONS": "1000000",
}
PLAYERS = ("Ann", "Bo", "Cy", "Di")
ACKS_BEFORE_KILL = 60


@pytest.fixture(scope="module")
def winning_actions() -> list[dict]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'boulanger.db'}"


@dataclass
class Play:
    """One player's actions as the client saw them: acknowledged, and the one in flight."""

    racer: Racer
    acked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pending: tuple[str, dict[str, Any]] | None = None


async def _play(play: Play, actions: list[dict[str, Any]]) -> None:
    """Send ``actions`` one at a time, each once acknowledged, until the connection dies."""
    for action in actions[len(play.acked) :]:
        action_id = f"{play.racer.player_id}-{len(play.acked)}"
        play.pending = (action_id, action)
        try:
            answer = await play.racer.move(
                action["src"], action["dst"], action["count"], action_id=action_id
            )
        except (ConnectionError, ConnectionClosed, TimeoutError):  # killed: answered or not
            return
        assert answer["type"] == "ack", answer
        play.acked.append(play.pending)
        play.pending = None


async def test_sigkill_mid_race_loses_no_acknowledged_action(
    tmp_path: Path, winning_actions: list[dict]
) -> None:
    """Four players act as fast as they are answered; the server is killed mid-race
    (SIGKILL), started again on the same file, and each player reconnects with their
    token: every action acknowledged before the kill is in the race, in order, and
    nothing else but the one each player had in flight."""
    server = ServerProcess(_url(tmp_path), env=FAST)
    server.start()
    try:
        created = await create_race(server.base, code=CODE)
        race_id = created["race_id"]
        plays = []
        for i, name in enumerate(PLAYERS):
            racer = await Racer(server.ws_base, race_id).connect()
            extra = {"host_key": created["host_key"]} if i == 0 else {}
            assert (await racer.join(name, **extra))["type"] == "welcome"
            plays.append(Play(racer))
        await plays[0].racer.start()
        for play in plays[1:]:
            await play.racer.until_started()

        playing = [asyncio.create_task(_play(play, winning_actions)) for play in plays]
        async with asyncio.timeout(30):
            while sum(len(play.acked) for play in plays) < ACKS_BEFORE_KILL:
                await asyncio.sleep(0.005)
        server.stop(kill=True)  # mid-race: each player has an action in flight or about to
        async with asyncio.timeout(15):
            await asyncio.gather(*playing)
        acked_before = [len(play.acked) for play in plays]
        assert sum(acked_before) >= ACKS_BEFORE_KILL
        assert all(count < len(winning_actions) for count in acked_before)

        server.start()  # the same file, the same port
        for n, play in enumerate(plays):
            old = play.racer
            await old.close()
            play.racer = await Racer(server.ws_base, race_id).connect()
            welcome = await play.racer.join(token=old.token, last_seq=old.last_seq)
            assert welcome["type"] == "welcome" and welcome["player_id"] == old.player_id
            # Each acknowledged action is there; the one in flight may be too.
            actions = welcome["game"]["actions"]
            in_flight = 1 if play.pending is not None else 0
            assert len(play.acked) <= actions <= len(play.acked) + in_flight, (n, play)
            if play.pending is not None:
                # Sent again with its action id: applied now, or answered as applied before.
                action_id, action = play.pending
                again = await play.racer.move(
                    action["src"], action["dst"], action["count"], action_id=action_id
                )
                # Either way the ack's numbers are those right after it.
                assert again["type"] == "ack" and again["actions"] == len(play.acked) + 1
                play.acked.append(play.pending)
                play.pending = None

        # Ann wins; the others resign; every record is exactly what was acknowledged.
        await _play(plays[0], winning_actions)
        assert len(plays[0].acked) == len(winning_actions)
        for play in plays[1:]:
            assert (await play.racer.act("resign"))["type"] == "ack"
        over = await plays[0].racer.wait_event("race_over")
        assert over["standings"][0]["status"] == "won"
        async with httpx.AsyncClient(base_url=server.base) as http:
            for play in plays:
                answer = await http.get(f"/api/races/{race_id}/records/{play.racer.player_id}")
                assert answer.status_code == 200
                # Each recorded action is an acknowledged one, with the time it was accepted.
                recorded = [
                    {k: v for k, v in action.items() if k != "t"}
                    for action in answer.json()["actions"]
                ]
                assert recorded == [action for _, action in play.acked]
        for play in plays:
            await play.racer.close()
    finally:
        server.stop()


def test_a_second_process_on_the_file_is_refused(tmp_path: Path) -> None:
    first = ServerProcess(_url(tmp_path), env=FAST)
    first.start()
    try:
        second = subprocess.run(
            [sys.executable, "-m", "boulanger", "serve", "--port", "0", "--broker", _url(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1
        assert "is in use by another process" in second.stderr
        assert f"(pid {first.proc.pid})" in second.stderr  # type: ignore[union-attr]
        assert "one boulanger process per SQLite file" in second.stderr
        assert httpx.get(f"{first.base}/healthz").json()["broker"] == "sqlite"  # unharmed
    finally:
        first.stop()


def _today() -> d.date:
    return d.today(int(time.time() * 1000))


async def test_daily_leaderboard_and_streak_survive_a_restart(
    tmp_path: Path, winning_actions: list[dict]
) -> None:
    today = _today()
    moves = solve(str(d.game_code(today)), budget=60)
    assert moves.result == "won"
    key = secrets.token_urlsafe(24)
    # Yesterday's win, written to the file before the server first starts.
    opened = open_store(_url(tmp_path))
    await opened.start()
    yesterday = d.DailyEntry("Ann", "won", 300_000, 120, 650, 52)
    await opened.daily.record(
        today - timedelta(days=1), secret_hash(key), yesterday, {"actions": []}
    )
    await opened.close()

    server = ServerProcess(_url(tmp_path), env=FAST)
    server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base) as http:
            attempt = await http.post(
                f"/api/daily/{today}/attempts", json={"player_key": key, "name": "Ann"}
            )
            assert attempt.status_code == 201 and attempt.json()["ranked"] is True
            racer = await Racer(server.ws_base, attempt.json()["race_id"]).connect()
            await racer.join("Ann", host_key=attempt.json()["host_key"])
            await racer.start()
            for move in moves.actions:
                assert (await racer.move(move["src"], move["dst"], move["count"]))["type"] == "ack"
            await racer.wait_event("race_over")
            await racer.close()
            other = secrets.token_urlsafe(24)
            answer = await http.post(
                f"/api/daily/{today}/attempts", json={"player_key": other, "name": "Bo"}
            )
            bo = await Racer(server.ws_base, answer.json()["race_id"]).connect()
            await bo.join("Bo", host_key=answer.json()["host_key"])
            await bo.start()
            assert (await bo.act("resign"))["type"] == "ack"
            await bo.wait_event("race_over")
            await bo.close()

            async def seen() -> tuple[dict, dict, dict]:
                async with asyncio.timeout(10):
                    while True:
                        page = (await http.get(f"/api/daily/{today}/leaderboard")).json()
                        if page["total"] == 2:
                            break
                        await asyncio.sleep(0.05)
                mine = await http.get(f"/api/daily/{today}/me", headers={"X-Player-Key": key})
                top = await http.get(f"/api/daily/{today}/records/{page['entries'][0]['entry_id']}")
                return page, mine.json(), top.json()

            before = await seen()
        assert [e["name"] for e in before[0]["entries"]] == ["Ann", "Bo"]
        assert (before[1]["rank"], before[1]["streak"]) == (1, 2)

        server.stop(kill=True)
        server.start()
        async with httpx.AsyncClient(base_url=server.base) as http:
            after = await seen()
        assert after == before
        # Today's records stay secret until the day ends (fair play) ...
        assert after[2]["error"]["code"] == "not_yet"
    finally:
        server.stop()
    # ... and are in the file all the same, whole.
    opened = open_store(_url(tmp_path))
    await opened.start()
    try:
        top = await opened.daily.game_record(today, before[0]["entries"][0]["entry_id"])
    finally:
        await opened.close()
    assert top is not None and len(top["actions"]) == len(moves.actions)


def test_serve_without_a_broker_keeps_races_in_the_data_dir(tmp_path: Path) -> None:
    """``boulanger serve`` alone: the SQLite file in --data-dir, created on first use."""
    data = tmp_path / "data" / "here"
    server = ServerProcess(None, env=FAST, args=("--data-dir", str(data)))
    server.env.pop("BOULANGER_BROKER_URL", None)
    server.start()
    try:
        assert httpx.get(f"{server.base}/healthz").json()["broker"] == "sqlite"
        answer = httpx.post(f"{server.base}/api/races", json={"code": CODE})
        race_id = answer.json()["race_id"]
        assert (data / "boulanger.db").is_file()
        server.stop(kill=True)
        server.start()
        snapshot = httpx.get(f"{server.base}/api/races/{race_id}")
        assert snapshot.status_code == 200 and snapshot.json()["code"] == CODE

        copy = tmp_path / "copy.db"
        backup = subprocess.run(
            [sys.executable, "-m", "boulanger", "backup", str(copy), "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert backup.returncode == 0, backup.stderr
        again = subprocess.run(
            [sys.executable, "-m", "boulanger", "backup", str(copy), "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 1 and "exists already" in again.stderr
    finally:
        server.stop()
    # The copy is a database of its own, with the race in it.
    copied = SqliteBroker(f"sqlite:///{copy}")

    async def meta() -> RaceMeta | None:
        await copied.start()
        try:
            return await copied.race_meta(race_id)
        finally:
            await copied.close()

    found = asyncio.run(meta())
    assert found is not None and found.code == CODE
