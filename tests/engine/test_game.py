"""A game: score, undo and its limit, tap and double tap, status, records."""

from __future__ import annotations

import re
from typing import Any

import pytest

from boulanger.engine import (
    UNDO_LIMIT,
    Board,
    Card,
    Game,
    GameCode,
    GameRecord,
    IllegalMoveError,
    InvalidNotationError,
    Move,
    NoDestinationError,
    NothingToUndoError,
    RecordError,
    Status,
    Suit,
    move_points,
)
from boulanger.engine.moves import PLACE_INDEX

from .helpers import board_text, game_on

# -- score -----------------------------------------------------------------

# cell1 AH and col3 2D can go to the foundation; cell2 4S goes on col1's 5S;
# col8 is empty; cell4 is free.
SCORE_BOARD = board_text(
    {1: "KH 5S", 2: "6S", 3: "2D", 4: "9C 8C 7C", 5: "TC"},
    ["AH", "4S", "QD", None],
    {Suit.DIAMONDS: 1},
    empty={8},
)


@pytest.mark.parametrize(
    ("move", "points"),
    [
        ("col3>foundation", 10),  # column to foundation
        ("cell1>foundation", 10),  # cell to foundation
        ("cell2>col1", 5),  # cell to an occupied column
        ("cell3>col8", 5),  # cell to an empty column
        ("col1>col2", 0),  # column to column
        ("col4>col5*3", 0),  # group move column to column
        ("col2>col8", 0),  # column to empty column
        ("col4>col8*2", 0),  # group move to an empty column
        ("col2>cell4", 0),  # column to cell
        ("cell1>cell4", 0),  # cell to cell
    ],
)
def test_each_score_rule_and_its_undo(move: str, points: int) -> None:
    game = game_on(SCORE_BOARD)
    game.score = 100  # any starting score
    parsed = Move.parse(move)
    assert move_points(PLACE_INDEX[parsed.src], PLACE_INDEX[parsed.dst]) == points
    assert game.play(move) == points
    assert game.score == 100 + points
    assert game.undo() == parsed
    assert game.score == 100
    assert game.board.text() == SCORE_BOARD


def test_move_points_table() -> None:
    for src in range(13):
        for dst in range(13):
            expected = 10 if dst == 12 else 5 if 8 <= src < 12 and dst < 8 else 0
            assert move_points(src, dst) == expected


def test_score_adds_up_and_undo_removes_exactly_each_moves_points() -> None:
    game = game_on(SCORE_BOARD)
    plays = ["col3>foundation", "cell2>col1", "cell1>foundation", "col2>cell1", "cell3>col8"]
    scores = []
    for move in plays:
        game.play(move)
        scores.append(game.score)
    assert scores == [10, 15, 25, 25, 30]
    for expected in reversed([0, *scores[:-1]]):
        game.undo()
        assert game.score == expected
    assert game.board.text() == SCORE_BOARD


def test_score_floor_is_zero() -> None:
    # Through play and undo alone the score is the sum of the points of the
    # moves still on the board, so it never drops below zero; the floor
    # still holds when the score was set lower (e.g. a restored game).
    game = game_on(SCORE_BOARD)
    game.play("col3>foundation")
    game.score = 3
    game.undo()
    assert game.score == 0


# -- undo ------------------------------------------------------------------


def shuttle_game() -> Game:
    """col8 holds a single card: col8>cell1 then cell1>col8 can repeat forever."""
    return game_on(board_text({8: "7H"}, [None, None, None, None]))


def test_undo_on_a_new_game() -> None:
    game = Game("BK1-C4-AAAAA24")
    with pytest.raises(NothingToUndoError, match="nothing to undo"):
        game.undo()
    assert game.undo_depth == 0 and game.can_undo is False


def test_undo_depth_counts_what_can_be_undone() -> None:
    game = shuttle_game()
    for depth in range(1, 4):
        game.play("col8>cell1" if depth % 2 else "cell1>col8")
        assert game.undo_depth == depth and game.can_undo is True
    assert game.undo() == Move("col8", "cell1")
    assert game.undo_depth == 2


