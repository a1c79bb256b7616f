"""Move notation: places, the short form, the dict form."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from boulanger.engine import PLACE_NAMES, InvalidNotationError, Move, place_index
from boulanger.engine.moves import LONGEST_RUN, MOVES, STEPS, move_of


def test_place_names_and_indices() -> None:
    expected = (*(f"col{i}" for i in range(1, 9)), "cell1", "cell2", "cell3", "cell4", "foundation")
    assert expected == PLACE_NAMES
    assert [place_index(name) for name in PLACE_NAMES] == list(range(13))


@pytest.mark.parametrize(
    ("cells", "allowed"),
    [(4, ["cell1", "cell2", "cell3", "cell4"]), (2, ["cell1", "cell2"]), (1, ["cell1"])],
)
def test_removed_cells_do_not_exist(cells: int, allowed: list[str]) -> None:
    for name in ("cell1", "cell2", "cell3", "cell4"):
        if name in allowed:
            assert place_index(name, cells) == 7 + int(name[4:])
        else:
            with pytest.raises(InvalidNotationError, match=f"{name!r} is not a place"):
                place_index(name, cells)


@pytest.mark.parametrize(
    "name", ["col0", "col9", "cell0", "cell5", "Col1", "COL1", "foundations", "home", "", None, 3]
)
def test_unknown_places(name: Any) -> None:
    with pytest.raises(InvalidNotationError, match="is not a place"):
        place_index(name)


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("col3>cell1", Move("col3", "cell1")),
        ("col2>col5*3", Move("col2", "col5", 3)),
        ("cell4>foundation", Move("cell4", "foundation")),
        ("  col1 > col8 * 12 ", Move("col1", "col8", 12)),
        ("col1>col2*1", Move("col1", "col2")),
        ("col1>col2*01", Move("col1", "col2")),
    ],
)
def test_parse_short_form(text: str, move: Move) -> None:
    assert Move.parse(text) == move


@pytest.mark.parametrize(
    ("move", "text"),
    [
        (Move("col3", "cell1"), "col3>cell1"),
        (Move("col2", "col5", 3), "col2>col5*3"),
        (Move("cell1", "foundation", 1), "cell1>foundation"),
    ],
)
def test_str_is_the_short_form_and_round_trips(move: Move, text: str) -> None:
    assert str(move) == text
    assert Move.parse(str(move)) == move


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("col3 cell1", "expected src>dst"),
        ("col3-cell1", "expected src>dst"),
        ("", "expected src>dst"),
        ("col3>cell1*x", "count that is not a number"),
        ("col3>cell1*", "count that is not a number"),
        ("col3>cell1*-1", "count that is not a number"),
        ("col3>cell1*1.5", "count that is not a number"),
        ("col2>col5*٣", "count that is not a number"),  # Arabic-Indic digit three
        ("col2>col5*²", "count that is not a number"),  # superscript two
        ("col3>cell1*0", "must be a whole number 1..52"),
        ("col3>cell1*53", "must be a whole number 1..52"),
        ("col9>cell1", "move src 'col9' is not a place"),
        ("col1>cell5", "move dst 'cell5' is not a place"),
        ("col1>foundations", "move dst 'foundations' is not a place"),
        ("col1>>col2", "move dst '>col2' is not a place"),
    ],
)
def test_bad_short_forms(text: str, reason: str) -> None:
    with pytest.raises(InvalidNotationError, match=reason.replace("*", r"\*")):
        Move.parse(text)


def test_parse_refuses_non_strings() -> None:
    with pytest.raises(InvalidNotationError, match="must be a string"):
        Move.parse(None)  # type: ignore[arg-type]


def test_dict_form_round_trips() -> None:
    move = Move("col2", "col5", 3)
    assert move.to_dict() == {"src": "col2", "dst": "col5", "count": 3}
    assert Move.from_dict(move.to_dict()) == move
    assert Move.from_dict({"src": "col1", "dst": "cell1"}) == Move("col1", "cell1", 1)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "must be an object"),
        ("col1>cell1", "must be an object"),
        ({"src": "col1", "dst": "cell1", "n": 1}, r"unknown fields \['n'\]"),
        ({"dst": "cell1"}, "src None is not a place"),
        ({"src": "col1"}, "dst None is not a place"),
        ({"src": 1, "dst": "cell1"}, "src 1 is not a place"),
        ({"src": "col1", "dst": "cell9"}, "dst 'cell9' is not a place"),
        ({"src": "col1", "dst": "cell1", "count": "2"}, "count '2' must be"),
        ({"src": "col1", "dst": "cell1", "count": 2.0}, "count 2.0 must be"),
        ({"src": "col1", "dst": "cell1", "count": True}, "count True must be"),
        ({"src": "col1", "dst": "cell1", "count": 0}, "count 0 must be"),
        ({"src": "col1", "dst": "cell1", "count": 53}, "count 53 must be"),
        ({"src": "col1", "dst": "cell1", "count": None}, "count None must be"),
    ],
)
def test_bad_dict_forms(data: Any, reason: str) -> None:
    with pytest.raises(InvalidNotationError, match=reason):
        Move.from_dict(data)


def test_move_is_a_named_tuple_with_count_default_1() -> None:
    move = Move("col1", "foundation")
    assert move.count == 1
    assert move == ("col1", "foundation", 1)
    assert tuple(move) == ("col1", "foundation", 1)
    assert repr(move) == "Move(src='col1', dst='foundation', count=1)"


def test_steps_and_moves_name_the_same_moves() -> None:
    # The engine's tables: STEPS holds indexes, MOVES the names of the same move.
    for src, dst in itertools.product(range(len(PLACE_NAMES)), repeat=2):
        for count in range(1, LONGEST_RUN + 1):
            step = STEPS[src][dst][count - 1]
            move = move_of(*step)
            assert step == (src, dst, count)
            assert move is MOVES[src][dst][count - 1]
            assert move == Move(PLACE_NAMES[src], PLACE_NAMES[dst], count)
            assert (place_index(move.src), place_index(move.dst), move.count) == step
            # Parsing hands out the same shared value.
            assert Move.from_dict(move.to_dict()) is move
    assert move_of(0, 1, 14) == Move("col1", "col2", 14)
