"""The race logic as plain Python: decisions and events, no server."""

from __future__ import annotations

import random

import pytest

from boulanger import codec
from boulanger.engine import Move
from boulanger.race import protocol as p
from boulanger.race.errors import Refused
from boulanger.race.events import Event, Started
from boulanger.race.ids import secret_hash
from boulanger.race.race import MAX_PLAYERS, Answer, Duplicate, Race, RaceMeta
from boulanger.race.replica import Applied, Replica
from boulanger.solver import solve
from support.games import random_record

CODE = "BK1-C4-AAAAAAB"
HOST_KEY = "host-key"


class Log:
    """A race's replica and the log it would have: every decision is appended to the
    log (as text, the way a broker holds it), and the replica receives it from there."""

    def __init__(self, **meta: object) -> None:
        fields = {
            "race_id": "r1",
            "code": CODE,
            "created_at": 0,
            "host_key_hash": secret_hash(HOST_KEY),
        }
        self.replica = Replica(RaceMeta(**{**fields, **meta}), codec)  # type: ignore[arg-type]
        self.texts: list[str] = []  # the log
        self.messages: list[p.Message] = []

    @property
    def race(self) -> Race:
        return self.replica.race

    def append(self, event: Event | Duplicate | None) -> p.Message:
        assert event is not None and not isinstance(event, Duplicate)
        text = codec.with_seq(len(self.texts) + 1, codec.encode_event(event))
        self.texts.append(text)
        applied = self.replica.receive(text)
        assert isinstance(applied, Applied)
        message = codec.decode_server(applied.text)
        self.messages.append(message)
        return message

    def join(self, name: str, pid: str, host: bool = False, now: int = 0) -> None:
        join = p.Join(name=name, host_key=HOST_KEY if host else None)
        self.append(self.race.decide_join(join, now, pid, f"token-{pid}"))

    def start(self, now: int = 0) -> int:
        host = self.race.host_id
        assert host is not None
        message = self.append(self.race.decide_start(host, now))
        assert isinstance(message, p.RaceStarting)
        return message.start_at

    def act(self, pid: str, action: p.Action, now: int) -> p.Message:
        decision = self.race.decide_action(pid, action, now)
        if isinstance(decision, Duplicate):
            return decision.answer.ack(action.action_id, action.ref)
        return self.append(decision)


def test_joining_trims_names_and_refuses_duplicates_and_bad_names() -> None:
    log = Log()
    log.join("  Ann   Lee ", "p1", host=True)
    assert log.race.players["p1"].name == "Ann Lee" and log.race.host_id == "p1"
    for name, code in [
        ("ann lee", "name_taken"),
        ("", "bad_name"),
        ("x" * 25, "bad_name"),
        ("a\x00b", "bad_name"),
    ]:
        with pytest.raises(Refused) as refused:
            log.race.decide_join(p.Join(name=name), 0, "p2", "t")
        assert refused.value.code == code


def test_only_the_host_key_makes_a_host_and_only_once() -> None:
    log = Log()
    log.join("Bo", "p1")
    assert log.race.host_id is None
    join = p.Join(name="Eve", host_key="guess")
    log.append(log.race.decide_join(join, 0, "p2", "t2"))
    assert log.race.host_id is None
    log.join("Ann", "p3", host=True)
    log.join("Cy", "p4", host=True)  # the key again: no second host
    assert [pl.host for pl in log.race.players.values()] == [False, False, True, False]


def test_a_race_holds_eight_players() -> None:
    log = Log()
    for i in range(MAX_PLAYERS):
        log.join(f"P{i}", f"p{i}", host=i == 0)
    with pytest.raises(Refused) as refused:
        log.race.decide_join(p.Join(name="Late"), 0, "late", "t")
    assert refused.value.code == "race_full"


def test_start_countdown_and_actions_before_it() -> None:
    log = Log(countdown_ms=3000)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    with pytest.raises(Refused, match="not_host"):
        log.race.decide_start("p2", 0)
    start_at = log.start(now=1000)
    assert start_at == 4000 and log.race.state(3999) == "countdown"
    assert log.race.state(4000) == "running"
    with pytest.raises(Refused) as refused:
        log.race.decide_action("p1", p.Undo("a1"), 3999)
    assert refused.value.code == "not_started"
    with pytest.raises(Refused) as refused:
        log.race.decide_join(p.Join(name="Late"), 5000, "p3", "t")
    assert refused.value.code == "already_started"
    with pytest.raises(Refused, match="already_started"):
        log.race.decide_start("p1", 5000)


