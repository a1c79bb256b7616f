"""Scripted clients race a deal end to end, on both brokers."""

from __future__ import annotations

import httpx
import pytest

from boulanger.solver import solve
from support.apps import AppServer
from support.games import random_record
from support.racer import Racer, create_race
from support.screens import in_order

CODE = "BK1-C4-AAAAAAB"  # deal 1


@pytest.fixture(scope="module")
def winning_actions() -> list[dict]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won"
    return solution.actions


async def _start(server: AppServer, *names: str, code: str = CODE):
    created = await create_race(server.base, code=code)
    racers = []
    for i, name in enumerate(names):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        extra = {"host_key": created["host_key"]} if i == 0 else {}
        welcome = await racer.join(name, **extra)
        assert welcome["type"] == "welcome", welcome
        racers.append(racer)
    return created, racers


async def test_full_race(server: AppServer, winning_actions: list[dict]) -> None:
    created, (ann, bo, cy) = await _start(server, "Ann", "Bo", "Cy")
    assert created["winnable"] is True and created["par"]
    spectator = await Racer(server.ws_base, created["race_id"]).connect()
    welcome = await spectator.spectate()
    assert welcome["role"] == "spectator" and welcome["player_id"] is None
    assert [p["name"] for p in welcome["race"]["players"]] == ["Ann", "Bo", "Cy"]

    # Only the host starts; actions before the start are refused.
    await bo.send(type="start")
    assert (await bo.expect("error"))["code"] == "not_host"
    early = await ann.move("col1", "cell1")
    assert early["type"] == "reject" and early["code"] == "not_started"
    await ann.start()

    # Bo: an illegal move, a legal one, undo.
    bad = await bo.move("col1", "col2")
    assert bad["type"] == "reject" and bad["code"] == "illegal_move"
    assert "6S does not go on 9C" in bad["reason"]
    ok = await bo.move("col1", "cell1")
    assert ok["type"] == "ack" and (ok["card"], ok["actions"], ok["can_undo"]) == ("6S", 1, 1)
    assert "game" not in ok  # the move and the numbers: the client moves its own copy
    undone = await bo.act("undo")
    assert undone["type"] == "ack" and undone["move"] == {"src": "col1", "dst": "cell1", "count": 1}
    assert (undone["card"], undone["actions"], undone["can_undo"]) == ("6S", 2, 0)

    # A repeated action id is answered the same and applied once.
    first = await cy.move("col1", "cell1", action_id="same")
    again = await cy.move("col1", "cell1", action_id="same")
    assert again["type"] == "ack" and again == first  # the same short ack
    assert again["actions"] == 1

    # Ann wins; everybody sees her progress.
    for action in winning_actions:
        answer = await ann.move(action["src"], action["dst"], action.get("count", 1))
        assert answer["type"] == "ack", answer
    assert answer["status"] == "won" and answer["foundation_cards"] == 52
    for racer in (bo, cy, spectator):
        won = await racer.wait_event("progress", player_id=ann.player_id, status="won")
        assert won["player"]["rank"] == 1 and won["player"]["foundation_cards"] == 52

    # Players never see another's board while racing; after finishing they may.
    await bo.send(type="watch", player_id=ann.player_id)
    assert (await bo.expect("error"))["code"] == "watch_refused"

    # Bo and Cy resign: the race is over, with the same final standings for all.
    assert (await bo.act("resign"))["type"] == "ack"
    assert (await cy.act("resign"))["type"] == "ack"
    overs = [await r.wait_event("race_over") for r in (ann, bo, cy, spectator)]
    assert all(o == overs[0] for o in overs)
    standings = overs[0]["standings"]
    assert [s["name"] for s in standings] == ["Ann", "Cy", "Bo"]
    assert [s["rank"] for s in standings] == [1, 2, 3]
    late = await bo.move("col1", "cell1")
    assert late["type"] == "reject" and late["code"] in ("race_over", "finished")

    # Every event sent to everyone arrived once, in order, to everyone (a progress that
    # changes nothing the others see goes to its player alone: docs/protocol.md).
    assert in_order(spectator.events) and in_order(ann.events)
    seqs = [e["seq"] for e in spectator.events]
    assert [e["seq"] for e in ann.events][-5:] == seqs[-5:]

    # Records are public now, and replay to the same result.
    async with httpx.AsyncClient(base_url=server.base) as http:
        record = (await http.get(f"/api/races/{created['race_id']}/records/{ann.player_id}")).json()
    assert record["code"] == CODE and len(record["actions"]) == len(winning_actions)
    for racer in (ann, bo, cy, spectator):
        await racer.close()


async def test_records_hidden_until_the_race_is_over(server: AppServer) -> None:
    created, (ann,) = await _start(server, "Ann")
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.get(f"/api/races/{created['race_id']}/records/{ann.player_id}")
        assert answer.status_code == 409
        assert (
            await http.get(f"/api/races/{created['race_id']}/records/nobody")
        ).status_code == 404
        assert (await http.get("/api/races/nope/records/x")).status_code == 404
    await ann.close()


