"""Who is sent a progress: a player's progress goes to the others only when it changes
what they see, and every such change reaches them, in order (docs/protocol.md,
"Who is sent a progress"). Plain Python: the race's replica and its log, no server."""

from __future__ import annotations

import itertools
import random
from typing import Any

from boulanger import codec
from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.events import Event
from boulanger.race.ids import secret_hash
from boulanger.race.race import Duplicate, RaceMeta
from boulanger.race.replica import Applied, Replica
from boulanger.solver import solve
from support.screens import Screen, seen

CODE = "BK1-C4-AAAAAAB"
HOST_KEY = "host-key"


class Race:
    """A replica fed by a log of its own; what each applied event is and who is sent it."""

    def __init__(self, **meta: Any) -> None:
        fields: dict[str, Any] = {
            "race_id": "r1",
            "code": CODE,
            "created_at": 0,
            "host_key_hash": secret_hash(HOST_KEY),
            "countdown_ms": 0,
            **meta,
        }
        self.replica = Replica(RaceMeta(**fields), codec)
        self.texts: list[str] = []
        self.applied: list[Applied] = []

    @property
    def race(self) -> Any:
        return self.replica.race

    def append(self, event: Event | Duplicate | None) -> Applied:
        assert event is not None and not isinstance(event, Duplicate)
        text = codec.with_seq(len(self.texts) + 1, codec.encode_event(event))
        self.texts.append(text)
        applied = self.replica.receive(text)
        assert isinstance(applied, Applied)
        self.applied.append(applied)
        return applied

    def join(self, *names: str) -> list[str]:
        ids = []
        for i, name in enumerate(names):
            join = p.Join(name=name, host_key=HOST_KEY if i == 0 else None)
            ids.append(f"p{len(self.race.players) + 1}")
            self.append(self.race.decide_join(join, 0, ids[-1], f"token-{ids[-1]}"))
        self.append(self.race.decide_start(ids[0], 0))
        return ids

    def act(self, pid: str, action: p.Action, now: int) -> Applied:
        return self.append(self.race.decide_action(pid, action, now))

    def truth(self) -> tuple[dict[str, tuple[Any, ...]], list[str], str]:
        """What every client should show now: the race's own standings."""
        race = self.race
        ordered = race.standings(final=race.over_reason is not None)
        message = codec.decode_server(self.applied[-1].text)
        state = getattr(message, "race_state")  # noqa: B009 - every event has one
        return (
            {s.player_id: seen(s.to_wire()) for s in ordered},
            [s.player_id for s in ordered],
            state,
        )


def wire(applied: Applied) -> dict[str, Any]:
    return codec.decode_server(applied.text).to_wire()


def test_a_progress_that_changes_nothing_shown_goes_to_its_player_alone() -> None:
    race = Race()
    ann, bo = race.join("Ann", "Bo")
    started = race.applied[-1].logged.seq
    # Ann's first action puts her behind Bo (fewer actions go first among equals).
    first = race.act(ann, p.MoveAction("a1", "col1", "cell1"), 10)
    assert first.told and wire(first)["leaderboard"] == [bo, ann]
    assert wire(first)["prev_seq"] == started
    # Taking it back changes no card, no score, no order: Ann's alone.
    back = race.act(ann, p.Undo("a2"), 20)
    assert not back.told
    assert wire(back)["prev_seq"] == first.logged.seq
    assert wire(back)["player"]["actions"] == 2  # her own client's standing is current
    # Bo's move: one action against Ann's two, he stays ahead. His alone too.
    bo_moved = race.act(bo, p.MoveAction("b1", "col1", "cell1"), 30)
    assert not bo_moved.told
    assert wire(bo_moved)["prev_seq"] == first.logged.seq
    # A card to a foundation is shown to all, and carries the counts up to date.
    solution = [Move.from_dict(a) for a in solve(CODE, budget=30).actions]
    race.act(bo, p.Undo("b2"), 40)
    for n, move in enumerate(solution):
        applied = race.act(ann, p.MoveAction(f"s{n}", move.src, move.dst, move.count), 50 + n)
        if move.dst == "foundation":
            break
    assert applied.told
    shown = wire(applied)
    assert shown["player"]["foundation_cards"] == 1 and shown["player"]["actions"] == n + 3