def test_actions_are_checked_resolved_and_idempotent() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.start()
    refusals = [
        (p.MoveAction("a", "col1", "col2"), "illegal_move"),
        (p.MoveAction("a", "col1", "cell5"), "bad_notation"),
        (p.MoveAction("a", "col1", "cell1", 2), "illegal_move"),
        (p.Tap("a", "6S"), "no_destination"),
        (p.Tap("a", "ZZ"), "bad_notation"),
        (p.DoubleTap("a", "JD"), "no_destination"),
        (p.Undo("a"), "nothing_to_undo"),
    ]
    for action, code in refusals:
        with pytest.raises(Refused) as refused:
            log.race.decide_action("p1", action, 10)
        assert refused.value.code == code, action
    # A double tap on 6S (top of column 1): no foundation, no column, no empty column: cell1.
    progress = log.act("p1", p.DoubleTap("t1", "6S"), 10)
    assert isinstance(progress, p.Progress) and progress.player["actions"] == 1
    assert str(log.race.players["p1"].game.board.cells[0]) == "6S"
    again = log.race.decide_action("p1", p.DoubleTap("t1", "6S"), 20)
    first = Answer(progress.seq, Move("col1", "cell1", 1), "6S", 0, 1, 0, "playing", 1)
    assert again == Duplicate(first)
    undo = log.act("p1", p.Undo("u1"), 30)
    assert isinstance(undo, p.Progress) and undo.player["actions"] == 2
    # An undo's answer: the move taken back, and its card, back where it came from.
    undone = log.race.players["p1"].applied["u1"]
    assert undone == Answer(undo.seq, Move("col1", "cell1", 1), "6S", 0, 2, 0, "playing", 0)
    # A resend after more actions gets the same answer, numbers of its time included.
    log.act("p1", p.MoveAction("m2", "col2", "cell1"), 40)
    assert log.race.decide_action("p1", p.DoubleTap("t1", "6S"), 50) == Duplicate(first)
    ack = first.ack("t1", "r1").to_wire()
    assert ack == {
        "type": "ack",
        "action_id": "t1",
        "seq": progress.seq,
        "move": {"src": "col1", "dst": "cell1", "count": 1},
        "card": "6S",
        "score": 0,
        "actions": 1,
        "foundation_cards": 0,
        "status": "playing",
        "can_undo": 1,
        "ref": "r1",
    }


def test_resigning_ends_a_race_and_ranks_everyone() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.start()
    log.act("p2", p.MoveAction("m1", "col1", "cell1"), 100)  # Bo: one action, 0 cards
    assert log.race.decide_over(200) is None
    log.act("p1", p.Resign("r1"), 300)
    with pytest.raises(Refused) as refused:
        log.race.decide_action("p1", p.Undo("x"), 301)
    assert refused.value.code == "finished"
    log.act("p2", p.Resign("r2"), 400)
    over = log.append(log.race.decide_over(500))
    assert isinstance(over, p.RaceOver) and over.reason == "all_done"
    # Neither won: same cards and score, so fewer actions first.
    assert [s["name"] for s in over.standings] == ["Ann", "Bo"]
    assert [s["rank"] for s in over.standings] == [1, 2]
    assert log.race.state(600) == "finished"
    with pytest.raises(Refused, match="race_over"):
        log.race.decide_action("p2", p.Undo("late"), 700)


def test_a_resigned_game_says_resigned_everywhere() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.start()
    log.act("p1", p.MoveAction("m1", "col1", "cell1"), 10)
    before = log.race.players["p1"].view()
    progress = log.act("p1", p.Resign("r1"), 20)
    assert isinstance(progress, p.Progress) and progress.player["status"] == "resigned"
    game = log.race.players["p1"].view()  # what its ack, a welcome and a board show
    assert game["status"] == "resigned"
    assert {**game, "status": before["status"]} == before  # the board and numbers stay
    assert log.race.standing(log.race.players["p1"]).status == "resigned"


