"""The ``boulanger`` command line: ``deal``, ``replay``, and the data of ``serve`` and ``backup``.

``replay`` is checked against games won by an independent solver, Freecell
Solver (``fc-solve``, Debian package freecell-solver-bin): its solution is
converted to our record format, and every position it prints along the way
is compared with ours.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from boulanger.engine import Board, Card, Game, GameCode, Suit

FC_SOLVE = shutil.which("fc-solve")
needs_fc_solve = pytest.mark.skipif(
    FC_SOLVE is None,
    reason="fc-solve is not installed (Debian package freecell-solver-bin; CI installs it)",
)


def boulanger(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boulanger", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- deal ----------------------------------------------------------------------

DEAL_860 = [
    ["TS", "2H", "AS", "5S", "QC", "7S", "2D"],
    ["4C", "AH", "4S", "TD", "TC", "7D", "4H"],
    ["9D", "7C", "8D", "5H", "KS", "QS", "3H"],
    ["JD", "9S", "6S", "8C", "JH", "8S", "6C"],
    ["4D", "2S", "JS", "7H", "KD", "KH"],
    ["2C", "9H", "KC", "3D", "AC", "5C"],
    ["QD", "AD", "8H", "3C", "5D", "6D"],
    ["6H", "TH", "JC", "9C", "QH", "3S"],
]


def test_deal_json() -> None:
    result = boulanger("deal", "BK1-C4-AAAAA24", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "code": "BK1-C4-AAAAA24",
        "deal": 860,
        "cells": 4,
        "columns": DEAL_860,
    }


def test_deal_json_canonical_code_from_lower_case() -> None:
    result = boulanger("deal", "  bk1-c2-aaaaaab ", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["code"] == "BK1-C2-AAAAAAB"
    assert (data["deal"], data["cells"]) == (1, 2)
    assert data["columns"][0] == ["JD", "KD", "2S", "4C", "3S", "6D", "6S"]
    assert [col[0] for col in data["columns"]] == ["JD", "2D", "9H", "JC", "5D", "7H", "7C", "5H"]


def test_deal_text() -> None:
    result = boulanger("deal", "BK1-C4-AAAAA24")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "BK1-C4-AAAAA24  (deal 860, 4 cells)"
    board_text = result.stdout.split("\n", 1)[1]
    assert board_text == Board.deal(GameCode(860)).text()


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("BK1-C3-AAAAA24", "cell part 'C3': expected C4, C2 or C1"),
        ("BK2-C4-AAAAA24", "unknown prefix 'BK2'"),
        ("BK1-C4-AAAAAAA", "names deal 0"),
        ("BK1-C4-AAAAA2", "6 deal characters"),
        ("BK1-C4-AAAAA21", "'1' in its deal number"),
        ("nonsense", "is not a game code"),
    ],
)
def test_deal_bad_code_exits_2_with_the_reason(code: str, reason: str) -> None:
    result = boulanger("deal", code, "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    assert reason in result.stderr
    assert result.stderr.startswith("boulanger deal: ")


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("boulanger")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable}")
    result = subprocess.run(
        [str(script), "deal", "BK1-C4-AAAAA24", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["columns"] == DEAL_860


# -- replay: records that break ------------------------------------------------


def write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "record.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_replay_illegal_action_exits_1_naming_its_index(tmp_path: Path) -> None:
    record = {
        "code": "BK1-C4-AAAAA24",
        "actions": [
            {"src": "col8", "dst": "cell1", "count": 1},
            {"src": "col6", "dst": "col4", "count": 1},
            {"undo": True},
            {"src": "col1", "dst": "col2", "count": 1},  # 2D on 4H
            {"src": "col7", "dst": "cell2", "count": 1},
        ],
    }
    result = boulanger("replay", write(tmp_path, record))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("boulanger replay: action 4: col1>col2: 2D does not go on 4H")


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"code": "BK1-C4-AAAAA24", "actions": [{"undo": True}]}, "action 1: nothing to undo"),
        ({"code": "BK1-C4-AAAAA24", "actions": [{"src": "col9", "dst": "cell1"}]}, "action 1:"),
        ({"code": "BK1-C3-AAAAA24", "actions": []}, "record: "),
        ({"actions": []}, "record: "),
        ([1, 2], "record: "),
        (
            {
                "code": "BK1-C4-AAAAA24",
                "actions": [
                    {"src": "col8", "dst": "cell1", "count": 1, "t": 900},
                    {"undo": True, "t": 850},
                ],
            },
            "action 2: t 850 goes back in time",
        ),
    ],
)
def test_replay_bad_records_exit_1(tmp_path: Path, record: Any, reason: str) -> None:
    result = boulanger("replay", write(tmp_path, record))
    assert result.returncode == 1
    assert reason in result.stderr


def test_replay_not_json_exits_1(tmp_path: Path) -> None:
    result = boulanger("replay", write(tmp_path, "{not json"))
    assert result.returncode == 1
    assert "not JSON" in result.stderr


def test_replay_missing_file_exits_2(tmp_path: Path) -> None:
    result = boulanger("replay", str(tmp_path / "absent.json"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr


def test_replay_unfinished_game_from_stdin() -> None:
    # Times ("t", from the server's records) are checked, otherwise ignored.
    record = {"code": "BK1-C4-AAAAA24", "actions": [{"src": "col8", "dst": "cell1", "t": 1500}]}
    result = boulanger("replay", "-", stdin=json.dumps(record))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "code": "BK1-C4-AAAAA24",
        "won": False,
        "status": "playing",
        "score": 0,
        "actions": 1,
        "foundation_cards": 0,
    }


# -- replay: games won by Freecell Solver ------------------------------------------

_RANKS = "0A23456789TJQK"
_SUIT_OF = {"H": Suit.HEARTS, "C": Suit.CLUBS, "D": Suit.DIAMONDS, "S": Suit.SPADES}
_MOVE = re.compile(
    r"Move (?:a card|(?P<count>\d+) cards) from (?P<src>stack|freecell) (?P<i>\d+) "
    r"to (?:the foundations|(?P<dst>stack|freecell) (?P<j>\d+))$"
)


@dataclass
class Solution:
    actions: list[dict[str, Any]]
    # Every position fc-solve prints: the start, then one after each move.
    states: list[tuple[list[list[str]], list[str | None], list[int]]]


def fc_solve_board(board: Board) -> str:
    """A board in fc-solve's input format: one line per column, bottom card first."""
    return "".join(" ".join(str(c) for c in col) + "\n" for col in board.columns)


