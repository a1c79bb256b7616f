"""The line of a won game: a solver's line is on it move for move, human-like play is not."""

from __future__ import annotations

from typing import Any

import pytest

from boulanger.engine import Game, IllegalMoveError, Move, RecordError
from boulanger.engine.moves import PLACE_INDEX
from boulanger.race.review import LineSignal
from boulanger.solver import solve, solve_board
from boulanger.solver.line import LineMeasure, decisions, measure_line, search_move
from support.players import Copier, HumanPace, Jitter, Planner, engine_move, play_offline

SHORT = "BK1-C4-AAAAE4D"  # deal 4995: par 68, 16 decisions on the solver's line
CODE = "BK1-C4-AAAAAAB"  # deal 1: par 94, 42 decisions


def _measure(record: dict[str, Any]) -> LineMeasure:
    # No limit in seconds: the figures depend on the record alone.
    return measure_line(record, budget=None)


def _record(code: str, actions: list[dict[str, Any]], gaps: list[int] | None = None) -> dict:
    if gaps is None:
        return {"code": code, "actions": actions}
    times, t = [], 0
    for gap in gaps:
        t += gap
        times.append(t)
    return {"code": code, "actions": [{**a, "t": t} for a, t in zip(actions, times, strict=True)]}


@pytest.mark.parametrize(("code", "decisions"), [(SHORT, 16), (CODE, 42)])
def test_the_solvers_line_is_on_the_line_at_every_decision(code: str, decisions: int) -> None:
    line = solve(code, budget=30).actions
    found = _measure(_record(code, line))
    assert (found.actions, found.undos, found.par) == (len(line), 0, len(line))
    # Moves to a foundation are no decisions: the solver makes them at once.
    assert sum(1 for a in line if a["dst"] != "foundation") == decisions
    assert (found.decisions, found.on_line, found.longest_run) == (decisions, decisions, decisions)
    assert found.unmeasured == 0
    assert found.hard + found.easy == decisions
    # No times in the record: no pauses.
    assert found.hard_pause_ms is None and found.easy_pause_ms is None


def test_the_order_of_foundation_moves_does_not_matter() -> None:
    """A player who sends cards home only when they are in the way is still on the line."""
    line = solve(SHORT, budget=30).actions
    # The line's decisions as the search names them (where to, not which column).
    solver_game, planned = Game(SHORT), []
    for action in line:
        move = Move.from_dict(action)
        if move.dst != "foundation":
            src, dst = PLACE_INDEX[move.src], PLACE_INDEX[move.dst]
            planned.append(search_move(solver_game.board, src, dst, move.count))
        solver_game.play(move)
    game, actions = Game(SHORT), []
    for decision in planned:
        while True:
            try:
                move = engine_move(game.board, decision)
                game.check(move)
                break
            except (StopIteration, IllegalMoveError):  # a card home first
                move = next(m for m in reversed(game.legal_moves()) if m.dst == "foundation")
                game.play(move)
                actions.append(move.to_dict())
        game.play(move)
        actions.append(move.to_dict())
    while not game.board.won:
        move = next(m for m in reversed(game.legal_moves()) if m.dst == "foundation")
        game.play(move)
        actions.append(move.to_dict())
    assert actions != line
    found = _measure(_record(SHORT, actions))
    assert (found.decisions, found.on_line, found.longest_run) == (16, 16, 16)


def test_a_detour_taken_back_is_off_the_line_and_an_undo_no_decision() -> None:
    line = solve(SHORT, budget=30).actions
    game = Game(SHORT)
    for action in line[:10]:
        game.play(action)
    on_line = Move.from_dict(line[10])
    assert on_line.dst != "foundation"
    detour = next(
        m
        for m in game.legal_moves()
        if m.dst != "foundation" and m != on_line and not game.board.is_pointless(m)
    )
    actions = [*line[:10], detour.to_dict(), {"undo": True}, *line[10:]]
    found = _measure(_record(SHORT, actions))
    assert (found.actions, found.undos, found.decisions) == (len(line) + 2, 1, 17)
    assert found.on_line == 16 and found.longest_run < 16


def test_a_copier_who_solves_again_after_a_detour_is_back_on_the_line() -> None:
    line = solve(CODE, budget=30).actions
    game = Game(CODE)
    for action in line[:20]:
        game.play(action)
    planned = Move.from_dict(line[20])
    detour = next(
        m
        for m in game.legal_moves()
        if m.dst != "foundation" and m != planned and not game.board.is_pointless(m)
    )
    game.play(detour)
    again = solve_board(game.board, budget=30)
    assert again.result == "won"
    found = _measure(_record(CODE, [*line[:20], detour.to_dict(), *again.actions]))
    assert found.undos == 0
    assert found.on_line == found.decisions - 1  # the detour alone is off the line


def test_a_human_like_planner_is_off_the_line_most_of_the_time() -> None:
    for code, on_line, made, run in ((SHORT, 3, 14, 1), (CODE, 19, 41, 6)):
        record = play_offline(Planner(HumanPace(0), 0), code)
        assert Game.from_record(record).board.won
        found = _measure(record)
        assert (found.on_line, found.decisions, found.longest_run) == (on_line, made, run)
        assert found.hard_pause_ms is not None and found.easy_pause_ms is not None


def test_a_copier_with_a_quarter_of_detours_is_measured_so() -> None:
    record = play_offline(Copier(Jitter(600, 900, 3), 3, detours=0.25), SHORT)
    found = _measure(record)
    assert (found.undos, found.decisions, found.on_line, found.longest_run) == (2, 23, 18, 8)


def test_pauses_before_hard_and_easy_decisions() -> None:
    line = solve(SHORT, budget=30).actions
    judged = decisions(_record(SHORT, line), budget=None)
    hard = {d.index for d in judged if d.hard}
    assert [d.index for d in judged] == [i for i, a in enumerate(line) if a["dst"] != "foundation"]
    assert len(hard) == 3 and all(d.on_line for d in judged)
    # A second before each decision the solver found hard, 300 ms before the rest.
    gaps = [1000 if i in hard else 300 for i in range(len(line))]
    found = _measure(_record(SHORT, line, gaps))
    assert (found.hard, found.easy) == (3, 13)
    assert (found.hard_pause_ms, found.easy_pause_ms) == (1000, 300)


def test_a_budget_too_small_leaves_decisions_unmeasured_and_off_the_line() -> None:
    line = solve(CODE, budget=30).actions
    found = measure_line(_record(CODE, line), max_positions=10, budget=None)
    assert found.unmeasured == found.decisions == 42
    assert found.on_line == found.longest_run == 0


def test_a_record_that_does_not_replay_is_refused() -> None:
    with pytest.raises(RecordError):
        measure_line({"code": SHORT, "actions": [{"src": "cell1", "dst": "col1"}]})


def test_the_measure_reads_as_the_race_keeps_it() -> None:
    found = _measure(_record(SHORT, solve(SHORT, budget=30).actions))
    signal = LineSignal.from_dict(found.to_dict())
    assert signal.to_dict() == found.to_dict()
    assert signal.share == 1.0
