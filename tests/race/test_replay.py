"""Records played back: readable lines and the frames of the replay viewer."""

from __future__ import annotations

import pytest

from boulanger.engine import Game, RecordError
from boulanger.race.replay import card_text, play_back, review_lines, text_lines
from boulanger.solver import solve
from boulanger.solver.review import review_record

CODE = "BK1-C4-AAAAAAB"  # deal 1


@pytest.fixture(scope="module")
def line() -> list[dict]:
    return solve(CODE, budget=30).actions


def test_cards_read_as_people_write_them() -> None:
    game = Game(CODE)
    top = game.board.columns[0][-1]
    assert card_text(top) == "6♠"
    assert card_text(game.board.columns[2][-1]) == "2♥"
    assert card_text(game.board.columns[7][-1]) == "10♣"


def test_one_line_per_action_with_its_time_group_moves_and_undos(line: list[dict]) -> None:
    group = next(i for i, m in enumerate(line) if m["count"] > 1)
    home = next(i for i, m in enumerate(line) if m["dst"] == "foundation")
    upto = max(group, home) + 1
    actions = [{**m, "t": 1000 * (i + 1) + 240} for i, m in enumerate(line[:upto])]
    actions.append({"undo": True, "t": 1000 * (upto + 1)})
    lines = text_lines({"code": CODE, "actions": actions})
    assert len(lines) == len(actions)
    assert lines[0] == "1.2s 8♣ col7 → col2"
    assert lines[home].startswith(f"{home + 1}.2s A")
    assert lines[home].endswith(" → foundation")
    # A group move names its highest and lowest card.
    assert "–" in lines[group] and f"{line[group]['src']} → {line[group]['dst']}" in lines[group]
    # An undo names the move it takes back, the way the cards go back.
    last = line[upto - 1]
    assert lines[-1].startswith(f"{upto + 1}.0s undo ")
    assert lines[-1].endswith(f"{last['dst']} → {last['src']}")


def test_an_undone_foundation_move_reads_from_the_foundation(line: list[dict]) -> None:
    home = next(i for i, m in enumerate(line) if m["dst"] == "foundation")
    actions = [*line[: home + 1], {"undo": True}]
    lines = text_lines({"code": CODE, "actions": actions})
    # No t in the record: no time in the line.
    card = lines[home].split(" ")[0]
    assert lines[-1] == f"undo {card} foundation → {line[home]['src']}"


def test_frames_show_the_game_after_each_action(line: list[dict]) -> None:
    actions = [{**m, "t": 500 * (i + 1)} for i, m in enumerate(line)]
    frames = play_back({"code": CODE, "actions": actions})
    assert len(frames) == len(line) + 1
    assert frames[0] == {**frames[0], "action": 0, "t": 0, "line": None, "score": 0}
    assert frames[-1]["foundation_cards"] == 52 and frames[-1]["t"] == 500 * len(line)
    game = Game(CODE)
    for frame, move in zip(frames[1:], line, strict=True):
        game.play(move)
        assert frame["score"] == game.score
        assert frame["foundation_cards"] == game.foundation_cards
    assert frames[-1]["board"]["foundations"] == {"S": 13, "H": 13, "D": 13, "C": 13}


def test_a_bad_record_is_refused_with_the_action_it_fails_at() -> None:
    with pytest.raises(RecordError, match="action 2"):
        play_back({"code": CODE, "actions": [{"src": "col1", "dst": "cell1"}, {"undo": 1}]})


def test_a_review_gets_its_lines(line: list[dict]) -> None:
    record = {"code": CODE, "actions": line[:10]}
    review = review_lines(record, review_record(record, budget=30).to_dict())
    assert review["finding"] == "winnable_at_end"
    assert len(review["continuation_lines"]) == len(review["continuation"])
    assert all(" → " in text for text in review["continuation_lines"])