def test_undo_limit_is_100_actions() -> None:
    game = shuttle_game()
    start = game.board.text()
    for i in range(150):
        points = game.play("col8>cell1" if i % 2 == 0 else "cell1>col8")
        assert points == (0 if i % 2 == 0 else 5)
    assert game.score == 75 * 5
    assert game.undo_depth == UNDO_LIMIT == 100
    for _ in range(100):
        game.undo()
    assert game.undo_depth == 0
    assert game.score == 25 * 5  # the 50 moves that can no longer be undone
    assert game.board.text() == start
    with pytest.raises(NothingToUndoError, match="only the last 100 actions can be undone"):
        game.undo()  # the 101st undo
    assert game.score == 125
    assert game.actions == 250
    # Playing again makes undo possible again.
    game.play("col8>cell1")
    game.undo()
    assert game.board.text() == start


def test_a_group_move_is_one_action() -> None:
    game = game_on(board_text({1: "KS QS JS", 8: "7H"}, [None, None, None, None], empty={2}))
    start = game.board.text()
    game.play("col1>col2*3")
    assert game.actions == 1
    for i in range(99):
        game.play("col8>cell1" if i % 2 == 0 else "cell1>col8")
    assert game.undo_depth == 100
    for _ in range(100):
        game.undo()
    assert game.board.text() == start  # the group move came back in one undo
    assert game.score == 0
    with pytest.raises(NothingToUndoError):
        game.undo()


def test_group_move_beyond_the_limit_cannot_be_undone() -> None:
    game = game_on(board_text({1: "KS QS JS", 8: "7H"}, [None, None, None, None], empty={2}))
    game.play("col1>col2*3")
    for i in range(100):
        game.play("col8>cell1" if i % 2 == 0 else "cell1>col8")
    for _ in range(100):
        game.undo()
    with pytest.raises(NothingToUndoError):
        game.undo()
    assert [str(c) for c in game.board.columns[1]] == ["KS", "QS", "JS"]


def test_undo_returns_the_move_and_records_an_action() -> None:
    game = Game("BK1-C4-AAAAAAB")
    game.play("col6>cell1")
    assert game.undo() == Move("col6", "cell1")
    assert game.history == [Move("col6", "cell1"), None]
    assert game.actions == 2
    assert game.board == Board.deal(GameCode(1))


def test_undo_takes_a_card_back_from_the_foundation() -> None:
    game = game_on(SCORE_BOARD)
    game.play("col3>foundation")
    assert game.board.foundations[Suit.DIAMONDS] == 2
    game.undo()
    assert game.board.foundations[Suit.DIAMONDS] == 1
    assert game.board.columns[2][-1] == Card("2D")


# -- play input forms ------------------------------------------------------


@pytest.mark.parametrize(
    "move",
    [Move("col6", "cell1"), "col6>cell1", {"src": "col6", "dst": "cell1", "count": 1}],
)
def test_play_accepts_move_string_or_dict(move: Any) -> None:
    game = Game("BK1-C4-AAAAAAB")
    assert game.play(move) == 0
    assert game.board.cells[0] == Card("3D")
    assert game.history == [Move("col6", "cell1")]


def test_removed_cells_cannot_be_used() -> None:
    game = Game("BK1-C2-AAAAAAB")
    with pytest.raises(
        InvalidNotationError,
        match=re.escape("'cell3' is not a place: use col1..col8, cell1..cell2"),
    ):
        game.play("col1>cell3")
    game1 = Game("BK1-C1-AAAAAAB")
    with pytest.raises(
        InvalidNotationError, match=re.escape("use col1..col8, cell1 or foundation")
    ):
        game1.play("col1>cell2")
    assert game.actions == game1.actions == 0


# -- tap -------------------------------------------------------------------