def test_actions_count_moves_and_undos_but_not_a_resign() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.start()
    counts = []
    for action in (
        p.MoveAction("m1", "col1", "cell1"),
        p.Undo("u1"),  # one more action; the move it takes back still counted
        p.MoveAction("m2", "col1", "cell1"),
        p.Resign("r1"),  # not an action
    ):
        message = log.act("p1", action, 10)
        assert isinstance(message, p.Progress)
        counts.append(message.player["actions"])
    assert counts == [1, 2, 3, 3]
    # A refused action and a repeated action id count nothing either.
    assert log.race.players["p1"].game.actions == 3
    assert len(log.race.record("p1").actions) == 3


def test_final_ranks_for_everyone_once_the_race_is_over() -> None:
    log = Log(countdown_ms=0, time_limit_s=60)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.join("Cy", "p3")
    log.start(now=0)
    log.act("p2", p.MoveAction("m1", "col1", "cell1"), 10)
    log.act("p3", p.Resign("r3"), 20)
    running = log.race.snapshot(30)
    assert [pl["rank"] for pl in running["players"]] == [None, None, None]
    over = log.append(log.race.decide_over(60_000))
    assert isinstance(over, p.RaceOver) and over.reason == "time_limit"
    assert [s["rank"] for s in over.standings] == [1, 2, 3]
    finished = log.race.snapshot(60_001)
    ranks = {pl["player_id"]: pl["rank"] for pl in finished["players"]}
    assert [ranks[pid] for pid in finished["leaderboard"]] == [1, 2, 3]
    assert finished["leaderboard"] == [s["player_id"] for s in over.standings]


def test_the_time_limit_ends_a_race() -> None:
    log = Log(countdown_ms=0, time_limit_s=60)
    log.join("Ann", "p1", host=True)
    log.start(now=0)
    assert log.race.decide_over(59_999) is None
    with pytest.raises(Refused, match="race_over"):
        log.race.decide_action("p1", p.Undo("late"), 60_000)
    over = log.append(log.race.decide_over(60_000))
    assert isinstance(over, p.RaceOver) and over.reason == "time_limit"


def test_rematch_only_by_the_host_once_the_race_is_over() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    with pytest.raises(Refused, match="not_started"):
        log.race.decide_rematch("p1", "r2", CODE)
    log.start()
    for pid in ("p1", "p2"):
        log.act(pid, p.Resign(f"r-{pid}"), 10)
    log.append(log.race.decide_over(20))
    with pytest.raises(Refused, match="not_host"):
        log.race.decide_rematch("p2", "r2", CODE)
    opened = log.append(log.race.decide_rematch("p1", "r2", CODE))
    assert isinstance(opened, p.RematchOpened) and opened.url == "/race/r2"
    assert log.race.snapshot(30)["rematch"] == {"race_id": "r2", "code": CODE, "url": "/race/r2"}


def test_events_must_come_in_order() -> None:
    log = Log()
    with pytest.raises(ValueError, match="event 2 applied after 0"):
        log.race.apply(2, Started(0, 0))


def test_replicas_fed_the_same_log_agree() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.start()
    log.act("p1", p.MoveAction("m1", "col1", "cell1"), 10)
    events = [message.to_wire() for message in log.messages]
    # A second replica built from the same decisions derives the same race.
    second = Log(countdown_ms=0)
    second.join("Ann", "p1", host=True)
    second.join("Bo", "p2")
    second.start()
    second.act("p1", p.MoveAction("m1", "col1", "cell1"), 10)
    assert second.race.snapshot(50) == log.race.snapshot(50)
    assert [m.to_wire() for m in second.messages] == events


def test_a_daily_attempt_holds_one_player() -> None:
    log = Log(daily="2026-11-30", ranked=True)
    log.join("Ann", "p1", host=True)
    with pytest.raises(Refused) as refused:
        log.race.decide_join(p.Join(name="Bo"), 0, "p2", "t")
    assert refused.value.code == "race_full"


