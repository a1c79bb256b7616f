"""Replays over HTTP: a finished race's records as text and frames, and their review."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from boulanger.engine import Game
from boulanger.race.replay import play_back, text_lines
from boulanger.solver import solve
from support.apps import AppServer
from support.games import random_record
from support.racer import Racer, create_race

CODE = "BK1-C4-AAAAAAB"  # deal 1
LINE = re.compile(r"^\d+\.\ds (undo )?\S+ (col\d|cell\d|foundation) → (col\d|cell\d|foundation)$")


@pytest.fixture(scope="module")
def winning_actions() -> list[dict[str, Any]]:
    return solve(CODE, budget=30).actions


async def _play(racer: Racer, actions: list[dict[str, Any]]) -> None:
    for action in actions:
        if "undo" in action:
            answer = await racer.act("undo")
        else:
            answer = await racer.move(action["src"], action["dst"], action["count"])
        assert answer["type"] == "ack", answer


async def test_a_finished_race_serves_text_frames_and_reviews(
    memory_server: AppServer, winning_actions: list[dict[str, Any]]
) -> None:
    created = await create_race(memory_server.base, code=CODE)
    race = created["race_id"]
    ann = await Racer(memory_server.ws_base, race).connect()
    await ann.join("Ann", host_key=created["host_key"])
    bo = await Racer(memory_server.ws_base, race).connect()
    await bo.join("Bo")
    base = f"/api/races/{race}/records"
    async with httpx.AsyncClient(base_url=memory_server.base, timeout=30) as http:
        for part in ("text", "replay", "review"):
            early = await http.get(f"{base}/{ann.player_id}/{part}")
            assert early.status_code == 409 and early.json()["error"]["code"] == "race_running"
        await ann.start()
        await ann.until_started()
        await bo.until_started()
        # Ann wins with the solver's line; Bo plays a seeded random game until
        # it is stuck (it lost the win on its first action), then resigns.
        await _play(ann, winning_actions)
        lost = random_record(CODE, 1)
        await _play(bo, [{k: v for k, v in a.items() if k != "t"} for a in lost["actions"]])
        assert (await bo.act("resign"))["type"] == "ack"
        await ann.wait_event("race_over")

        record = (await http.get(f"{base}/{bo.player_id}")).json()
        text = await http.get(f"{base}/{bo.player_id}/text")
        assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
        lines = text.text.splitlines()
        assert len(lines) == len(record["actions"]) == len(lost["actions"])
        assert lines == text_lines(record)
        assert all(LINE.match(line) for line in lines), lines
        assert lines[0].startswith(f"{record['actions'][0]['t'] / 1000:.1f}s ")

        replay = (await http.get(f"{base}/{bo.player_id}/replay")).json()
        frames = replay["frames"]
        assert replay["code"] == CODE and len(frames) == len(record["actions"]) + 1
        assert frames[0]["action"] == 0 and frames[0]["line"] is None
        assert [f["t"] for f in frames[1:]] == [a["t"] for a in record["actions"]]
        end = Game.from_record(record)
        assert frames[-1]["score"] == end.score
        assert frames[-1]["foundation_cards"] == end.foundation_cards

        review = (await http.get(f"{base}/{bo.player_id}/review")).json()
        assert review["finding"] == "losing_move" and review["won"] is False
        losing = review["losing_move"]
        assert losing["action"] == review["last_winnable"] + 1
        assert losing["line"] == lines[losing["action"] - 1]
        # The winning line from the position before the losing move wins.
        before = Game.from_record(
            {"code": CODE, "actions": record["actions"][: review["last_winnable"]]}
        )
        for move in review["continuation"]:
            before.play(move)
        assert before.board.won
        assert len(review["continuation_lines"]) == len(review["continuation"])
        # Kept per record: asked again, the same answer.
        assert (await http.get(f"{base}/{bo.player_id}/review")).json() == review

        won = (await http.get(f"{base}/{ann.player_id}/review")).json()
        assert won["finding"] == "won" and won["actions"] == len(winning_actions)
        assert won["par"] == created["par"] and won["losing_move"] is None

        missing = await http.get(f"{base}/nobody/text")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_player"
        page = await http.get(f"/race/{race}/replay/{bo.player_id}")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    await ann.close()
    await bo.close()


async def test_daily_records_answer_as_their_json_route(memory_server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=memory_server.base) as http:
        today = (await http.get("/api/daily")).json()["date"]
        for part in ("text", "replay", "review"):
            answer = await http.get(f"/api/daily/{today}/records/999999/{part}")
            assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_entry"
            bad = await http.get(f"/api/daily/1999-01-01/records/1/{part}")
            assert bad.status_code == 404 and bad.json()["error"]["code"] == "no_daily"


def test_the_protocol_document_shows_every_field_of_a_review() -> None:
    from boulanger.race.replay import review_lines
    from boulanger.solver.review import review_record
    from support.protocol_doc import section

    text = section("Replays")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    documented = [json.loads(block) for block in blocks]
    record = random_record(CODE, 1)
    review = review_lines(record, review_record(record, budget=30).to_dict())
    assert set(documented[1]) == set(review)
    assert set(documented[1]["losing_move"]) == set(review["losing_move"])
    assert set(documented[1]["detour"]) == set(review["detour"])
    frame = play_back(record)[1]
    assert set(documented[0]["frames"][0]) == set(frame)