def test_tap_sends_a_top_card_to_its_foundation() -> None:
    game = game_on(SCORE_BOARD)
    assert game.tap("2d") == Move("col3", "foundation")
    assert game.score == 10
    assert game.tap(Card("AH")) == Move("cell1", "foundation")  # a cell card
    assert game.score == 20


@pytest.mark.parametrize(
    ("card", "error", "reason"),
    [
        ("5S", NoDestinationError, "5S cannot go to the foundation now"),  # top card, not next
        ("QD", NoDestinationError, "QD cannot go to the foundation now"),  # cell card, not next
        ("KH", NoDestinationError, "KH cannot go to the foundation now"),  # covered
        ("AD", IllegalMoveError, "AD is on its foundation"),
        ("ZZ", InvalidNotationError, "'ZZ' is not a card"),
    ],
)
def test_tap_that_does_nothing(card: str, error: type[Exception], reason: str) -> None:
    game = game_on(SCORE_BOARD)
    with pytest.raises(error, match=reason):
        game.tap(card)
    assert game.board.text() == SCORE_BOARD
    assert game.actions == 0 and game.score == 0


def test_tap_on_a_covered_card_that_fits_the_foundation() -> None:
    game = game_on(board_text({1: "AS 5H"}))
    with pytest.raises(NoDestinationError):
        game.tap("AS")
    assert game.tap_move("AS") is None


# -- double tap --------------------------------------------------------------


def double_tap(text: str, card: str) -> tuple[Move, Game]:
    game = game_on(text)
    move = game.double_tap(card)
    assert game.history == [move]
    return move, game


def test_double_tap_prefers_the_foundation() -> None:
    # 2H could also go on 3H (col2), into the empty col8 or a cell.
    text = board_text({1: "2H", 2: "3H"}, foundations={Suit.HEARTS: 1}, empty={8})
    move, game = double_tap(text, "2H")
    assert move == Move("col1", "foundation")
    assert game.score == 10


def test_double_tap_then_the_column_that_accepts_it() -> None:
    # 7C can go on 8C (col5) or into the empty col2 (left of col5) or a cell.
    text = board_text({1: "7C", 5: "KD 8C"}, empty={2})
    move, _ = double_tap(text, "7C")
    assert move == Move("col1", "col5")


def test_double_tap_accepting_column_even_when_shorter() -> None:
    # Only one column can accept a card (the same suit, one higher), so the
    # "longest accepting column" is that column, whatever its length.
    text = board_text({1: "7C", 5: "8C"}, empty={2})
    game = game_on(text)
    assert len(game.board.columns[4]) < max(len(c) for c in game.board.columns)
    assert game.double_tap("7C") == Move("col1", "col5")


def test_double_tap_then_the_leftmost_empty_column() -> None:
    # 8C is covered: no column accepts 7C; col3 and col6 are empty.
    text = board_text({1: "7C", 2: "8C KD"}, empty={3, 6})
    move, _ = double_tap(text, "7C")
    assert move == Move("col1", "col3")


def test_double_tap_then_the_leftmost_free_cell() -> None:
    text = board_text({1: "7C", 2: "8C KD"}, ["AH", None, None, "2H"])
    move, game = double_tap(text, "7C")
    assert move == Move("col1", "cell2")
    assert game.board.cells == [Card("AH"), Card("7C"), None, Card("2H")]


def test_double_tap_with_no_destination() -> None:
    text = board_text({1: "7C", 2: "8C KD"}, ["AH", "3S", "QD", "2H"])
    game = game_on(text)
    with pytest.raises(NoDestinationError, match="7C has no destination"):
        game.double_tap("7C")
    assert game.board.text() == text
    assert game.actions == 0


def test_double_tap_moves_the_run_a_card_heads() -> None:
    text = board_text({1: "KH 9C 8C 7C", 5: "TC"}, empty={8})
    move, game = double_tap(text, "9C")
    assert move == Move("col1", "col5", 3)
    assert [str(c) for c in game.board.columns[4][-4:]] == ["TC", "9C", "8C", "7C"]