def _place(kind: str, index: str) -> str:
    return f"col{int(index) + 1}" if kind == "stack" else f"cell{int(index) + 1}"


def parse_fc_solve(output: str, cells: int) -> Solution:
    """Moves and positions from ``fc-solve -p -t -sam`` output, in our terms."""
    actions: list[dict[str, Any]] = []
    states = []
    lines = output.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("Move"):
            match = _MOVE.match(line.strip())
            if match is None:
                raise AssertionError(f"unknown fc-solve move: {line!r}")
            src = _place(match["src"], match["i"])
            dst = "foundation" if match["dst"] is None else _place(match["dst"], match["j"])
            actions.append({"src": src, "dst": dst, "count": int(match["count"] or 1)})
        elif line.startswith("Foundations:"):
            foundations = [0, 0, 0, 0]
            for entry in line.split()[1:]:
                suit, rank = entry.split("-")
                foundations[_SUIT_OF[suit]] = _RANKS.index(rank)
            free = lines[n + 1]
            assert free.startswith("Freecells:")
            held = [free[10 + 4 * i : 14 + 4 * i].strip() or None for i in range(cells)]
            columns = [lines[n + 2 + i].removeprefix(":").split() for i in range(8)]
            states.append((columns, held, foundations))
    assert len(states) == len(actions) + 1
    return Solution(actions, states)


