"""Every broker keeps ordered race logs and fans out, on races' channels and on the one
control channel; Redis survives a restart."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from boulanger.broker import (
    AppendRefused,
    Broker,
    BrokerUnavailable,
    Condition,
    open_broker,
    race_channel,
)
from boulanger.race.condition import LogState
from support.listeners import Collector, barrier
from support.servers import RedisProcess

from .conftest import eventually, meta, parsed, subscribed, text


async def test_append_is_conditional_and_ordered(broker: Broker) -> None:
    race_id = f"t-{id(broker)}"
    await broker.create_race(meta(race_id))
    assert await broker.race_meta(race_id) == meta(race_id)
    assert await broker.race_meta("missing") is None
    whole = Condition  # a race-wide event: the log as its decider saw it
    assert await broker.append(race_id, text({"kind": "a"}), whole(log_length=0)) == 1
    with pytest.raises(AppendRefused):  # moved on
        await broker.append(race_id, text({"kind": "b"}), whole(log_length=0))
    with pytest.raises(AppendRefused):
        await broker.append(race_id, text({"kind": "c"}), whole(log_length=5))
    assert await broker.append(race_id, text({"kind": "d"}), whole(log_length=1)) == 2
    # A player's events need only that player's own history unchanged.
    ann = Condition(player_id="ann", player_events=0)
    assert await broker.append(race_id, text({"kind": "ann-1"}), ann) == 3
    with pytest.raises(AppendRefused):
        await broker.append(race_id, text({"kind": "ann-1 again"}), ann)
    bo = Condition(player_id="bo", player_events=0)
    assert await broker.append(race_id, text({"kind": "bo-1"}), bo) == 4  # Ann's does not matter
    ann2 = Condition(player_id="ann", player_events=1)
    assert await broker.append(race_id, text({"kind": "ann-2"}), ann2) == 5
    # Once an event ends the race, no player event joins the log.
    assert (
        await broker.append(race_id, text({"kind": "over"}), whole(log_length=5, ends_race=True))
        == 6
    )
    bo2 = Condition(player_id="bo", player_events=1)
    with pytest.raises(AppendRefused):
        await broker.append(race_id, text({"kind": "late"}), bo2)
    events = parsed(await broker.read(race_id, 0))
    assert [e["kind"] for e in events] == ["a", "d", "ann-1", "bo-1", "ann-2", "over"]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e["seq"] for e in parsed(await broker.read(race_id, 4))] == [5, 6]


def _condition(rng: random.Random, model: LogState) -> Condition:
    """A condition that holds about half the time: right or off by one, ending or not."""
    near = rng.choice((0, 0, 1, -1))
    if rng.random() < 0.4:
        return Condition(log_length=max(0, model.length + near), ends_race=rng.random() < 0.1)
    player = rng.choice(("ann", "bo", "cy"))
    return Condition(player_id=player, player_events=max(0, model.counts.get(player, 0) + near))


@pytest.mark.parametrize("seed", range(3))
async def test_every_store_decides_appends_as_the_one_rule_does(broker: Broker, seed: int) -> None:
    """Random conditions, the store against LogState (the rule written once): each
    append is taken or refused alike, with the same seq; the log is what was taken."""
    rng = random.Random(seed)
    race_id = f"rule-{seed}-{id(broker)}"
    model = LogState()
    taken = []
    for n in range(60):
        condition = _condition(rng, model)
        expected = model.append(condition)
        try:
            seq = await broker.append(race_id, text({"n": n}), condition)
        except AppendRefused:
            seq = 0
        assert seq == expected, (n, condition)
        if seq:
            taken.append(n)
    assert 0 < len(taken) < 60  # the sequence tried both outcomes
    assert [e["n"] for e in parsed(await broker.read(race_id, 0))] == taken


async def test_appends_are_published_in_order(broker: Broker) -> None:
    race_id = f"p-{id(broker)}"
    listener = Collector()
    await subscribed(broker, race_channel(race_id), listener)
    for seq in range(1, 51):
        assert await broker.append(race_id, text({"n": seq}), Condition(log_length=seq - 1)) == seq
    await eventually(lambda: len(listener.messages) == 50)
    assert [json.loads(m)["seq"] for m in listener.messages] == list(range(1, 51))
    await broker.unsubscribe(race_channel(race_id), listener)
    witness = Collector()
    await subscribed(broker, race_channel(race_id), witness)
    await broker.publish(race_channel(race_id), "after")
    await barrier(broker, race_channel(race_id), witness)  # "after" reached every listener
    assert "after" not in listener.messages


async def test_redis_broker_resubscribes_after_a_restart() -> None:
    redis = RedisProcess()
    redis.start()
    broker = open_broker(redis.url)
    await broker.start()
    try:
        listener = Collector()
        await broker.subscribe("bk:test", listener)
        await asyncio.wait_for(broker.connected.wait(), 5)  # type: ignore[attr-defined]
        await broker.create_race(meta("r"))
        assert await broker.append("r", text({"n": 1}), Condition(log_length=0)) == 1
        redis.restart()
        # While it is down (or just back), calls fail with a clear error or succeed.
        await eventually(lambda: listener.resyncs >= 2, timeout=15)
        await broker.publish("bk:test", "hello")
        await eventually(lambda: "hello" in listener.messages)
        assert await broker.race_meta("r") == meta("r")  # the AOF kept it
        assert [e["seq"] for e in parsed(await broker.read("r", 0))] == [1]
        redis.stop()
        with pytest.raises(BrokerUnavailable):
            await broker.append("r", text({"n": 2}), Condition(log_length=1))
        assert not await broker.ping()
    finally:
        await broker.close()
        redis.cleanup()


async def control_subscribed(*pairs: tuple[Broker, Collector]) -> None:
    """Each listener on its broker's control channel, live: probes from each came back."""
    for broker, listener in pairs:
        await broker.subscribe_control(listener)
    async with asyncio.timeout(10):
        for via, _ in pairs:
            while not all(f"probe {id(via)}" in listener.messages for _, listener in pairs):
                await via.publish_control(f"probe {id(via)}")
                await asyncio.sleep(0.05)
    for _, listener in pairs:
        listener.messages.clear()


async def test_the_control_channel_reaches_every_process_and_no_race(broker: Broker) -> None:
    # A second broker on the same store stands for another process (the embedded
    # brokers serve one process: the same broker, then).
    shared = broker.kind in ("redis", "redis-cluster")
    other = open_broker(broker.url) if shared else broker  # type: ignore[attr-defined]
    if other is not broker:
        await other.start()
        mapped = getattr(other, "mapped", None)
        if mapped is not None:
            await asyncio.wait_for(mapped.wait(), 10)
    try:
        here, there, race = Collector(), Collector(), Collector()
        await subscribed(other, race_channel("r-control"), race)
        await control_subscribed((broker, here), (other, there))
        await broker.publish_control("kick")
        await eventually(lambda: here.messages == ["kick"] and there.messages == ["kick"])
        await broker.append("r-control", text({"kind": "a"}), Condition(log_length=0))
        await eventually(lambda: len(race.messages) == 1)
        assert json.loads(race.messages[0])["seq"] == 1  # its event, and not the kick
        await other.unsubscribe_control(there)
        await broker.publish_control("after")
        await eventually(lambda: "after" in here.messages)
        await asyncio.sleep(0.1)
        assert there.messages == ["kick"]
        await broker.unsubscribe_control(here)
    finally:
        if other is not broker:
            await other.close()


def test_unknown_broker_urls_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown broker URL"):
        open_broker("kafka://nope")