def test_double_tap_run_into_the_leftmost_empty_column() -> None:
    text = board_text({1: "KH 9C 8C 7C", 2: "TC JD"}, empty={4, 8})
    move, _ = double_tap(text, "8C")
    assert move == Move("col1", "col4", 2)


def test_double_tap_moves_a_whole_column_into_an_empty_one() -> None:
    # docs/protocol.md, double_tap: col1 is nothing but the run 9C 8C 7C and TC
    # is covered, so the only destination is the empty col5. The move is legal
    # and gains nothing; the server makes it (one action, no points).
    text = board_text({1: "9C 8C 7C", 2: "TC KD"}, empty={5})
    move, game = double_tap(text, "9C")
    assert move == Move("col1", "col5", 3)
    assert (game.actions, game.score) == (1, 0)
    assert not game.board.columns[0]


def test_double_tap_run_too_big_for_any_destination() -> None:
    # 0 free cells and 1 empty column: 2 cards onto a column, 1 into the empty one.
    text = board_text({1: "KH 9C 8C 7C", 5: "TC"}, ["AH", "2H", "3H", "4H"], empty={8})
    game = game_on(text)
    with pytest.raises(NoDestinationError, match="9C has no destination"):
        game.double_tap("9C")
    with pytest.raises(NoDestinationError, match="8C has no destination"):
        game.double_tap("8C")
    assert game.double_tap("7C") == Move("col1", "col8")


def test_double_tap_run_too_big_falls_back_to_the_empty_column_when_it_fits() -> None:
    # 1 free cell, 1 empty column: 4 onto a column, 2 into the empty column.
    text = board_text({1: "KH 9C 8C 7C", 2: "QC", 5: "TC"}, ["AH", "2H", "3H", None], empty={8})
    game = game_on(text)
    assert game.double_tap_move("9C") == Move("col1", "col5", 3)
    assert game.double_tap_move("8C") == Move("col1", "col8", 2)


def test_double_tap_on_a_covered_card_that_heads_no_run() -> None:
    text = board_text({1: "7C KD"}, empty={8})
    game = game_on(text)
    with pytest.raises(NoDestinationError, match="7C has no destination"):
        game.double_tap("7C")


def test_double_tap_on_a_cell_card() -> None:
    # Foundation first...
    text = board_text({2: "KD"}, ["2H", None, None, None], {Suit.HEARTS: 1}, empty={8})
    assert double_tap(text, "2H")[0] == Move("cell1", "foundation")
    # ...then the accepting column...
    text = board_text({2: "3H"}, ["2H", None, None, None], empty={8})
    assert double_tap(text, "2H")[0] == Move("cell1", "col2")
    # ...then the leftmost empty column...
    text = board_text({2: "3H KD"}, ["2H", None, None, None], empty={6, 8})
    move, game = double_tap(text, "2H")
    assert move == Move("cell1", "col6")
    assert game.score == 5
    # ...but never another cell.
    text = board_text({2: "3H KD"}, ["2H", None, None, None])
    with pytest.raises(NoDestinationError):
        game_on(text).double_tap("2H")


def test_double_tap_in_a_two_cell_game() -> None:
    text = board_text({1: "7C", 2: "8C KD"}, ["AH", None])
    move, _ = double_tap(text, "7C")
    assert move == Move("col1", "cell2")


# -- status ------------------------------------------------------------------


def test_new_game_is_playing() -> None:
    assert Game("BK1-C4-AAAAA24").status is Status.PLAYING


def test_status_values_are_the_wire_form() -> None:
    assert [status.value for status in Status] == ["playing", "won", "stuck", "dead_end"]
    for status in Status:
        assert status == status.value and str(status) == status.value
        assert Status(status.value) is status


def test_status_is_the_convenience_form_of_compute_status() -> None:
    game = Game("BK1-C4-AAAAA24")
    assert game.compute_status() is game.status is Status.PLAYING
    game.board = _tight_board(["7H", "8H", "QC", "QD", "5C", "5D", "5S", "JH"], "KS", "9C")
    assert game.compute_status() is game.status is Status.DEAD_END