def try_solve(code: GameCode) -> Solution | None:
    """Have fc-solve win the deal (its default scan, then all move types); None if it cannot."""
    assert FC_SOLVE is not None
    board = fc_solve_board(Board.deal(code))
    for extra in ([], ["-to", "01ABCDE"]):
        command = [FC_SOLVE, "-g", "bakers_game", "--freecells-num", str(code.cells), *extra]
        result = subprocess.run(
            [*command, "-p", "-t", "-sam", "-sel", "-"],
            input=board,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        if "This game is solveable." in result.stdout:
            return parse_fc_solve(result.stdout, code.cells)
    return None


def solve(code: GameCode) -> Solution:
    solution = try_solve(code)
    assert solution is not None, f"fc-solve did not win {code}"
    return solution


def position(game: Game) -> tuple[list[list[str]], list[str | None], list[int]]:
    board = game.board
    return (
        [[str(c) for c in col] for col in board.columns],
        [None if c is None else str(c) for c in board.cells],
        list(board.foundations),
    )


# Deals fc-solve wins: the rules' example code, deal 1, and the first
# deals in 1.. that it wins with 2 cells and with 1 cell.
WON_CODES = [
    "BK1-C4-AAAAA24",
    "BK1-C4-AAAAAAB",
    "BK1-C4-AAAAAAC",
    "BK1-C2-AAAAAA5",
    "BK1-C1-AAAAALP",
]


def test_won_codes_are_what_the_comments_say() -> None:
    assert [GameCode.parse(c).deal for c in WON_CODES] == [860, 1, 2, 29, 367]
    assert [GameCode.parse(c).cells for c in WON_CODES] == [4, 4, 4, 2, 1]


@needs_fc_solve
@pytest.mark.parametrize("code", WON_CODES)
def test_fc_solve_solution_replays_position_by_position(code: str) -> None:
    game_code = GameCode.parse(code)
    solution = solve(game_code)
    game = Game(game_code)
    assert position(game) == solution.states[0]
    for n, action in enumerate(solution.actions, start=1):
        game.play(action)
        assert position(game) == solution.states[n], f"after action {n}: {action}"
    assert game.board.won
    cell_to_column = sum(
        1 for a in solution.actions if a["src"].startswith("cell") and a["dst"].startswith("col")
    )
    assert game.score == 520 + 5 * cell_to_column


@needs_fc_solve
def test_fc_solve_wins_of_deals_1_to_60_replay_position_by_position() -> None:
    won = 0
    for deal in range(1, 61):
        code = GameCode(deal)
        solution = try_solve(code)
        if solution is None:
            continue  # about one deal in four has no win (or none fc-solve finds)
        won += 1
        game = Game(code)
        for n, action in enumerate(solution.actions, start=1):
            game.play(action)
            assert position(game) == solution.states[n], f"deal {deal}, action {n}: {action}"
        assert game.board.won, f"deal {deal}"
    assert won >= 40


@needs_fc_solve
@pytest.mark.parametrize("code", WON_CODES)
def test_replay_accepts_a_game_won_by_fc_solve(tmp_path: Path, code: str) -> None:
    solution = solve(GameCode.parse(code))
    record = {"code": code, "actions": solution.actions}
    result = boulanger("replay", write(tmp_path, record))
    assert result.returncode == 0, result.stderr
    cell_to_column = sum(
        1 for a in solution.actions if a["src"].startswith("cell") and a["dst"].startswith("col")
    )
    assert json.loads(result.stdout) == {
        "code": code,
        "won": True,
        "status": "won",
        "score": 520 + 5 * cell_to_column,
        "actions": len(solution.actions),
        "foundation_cards": 52,
    }


@needs_fc_solve
def test_fc_solve_group_moves_are_used_and_accepted() -> None:
    # The solutions include group moves; they replay above, so our capacity
    # accepts every group move fc-solve makes.
    counts = [a["count"] for code in WON_CODES for a in solve(GameCode.parse(code)).actions]
    assert max(counts) >= 3


@needs_fc_solve
def test_replay_of_a_won_game_with_undone_detours(tmp_path: Path) -> None:
    # Every 10th move is played, undone and played again: same win, same score.
    code = "BK1-C4-AAAAAAB"
    solution = solve(GameCode.parse(code))
    actions: list[dict[str, Any]] = []
    for n, action in enumerate(solution.actions):
        actions.append(action)
        if n % 10 == 0:
            actions += [{"undo": True}, action]
    result = boulanger("replay", "-", stdin=json.dumps({"code": code, "actions": actions}))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    cell_to_column = sum(
        1 for a in solution.actions if a["src"].startswith("cell") and a["dst"].startswith("col")
    )
    assert summary["won"] is True
    assert summary["score"] == 520 + 5 * cell_to_column
    assert summary["actions"] == len(actions)


def test_card_suits_parse_like_fc_solve() -> None:
    # fc-solve prints foundations as H-0 C-A D-0 S-0: the suit letters map to ours.
    assert {k: Card.of(1, v) for k, v in _SUIT_OF.items()} == {
        "H": Card("AH"),
        "C": Card("AC"),
        "D": Card("AD"),
        "S": Card("AS"),
    }


def test_serve_trusts_forwarded_addresses_only_from_loopback_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from boulanger.cli import build_parser

    monkeypatch.delenv("BOULANGER_FORWARDED_ALLOW_IPS", raising=False)
    assert build_parser().parse_args(["serve"]).forwarded_allow_ips == "127.0.0.1"
    monkeypatch.setenv("BOULANGER_FORWARDED_ALLOW_IPS", "172.30.80.2")
    assert build_parser().parse_args(["serve"]).forwarded_allow_ips == "172.30.80.2"


# -- serve and backup: the data directory -----------------------------------------


def test_serve_refuses_a_data_dir_it_cannot_make(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    found = boulanger("serve", "--port", "0", "--data-dir", str(tmp_path / "a-file" / "data"))
    assert found.returncode == 1 and found.stderr.startswith("boulanger serve: ")
    refused = boulanger("serve", "--port", "0", "--broker", "sqlite:///b.db?synchronous=off")
    assert refused.returncode == 1 and "synchronous='off'" in refused.stderr


def test_backup_needs_a_database(tmp_path: Path) -> None:
    found = boulanger("backup", str(tmp_path / "copy.db"), "--data-dir", str(tmp_path))
    assert found.returncode == 1 and "no database at" in found.stderr
    assert not (tmp_path / "copy.db").exists()
    redis = boulanger("backup", str(tmp_path / "copy.db"), "--broker", "redis://127.0.0.1:1/0")
    assert redis.returncode == 1 and "bad SQLite URL" in redis.stderr