def _random_race(seed: int) -> tuple[Race, dict[str, Screen]]:
    """Four players to the end of a race: two win by the solution (with detours taken
    back), one plays at random, one resigns; positions judged as players pause. Each
    player's screen gets the events its connection would: those told to everyone,
    and its own player's; a spectator's, those told to everyone."""
    rng = random.Random(seed)
    solution = [Move.from_dict(a) for a in solve(CODE, budget=30).actions]
    race = Race()
    ids = race.join("Ann", "Bo", "Cy", "Di")
    screens = {who: Screen() for who in [*ids, "spectator"]}
    for screen in screens.values():
        screen.take_race(race.race.snapshot(0))

    def deliver(applied: Applied) -> None:
        message = wire(applied)
        for who, screen in screens.items():
            if applied.told or who == applied.board_of:
                screen.receive(message)
        # After every event, every client shows exactly what is true.
        truth = race.truth()
        for who, screen in screens.items():
            assert screen.gaps == 0
            assert screen.picture() == truth, (who, applied.logged.seq)

    def detours(pid: str) -> list[Move]:
        wanted = solution[played[pid]]
        return [m for m in race.race.players[pid].game.legal_moves() if m != wanted]

    played = {ids[0]: 0, ids[1]: 0}
    detour: dict[str, bool] = {}
    step = 0
    while race.race.over_reason is None:
        step += 1
        pid = rng.choice(ids)
        player = race.race.players[pid]
        now = step * 10
        if player.done:
            continue
        action: p.Action
        if detour.pop(pid, False):
            action = p.Undo(f"u{step}")
        elif pid in played and rng.random() < 0.3 and (options := detours(pid)):
            move = rng.choice(options)
            action = p.MoveAction(f"d{step}", move.src, move.dst, move.count)
            detour[pid] = True
        elif pid in played:
            move = solution[played[pid]]
            played[pid] += 1
            action = p.MoveAction(f"a{step}", move.src, move.dst, move.count)
        elif (pid == ids[3] and step > 400) or step > 900:
            action = p.Resign(f"r{step}")
        else:
            moves = player.game.legal_moves()
            if player.game.can_undo and (not moves or rng.random() < 0.2):
                action = p.Undo(f"a{step}")
            elif moves:
                move = rng.choice(moves)
                action = p.MoveAction(f"a{step}", move.src, move.dst, move.count)
            else:
                action = p.Resign(f"r{step}")
        deliver(race.act(pid, action, now))
        if race.race.needs_judging(pid) and rng.random() < 0.5:  # the player paused
            judged = race.race.decide_status(pid, now + 5)
            if judged is not None:
                deliver(race.append(judged))
        over = race.race.decide_over(now + 6)
        if over is not None:
            deliver(race.append(over))
    return race, screens


def test_every_change_a_rival_sees_reaches_it_in_order_and_nothing_else() -> None:
    race, screens = _random_race(seed=5)
    told = [a for a in race.applied if a.told]
    quiet = [a for a in race.applied if not a.told]
    # Both kinds happen: the test would prove nothing otherwise.
    assert len(quiet) > 100 and len(told) > 100
    assert all(isinstance(codec.decode_server(a.text), p.Progress) for a in quiet)
    for screen in screens.values():
        assert screen.picture() == race.truth()
    # A spectator is told each event sent to everyone, in order, each naming the one before.
    spectator = screens["spectator"].events
    assert [e["seq"] for e in spectator] == [a.logged.seq for a in told[-len(spectator) :]]
    assert all(
        later["prev_seq"] == earlier["seq"] for earlier, later in itertools.pairwise(spectator)
    )
    # And each told progress changed something a rival shows (nothing sent for nothing).
    shown: dict[str, tuple[Any, ...]] = {}
    order: list[str] = []
    for event in spectator:
        if event["type"] != "progress":
            continue
        player = event["player"]
        assert (seen(player), event["leaderboard"]) != (shown.get(player["player_id"]), order)
        shown[player["player_id"]], order = seen(player), event["leaderboard"]
    winners = [s for s in race.race.standings(final=True) if s.status == "won"]
    assert len(winners) == 2


def test_replicas_fed_the_same_log_send_the_same_messages_to_the_same_clients() -> None:
    race, _ = _random_race(seed=8)
    again = Replica(race.race.meta, codec)
    for text, first in zip(race.texts, race.applied, strict=True):
        applied = again.receive(text)
        assert isinstance(applied, Applied)
        assert (applied.text, applied.told) == (first.text, first.told)
    rebuilt = Replica.rebuilt(race.race.meta, race.texts, codec)
    assert rebuilt.race.told_seq == race.race.told_seq
    assert rebuilt.race.told_order == race.race.told_order


def test_a_client_behind_gets_the_events_it_missed_quiet_ones_included() -> None:
    race, _ = _random_race(seed=5)
    behind = race.race.seq - 30
    # A client that was told everything up to `behind`, then lost its connection.
    screen = Screen()
    screen.take_race({"players": [], "leaderboard": [], "state": "lobby", "seq": 0})
    for applied in race.applied[:behind]:
        if applied.told:
            screen.receive(wire(applied))
    screen.last_seq = behind
    # It asks for what it missed: every event after it, each as first sent.
    missed = race.replica.missed_since(behind)
    assert missed is not None and len(missed) == 30
    assert any(not a.told for a in race.applied[behind:])
    for text in missed:
        screen.receive(codec.decode_server(text).to_wire())
    assert screen.gaps == 0 and screen.last_seq == race.race.seq
    assert screen.picture() == race.truth()