def test_won_after_the_last_card() -> None:
    text = board_text(
        {1: "KS"}, foundations={Suit.HEARTS: 13, Suit.DIAMONDS: 13, Suit.CLUBS: 13, Suit.SPADES: 12}
    )
    game = game_on(text)
    assert game.status is Status.PLAYING
    game.tap("KS")
    assert game.status is Status.WON
    assert game.board.won and game.foundation_cards == 52
    game.undo()
    assert game.status is Status.PLAYING


def test_stuck_when_no_legal_move_is_left() -> None:
    # Full cells, no empty column, no ace on top, no top card one below another.
    tops = {i + 1: c for i, c in enumerate(["2C", "2D", "2H", "2S", "4C", "4D", "4H", "4S"])}
    text = board_text(tops, ["6C", "6D", "6H", "6S"])
    game = game_on(text)
    assert game.legal_moves() == []
    assert game.status is Status.STUCK


# -- records -------------------------------------------------------------------


def test_record_round_trip() -> None:
    game = Game("bk1-c2-aaaaa24")
    for move in ["col8>cell1", "col6>col4", "cell1>cell2"]:
        game.play(move)
    game.undo()
    record = game.record()
    assert record.to_dict() == {
        "code": "BK1-C2-AAAAA24",
        "actions": [
            {"src": "col8", "dst": "cell1", "count": 1},
            {"src": "col6", "dst": "col4", "count": 1},
            {"src": "cell1", "dst": "cell2", "count": 1},
            {"undo": True},
        ],
    }
    # Parse and format are a pair: the JSON form reads back as the same record.
    assert GameRecord.parse(record.to_dict()) == record
    timed = GameRecord(record.code, record.actions, (5, 900, 900, 4000))
    assert GameRecord.parse(timed.to_dict()) == timed
    assert timed.to_dict()["actions"][3] == {"undo": True, "t": 4000}
    assert timed.game().board.text() == game.board.text()
    again = Game.from_record(record)
    assert again.board == game.board
    assert again.score == game.score
    assert again.history == game.history
    assert again.code == game.code


@pytest.mark.parametrize(
    ("record", "index", "reason"),
    [
        (None, 0, "a record is"),
        ([], 0, "a record is"),
        ({"code": "BK1-C4-AAAAA24"}, 0, "a record is"),
        ({"code": "BK1-C4-AAAAA24", "actions": {}}, 0, "a record is"),
        ({"code": "BK1-C3-AAAAA24", "actions": []}, 0, "cell part 'C3'"),
        ({"code": None, "actions": []}, 0, "must be a string"),
        ({"actions": []}, 0, "must be a string"),
        ({"code": "BK1-C4-AAAAA24", "actions": [{"undo": True}]}, 1, "nothing to undo"),
        ({"code": "BK1-C4-AAAAA24", "actions": ["col8>cell1"]}, 1, "must be an object"),
        (
            {
                "code": "BK1-C4-AAAAA24",
                "actions": [{"src": "col8", "dst": "cell1"}, {"undo": False}],
            },
            2,
            "undo action must be exactly",
        ),
        (
            {"code": "BK1-C4-AAAAA24", "actions": [{"src": "col8", "dst": "cell1"}, {"undo": 1}]},
            2,
            "undo action must be exactly",
        ),
        (
            {
                "code": "BK1-C4-AAAAA24",
                "actions": [{"src": "col8", "dst": "cell1"}, {"undo": True, "x": 1}],
            },
            2,
            "undo action must be exactly",
        ),
        (
            {
                "code": "BK1-C4-AAAAA24",
                "actions": [
                    {"src": "col8", "dst": "cell1"},
                    {"src": "col7", "dst": "cell2"},
                    {"src": "col1", "dst": "col2"},
                ],
            },
            3,
            "col1>col2: 2D does not go on 4H",
        ),
        (
            {"code": "BK1-C2-AAAAA24", "actions": [{"src": "col8", "dst": "cell3"}]},
            1,
            "'cell3' is not a place",
        ),
    ],
)
def test_bad_records_name_the_action(record: Any, index: int, reason: str) -> None:
    with pytest.raises(RecordError) as info:
        Game.from_record(record)
    assert info.value.index == index
    assert reason in str(info.value)
    assert str(info.value).startswith(f"action {index}: " if index else "record: ")