async def test_names_are_trimmed_unique_and_bounded(server: AppServer) -> None:
    created, (ann,) = await _start(server, "  Ann  ")
    assert ann.welcome["race"]["players"][0]["name"] == "Ann"
    for bad_name, code in (("ann", "name_taken"), ("", "bad_name"), ("x" * 25, "bad_name")):
        other = await Racer(server.ws_base, created["race_id"]).connect()
        answer = await other.join(bad_name)
        assert answer["type"] == "error" and answer["code"] == code, answer
        await other.close()
    await ann.close()


async def test_reconnect_with_token_resumes_and_resyncs(server: AppServer) -> None:
    created, (ann, bo) = await _start(server, "Ann", "Bo")
    await ann.start()
    assert (await bo.move("col1", "cell1"))["type"] == "ack"
    seen = bo.last_seq
    await bo.close()
    assert (await ann.move("col2", "cell1"))["type"] == "ack"

    back = Racer(server.ws_base, created["race_id"])
    await back.connect()
    welcome = await back.join(token=bo.token, last_seq=seen)
    assert welcome["player_id"] == bo.player_id
    assert welcome["game"]["board"]["cells"][0] == "6S" and welcome["game"]["can_undo"] == 1
    missed = await back.wait_event("progress", player_id=ann.player_id)
    assert missed["seq"] == seen + 1

    stranger = await Racer(server.ws_base, created["race_id"]).connect()
    assert (await stranger.join(token="not-a-token"))["code"] == "bad_token"
    for racer in (ann, back, stranger):
        await racer.close()


async def test_time_limit_ends_the_race(tmp_path) -> None:
    async with AppServer(
        "memory://", env={"BOULANGER_TIME_LIMIT_S": "1", "BOULANGER_COUNTDOWN_MS": "100"}
    ) as server:
        _, (ann,) = await _start(server, "Ann")
        await ann.send(type="start")
        over = await ann.wait_event("race_over", timeout=10)
        assert over["reason"] == "time_limit"
        late = await ann.move("col1", "cell1")
        assert late["code"] == "race_over"
        await ann.close()


async def test_hints_only_in_practice(memory_server: AppServer) -> None:
    _, (ann,) = await _start(memory_server, "Ann")
    await ann.send(type="hint")
    assert (await ann.expect("error"))["code"] == "no_hints"
    await ann.close()

    practice = await create_race(memory_server.base, code=CODE, practice=True)
    assert practice["winnable"] is True
    solo = await Racer(memory_server.ws_base, practice["race_id"]).connect()
    await solo.join("Solo", host_key=practice["host_key"])
    await solo.start()
    await solo.send(type="hint", ref="h1")
    hint = await solo.expect("hint_result", timeout=30)
    assert hint["result"] == "won" and hint["move"] is not None and hint["ref"] == "h1"
    answer = await solo.move(hint["move"]["src"], hint["move"]["dst"], hint["move"]["count"])
    assert answer["type"] == "ack"
    await solo.close()


async def test_rematch_moves_everyone_to_a_new_race(server: AppServer) -> None:
    created, (ann, bo) = await _start(server, "Ann", "Bo")
    await ann.start()
    await bo.send(type="rematch")
    assert (await bo.expect("error"))["code"] == "not_host"
    for racer in (ann, bo):
        assert (await racer.act("resign"))["type"] == "ack"
    await bo.wait_event("race_over")
    await ann.send(type="rematch")
    opened = await bo.wait_event("rematch")
    assert opened["url"] == f"/race/{opened['race_id']}" and opened["race_id"] != created["race_id"]
    # The host joins the new race as host with the key they already hold.
    again = await Racer(server.ws_base, opened["race_id"]).connect()
    welcome = await again.join("Ann", host_key=created["host_key"])
    assert welcome["race"]["host_id"] == welcome["player_id"]
    for racer in (ann, bo, again):
        await racer.close()


async def test_a_dead_end_is_told_to_everyone_once_its_player_pauses(
    server: AppServer,
) -> None:
    created, (ann, bo) = await _start(server, "Ann", "Bo")
    await ann.start()
    await bo.until_started()
    lost = random_record(CODE, 1)["actions"]  # ten actions to a dead end (tests/race)
    for action in lost:
        if "undo" in action:
            answer = await ann.act("undo")
        else:
            answer = await ann.move(action["src"], action["dst"], action["count"])
        # An ack says won or playing: the position is judged when Ann pauses.
        assert answer["type"] == "ack" and answer["status"] == "playing", answer
    last = answer["seq"]
    judged = await bo.wait_event("progress", player_id=ann.player_id, status="dead_end")
    assert judged["seq"] == last + 1 and judged["player"]["actions"] == len(lost)
    await ann.wait_event("progress", status="dead_end")
    # Her game says so to her too, on a new connection.
    again = await Racer(server.ws_base, created["race_id"]).connect()
    welcome = await again.join(token=ann.token)
    assert welcome["game"]["status"] == "dead_end"
    undone = await again.act("undo")
    assert undone["type"] == "ack" and undone["status"] == "playing"
    playing = await bo.wait_event("progress", player_id=ann.player_id, actions=len(lost) + 1)
    assert playing["player"]["status"] == "playing"
    for racer in (ann, again, bo):
        await racer.close()
