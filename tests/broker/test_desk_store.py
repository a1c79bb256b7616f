"""The review desk's part of the store, on every backend: moderators, decisions by
compare-and-set, the audit log, rated races' changes applied once each way."""

from __future__ import annotations

import secrets

import pytest

from boulanger.broker import Store
from boulanger.broker.desk import AuditEntry, DecidedMeanwhile, DeskStore
from boulanger.race.review import CONFIRMED, DISQUALIFIED, Decision


@pytest.fixture
def desk(backend: Store) -> DeskStore:
    return DeskStore(backend.kv)


async def test_moderators_are_granted_once_and_taken_back(desk: DeskStore) -> None:
    ann, bo = secrets.token_hex(6), secrets.token_hex(6)
    assert not await desk.is_moderator(ann)
    assert await desk.set_moderator(ann, True)
    assert not await desk.set_moderator(ann, True)
    assert await desk.set_moderator(bo, True)
    assert {ann, bo} <= set(await desk.moderators())
    assert await desk.set_moderator(ann, False)
    assert not await desk.set_moderator(ann, False)
    assert not await desk.is_moderator(ann) and await desk.is_moderator(bo)


async def test_a_decision_is_made_on_what_its_moderator_saw(desk: DeskStore) -> None:
    subject = f"race:{secrets.token_hex(6)}"
    first = Decision(CONFIRMED, "fine", "Ann", 1)
    await desk.decide(subject, "p1", first, None)
    with pytest.raises(DecidedMeanwhile) as meanwhile:
        await desk.decide(subject, "p1", Decision(DISQUALIFIED, "no", "Bo", 2), None)
    assert meanwhile.value.current == first
    second = Decision(DISQUALIFIED, "looked again", "Bo", 3)
    await desk.decide(subject, "p1", second, first)
    await desk.decide(subject, "p2", first, None)
    assert await desk.decisions(subject) == {"p1": second, "p2": first}
    assert await desk.decisions(f"race:{secrets.token_hex(6)}") == {}


async def test_the_audit_log_keeps_every_decision_newest_first(desk: DeskStore) -> None:
    mark = secrets.token_hex(6)
    lines = [
        AuditEntry(f"race:{mark}:p1", f"race:{mark}", "Cy", action, was, status, "n", "Ann", at)
        for at, (action, was, status) in enumerate(
            [("decide", "held", CONFIRMED), ("reverse", CONFIRMED, DISQUALIFIED)]
        )
    ]
    for line in lines:
        await desk.log(line)
    mine = [line for line in await desk.audit(100) if line.subject == f"race:{mark}"]
    assert mine == lines[::-1]


async def test_a_rated_race_s_change_is_applied_and_taken_back_once_each(desk: DeskStore) -> None:
    race_id = secrets.token_hex(6)
    assert await desk.mark_applied(race_id, "p1", True) is None  # no such race kept
    await desk.set_rated_race(
        race_id,
        {
            "cells": 4,
            "players": {"p1": {"account_id": "a1", "change": [2.5, -0.5], "applied": False}},
        },
    )
    assert await desk.mark_applied(race_id, "p1", True) == [2.5, -0.5]
    assert await desk.mark_applied(race_id, "p1", True) is None
    assert await desk.mark_applied(race_id, "p1", False) == [-2.5, 0.5]
    assert await desk.mark_applied(race_id, "p2", True) is None
    rated = await desk.rated_race(race_id)
    assert rated is not None and rated["players"]["p1"]["applied"] is False