def test_record_times_are_checked_and_otherwise_ignored() -> None:
    moves = [{"src": "col8", "dst": "cell1", "count": 1}, {"undo": True}]
    timed = [{**moves[0], "t": 0}, {"undo": True, "t": 0}]
    plain = Game.from_record({"code": "BK1-C4-AAAAA24", "actions": moves})
    again = Game.from_record({"code": "BK1-C4-AAAAA24", "actions": timed})
    assert again.history == plain.history and again.board == plain.board
    # Only some actions timed: the others are not checked.
    Game.from_record({"code": "BK1-C4-AAAAA24", "actions": [moves[0], {"undo": True, "t": 7}]})


@pytest.mark.parametrize(
    ("times", "index", "reason"),
    [
        ([5, 4], 2, "t 4 goes back in time (the action before it has t 5)"),
        ([-1, 4], 1, "t must be a whole number of ms from 0, not -1"),
        ([1.5, 4], 1, "not 1.5"),
        ([True, 4], 1, "not True"),
        (["3", 4], 1, "not '3'"),
        ([0, None], 2, "not None"),
    ],
)
def test_bad_record_times_name_the_action(times: list[Any], index: int, reason: str) -> None:
    actions = [
        {"src": "col8", "dst": "cell1", "count": 1, "t": times[0]},
        {"undo": True, "t": times[1]},
    ]
    with pytest.raises(RecordError) as info:
        Game.from_record({"code": "BK1-C4-AAAAA24", "actions": actions})
    assert info.value.index == index
    assert reason in str(info.value)


def test_repr() -> None:
    game = Game("BK1-C4-AAAAA24")
    game.play("col8>cell1")
    assert repr(game) == "<Game BK1-C4-AAAAA24 actions=1 score=0>"


def _tight_board(tops: list[str], cell: str, under_first: str) -> Board:
    """A 1-cell board with these column tops; the other cards buried beneath."""
    from boulanger.engine import ALL_CARDS

    placed = {*tops, cell, under_first}
    rest = [str(c) for c in ALL_CARDS if str(c) not in placed]
    columns: list[list[str]] = [[] for _ in range(8)]
    for i, card in enumerate(rest):
        columns[i % 8].append(card)
    columns[0].append(under_first)
    for col, top in zip(columns, tops, strict=True):
        col.append(top)
    lines = ["foundations: -- -- -- --", f"cells: {cell}"]
    lines += [f"col{i + 1}: " + " ".join(col) for i, col in enumerate(columns)]
    return Board.from_text("\n".join(lines))


def test_dead_end_when_no_sequence_of_moves_reaches_a_foundation() -> None:
    # Tops 7H 8H QC QD 5C 5D 5S JH, KS in the only cell: the one legal move
    # is 7H onto 8H, which uncovers 9C, which goes nowhere.
    board = _tight_board(["7H", "8H", "QC", "QD", "5C", "5D", "5S", "JH"], "KS", "9C")
    game = Game("BK1-C1-AAAAAAB")
    game.board = board
    assert board.legal_moves() == [Move("col1", "col2")]
    assert board.foundation_reachable() is False
    assert game.status is Status.DEAD_END


def test_a_tight_board_with_a_way_out_is_still_playing() -> None:
    # Same, but the uncovered card is an ace: a foundation move is reachable.
    board = _tight_board(["7H", "8H", "QC", "QD", "5C", "5D", "5S", "JH"], "KS", "AC")
    game = Game("BK1-C1-AAAAAAB")
    game.board = board
    assert board.foundation_reachable() is True
    assert game.status is Status.PLAYING