def test_every_progress_event_agrees_with_the_standings() -> None:
    """The per-action shortcut (one standing, everyone's order) matches the full standings."""
    rng = random.Random(3)
    solution = [Move.from_dict(a) for a in solve(CODE, budget=30).actions]
    assert solution
    log = Log(countdown_ms=0)
    for i, (name, pid) in enumerate([("Ann", "p1"), ("Bo", "p2"), ("Cy", "p3"), ("Di", "p4")]):
        log.join(name, pid, host=i == 0)
    log.start()
    played = {"p1": 0, "p2": 0}  # Ann and Bo win by the solution, Bo later
    checked = 0
    for step in range(1, 2000):
        pid = rng.choice(["p1", "p2", "p3", "p4"])
        player = log.race.players[pid]
        if player.done:
            continue
        action: p.Action
        if pid in played:
            move = solution[played[pid]]
            played[pid] += 1
            action = p.MoveAction(f"a{step}", move.src, move.dst, move.count)
        else:
            moves = player.game.legal_moves()
            if player.game.can_undo and (not moves or rng.random() < 0.2):
                action = p.Undo(f"a{step}")
            elif moves:
                move = rng.choice(moves)
                action = p.MoveAction(f"a{step}", move.src, move.dst, move.count)
            else:
                continue
        message = log.act(pid, action, now=step * 10)
        assert isinstance(message, p.Progress)
        ordered = log.race.standings()
        assert message.leaderboard == [s.player_id for s in ordered]
        assert message.player == next(s for s in ordered if s.player_id == pid).to_wire()
        checked += 1
    assert log.race.players["p1"].won_at is not None and log.race.players["p2"].won_at is not None
    assert checked > 500


def _record_moves(seed: int) -> list[p.Action]:
    """The actions of a seeded random game of CODE that ends at a dead end or stuck."""
    actions: list[p.Action] = []
    for i, action in enumerate(random_record(CODE, seed)["actions"]):
        if "undo" in action:
            actions.append(p.Undo(f"a{i}"))
        else:
            actions.append(p.MoveAction(f"a{i}", action["src"], action["dst"], action["count"]))
    return actions


@pytest.mark.parametrize(("seed", "status"), [(1, "dead_end"), (3, "stuck")])
def test_a_position_is_judged_once_on_demand_not_on_every_action(seed: int, status: str) -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.start()
    for action in _record_moves(seed):
        message = log.act("p1", action, 10)
        # An action says whether the game is won, nothing more.
        assert isinstance(message, p.Progress) and message.player["status"] == "playing"
    assert log.race.players["p1"].game.compute_status() == status
    assert log.race.needs_judging("p1") and not log.race.needs_judging("p2")
    judged = log.append(log.race.decide_status("p1", 20))
    assert isinstance(judged, p.Progress) and judged.player["status"] == status
    assert judged.player["actions"] == len(_record_moves(seed))  # not an action
    assert log.race.players["p1"].view()["status"] == status  # the welcome's game, a board
    # Judged: nothing more to judge, until the player acts again.
    assert not log.race.needs_judging("p1")
    assert log.race.decide_status("p1", 30) is None
    assert log.race.decide_status("p2", 30) is None  # Bo's deal position: playing, as before
    undone = log.act("p1", p.Undo("back"), 40)
    assert isinstance(undone, p.Progress) and undone.player["status"] == "playing"
    # Replicas apply the verdict as logged, and agree.
    again = Replica(log.race.meta, codec)
    for text in log.texts:
        again.receive(text)
    assert again.race.snapshot(50) == log.race.snapshot(50)
    assert [s.status for s in again.race.standings()] == [s.status for s in log.race.standings()]


def test_a_verdict_is_appended_only_while_the_player_has_not_acted_since() -> None:
    log = Log(countdown_ms=0)
    log.join("Ann", "p1", host=True)
    log.start()
    for action in _record_moves(1):
        log.act("p1", action, 10)
    verdict = log.race.decide_status("p1", 20)
    assert verdict is not None
    condition = log.race.condition(verdict)
    assert condition.player_id == "p1"
    log.act("p1", p.Undo("meanwhile"), 15)
    # The log has one more of Ann's events: a broker refuses the verdict's append.
    assert log.race.condition(verdict).player_events == condition.player_events + 1


def test_the_end_of_a_race_judges_positions_never_judged() -> None:
    log = Log(countdown_ms=0, time_limit_s=60)
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    log.start(now=0)
    for action in _record_moves(1):
        log.act("p1", action, 10)
    over = log.append(log.race.decide_over(60_000))
    assert isinstance(over, p.RaceOver)
    assert {s["player_id"]: s["status"] for s in over.standings} == {
        "p1": "dead_end",
        "p2": "playing",
    }
    with pytest.raises(Refused):
        log.race.decide_action("p1", p.Undo("late"), 60_001)
    assert log.race.decide_status("p1", 60_001) is None
