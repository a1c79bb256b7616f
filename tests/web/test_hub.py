"""Race hubs in this process against a broker that misbehaves: refused appends, lost
answers, and pub/sub messages dropped, delayed and duplicated.

Two hubs on one broker stand for two server processes. Whatever the broker
does, every acknowledged action is in the log once, and every replica ends
as the log says.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from boulanger import codec
from boulanger.broker import BrokerUnavailable, Condition, Listener
from boulanger.broker.memory import MemoryBroker
from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.errors import Refused
from boulanger.race.events import Event, Logged
from boulanger.race.ids import secret_hash
from boulanger.race.race import Duplicate, RaceMeta
from boulanger.race.replica import Replica
from boulanger.solver import solve
from boulanger.web.hub import RaceHub, now_ms

CODE = "BK1-C4-AAAAAAB"
RACE = "flaky"
HOST_KEY = "host"


class FlakyBroker(MemoryBroker):
    """The memory broker, with faults: each a probability (seeded), or forced for a while.

    ``refuse``: an append fails before reaching the log; ``lose``: it reaches
    the log, but its answer is lost (the caller sees BrokerUnavailable);
    ``drop``, ``delay``, ``duplicate``: what pub/sub does to each message,
    for each listener.
    """

    def __init__(self, seed: int = 0, **faults: float) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.faults = {"refuse": 0.0, "lose": 0.0, "drop": 0.0, "delay": 0.0, "duplicate": 0.0}
        self.faults.update(faults)
        self.seen: dict[str, int] = dict.fromkeys(self.faults, 0)
        self._channels: dict[str, set[Listener]] = {}

    def _hit(self, fault: str) -> bool:
        hit = self.rng.random() < self.faults[fault]
        self.seen[fault] += hit
        return hit

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        if self._hit("refuse"):
            raise BrokerUnavailable("refused")
        seq = await super().append(race_id, event, condition)
        if seq and self._hit("lose"):
            raise BrokerUnavailable("the answer was lost")
        return seq

    async def subscribe(self, channel: str, listener: Listener) -> None:
        self._channels.setdefault(channel, set()).add(listener)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        self._channels.get(channel, set()).discard(listener)

    async def publish(self, channel: str, data: str) -> None:
        loop = asyncio.get_running_loop()
        for listener in tuple(self._channels.get(channel, ())):
            if self._hit("drop"):
                continue
            if self._hit("delay"):
                loop.call_later(self.rng.uniform(0.001, 0.03), listener.on_message, data)
            else:
                loop.call_soon(listener.on_message, data)
            if self._hit("duplicate"):
                loop.call_later(self.rng.uniform(0.0, 0.03), listener.on_message, data)


async def opened_hubs(broker: FlakyBroker, count: int) -> list[RaceHub]:
    meta = RaceMeta(RACE, CODE, now_ms(), secret_hash(HOST_KEY), countdown_ms=0)
    await broker.create_race(meta)
    hubs = [RaceHub(broker, meta) for _ in range(count)]
    for hub in hubs:
        await hub.open()
    return hubs


async def submitted(
    hub: RaceHub,
    decide: Callable[[], Event | Duplicate | None],
    player_id: str | None = None,
    done: str = "",
) -> Logged | Duplicate | None:
    """As a client does: sent again (the same request) while the answer is try_again.

    ``done``: the refusal that says a request answered try_again went through
    (a join or start has no id to be recognised by when it comes again).
    """
    async with asyncio.timeout(20):
        while True:
            try:
                return await hub.submit(decide, player_id)
            except Refused as error:
                if error.code == done:
                    return None
                assert error.code == "try_again", error
                await asyncio.sleep(0.005)


async def joined(hub: RaceHub, name: str, player_id: str, host: bool = False) -> None:
    join = p.Join(name=name, host_key=HOST_KEY if host else None)
    await submitted(
        hub,
        lambda: hub.race.decide_join(join, now_ms(), player_id, "t" + player_id),
        None,
        "name_taken",
    )
    await hub.catch_up()
    assert player_id in hub.race.players


async def play(hub: RaceHub, player_id: str, moves: list[Move]) -> list[tuple[str, int]]:
    """Each move sent until acknowledged; the action ids with the seqs of their acks."""
    acked = []
    for n, move in enumerate(moves):
        action = p.MoveAction(f"{player_id}-{n}", move.src, move.dst, move.count)
        answer = await submitted(
            hub, lambda a=action: hub.race.decide_action(player_id, a, now_ms()), player_id
        )
        assert answer is not None
        acked.append((action.action_id, answer.seq))
    return acked


def logged_actions(broker: MemoryBroker) -> list[dict[str, Any]]:
    import json

    return [json.loads(text) for text in broker._logs[RACE]]


@pytest.fixture(scope="module")
def moves() -> list[Move]:
    solution = solve(CODE, budget=30)
    return [Move.from_dict(a) for a in solution.actions[:25]]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_two_hubs_agree_with_the_log_whatever_the_broker_does(
    seed: int, moves: list[Move]
) -> None:
    broker = FlakyBroker(seed, refuse=0.1, lose=0.1, drop=0.2, delay=0.2, duplicate=0.2)
    first, second = await opened_hubs(broker, 2)
    await joined(first, "Ann", "ann", host=True)
    await first.catch_up()
    await joined(second, "Bo", "bo")
    await submitted(
        first, lambda: first.race.decide_start("ann", now_ms()), None, "already_started"
    )
    await second.catch_up()
    acked = await asyncio.gather(play(first, "ann", moves), play(second, "bo", moves))
    assert all(count for count in broker.seen.values()), broker.seen  # every fault happened

    log = logged_actions(broker)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    ids = [e["action_id"] for e in log if e["kind"] == "action"]
    assert len(ids) == len(set(ids)) == 2 * len(moves)  # each action once, none lost
    seq_of = {e["action_id"]: e["seq"] for e in log if e["kind"] == "action"}
    for player in acked:
        assert all(seq_of[action_id] == seq for action_id, seq in player)  # acks tell the truth

    # Each replica, once caught up, is the race the log builds.
    built = Replica.rebuilt(first.race.meta, broker._logs[RACE], codec).race
    now = now_ms()
    for hub in (first, second):
        await hub.catch_up(verify=True)
        assert hub.race.snapshot(now) == built.snapshot(now)
        assert hub.race.players["ann"].game.record() == built.players["ann"].game.record()
    await first.close()
    await second.close()


@pytest.mark.parametrize(("later_ms", "found"), [(0, Logged), (5, Duplicate)])
async def test_a_lost_answer_then_a_dropped_event_is_acknowledged_once(
    moves: list[Move], later_ms: int, found: type
) -> None:
    """The append went through, its answer was lost and its event never came by pub/sub.
    Sent again, it is acknowledged with its first seq and never appended twice:
    decided at the same millisecond it is the same event, refused (the player's
    events moved on) and found in the log; decided later (as a client's resend
    usually is) it is another event, and the log's copy, applied first, makes it
    a duplicate."""
    broker = FlakyBroker()
    (hub,) = await opened_hubs(broker, 1)
    await joined(hub, "Ann", "ann", host=True)
    await submitted(hub, lambda: hub.race.decide_start("ann", now_ms()))
    action = p.MoveAction("a1", moves[0].src, moves[0].dst, moves[0].count)
    at = now_ms()
    broker.faults.update(lose=1.0, drop=1.0)
    with pytest.raises(Refused, match="try_again"):
        await hub.submit(lambda: hub.race.decide_action("ann", action, at), "ann")
    assert hub.race.seq == 2  # not applied here
    broker.faults.update(lose=0.0, drop=0.0)
    resent = at + later_ms
    answer = await hub.submit(lambda: hub.race.decide_action("ann", action, resent), "ann")
    assert isinstance(answer, found) and answer.seq == 3
    assert [e["seq"] for e in logged_actions(broker)] == [1, 2, 3]
    # Once more: applied here now, so a duplicate with the same seq.
    again = await hub.submit(lambda: hub.race.decide_action("ann", action, resent), "ann")
    assert isinstance(again, Duplicate) and again.seq == 3
    await hub.close()


async def test_a_gap_in_pub_sub_is_filled_from_the_log(moves: list[Move]) -> None:
    broker = FlakyBroker()
    first, second = await opened_hubs(broker, 2)
    await joined(first, "Ann", "ann", host=True)
    broker.faults.update(drop=1.0)
    await joined(first, "Bo", "bo")  # second never hears of it
    broker.faults.update(drop=0.0)
    await submitted(first, lambda: first.race.decide_start("ann", now_ms()))
    async with asyncio.timeout(5):  # seq 3 arrives after a gap: second reads the log
        while second.race.seq < 3:
            await asyncio.sleep(0.005)
    assert list(second.race.players) == ["ann", "bo"]
    assert second.missed_since(0) == first.missed_since(0)
    await first.close()
    await second.close()
