"""The board: text form, group capacity, move checking, legal move generation."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest

from boulanger.engine import (
    PLACE_NAMES,
    Board,
    Card,
    GameCode,
    IllegalMoveError,
    InvalidNotationError,
    Move,
    Suit,
    group_capacity,
)
from boulanger.engine.board import CAPACITY
from boulanger.engine.moves import FIRST_CELL, FOUNDATION, PLACE_INDEX, move_of

from .helpers import board_text, card_count, game_on, make_board

# RULES.md's table, verbatim.
RULES_TABLE = """\
| empty cells | to occupied column, 0 empty cols | 1 empty col | 2 empty cols | to an empty column, 1 empty in all | 2 empty in all |
|---|---|---|---|---|---|
| 0 | 1 | 2 | 4 | 1 | 2 |
| 1 | 2 | 4 | 8 | 2 | 4 |
| 2 | 3 | 6 | 12 | 3 | 6 |
| 3 | 4 | 8 | 16 | 4 | 8 |
| 4 | 5 | 10 | 20 | 5 | 10 |
"""

# What each table column means: (target is an empty column, empty columns in all).
_TABLE_COLUMNS = [(False, 0), (False, 1), (False, 2), (True, 1), (True, 2)]


def _table() -> list[tuple[int, bool, int, int]]:
    rows = RULES_TABLE.splitlines()[2:]
    entries = []
    for row in rows:
        free, *caps = (int(x) for x in row.strip("|").split("|"))
        for (to_empty, empty_cols), cap in zip(_TABLE_COLUMNS, caps, strict=True):
            entries.append((free, to_empty, empty_cols, cap))
    return entries


TABLE = _table()


def test_table_has_25_entries() -> None:
    assert len(TABLE) == 25


@pytest.mark.parametrize(("free", "to_empty", "empty_cols", "cap"), TABLE)
def test_group_capacity_function_matches_the_table(
    free: int, to_empty: bool, empty_cols: int, cap: int
) -> None:
    # The target column, when empty, does not count among the empty columns.
    assert group_capacity(free, empty_cols - 1 if to_empty else empty_cols) == cap
    assert CAPACITY[free][empty_cols - 1 if to_empty else empty_cols] == cap


def test_capacity_lookup_is_the_formula() -> None:
    assert [len(row) for row in CAPACITY] == [9] * 5  # 0..4 free cells, 0..8 empty columns
    for free, row in enumerate(CAPACITY):
        assert list(row) == [group_capacity(free, empty) for empty in range(9)]


def capacity_board(free: int, to_empty: bool, empty_cols: int, run: int, game_cells: int) -> Board:
    """A board with a spade run of ``run`` cards on col1 and the table's situation.

    Occupied target: the run is QS down, col2 is KS. Empty target: the run is
    KS down and col8 is the target. Empty columns are the last ones.
    """
    top_rank = 13 if to_empty else 12
    run_cards = " ".join(str(Card.of(r, Suit.SPADES)) for r in range(top_rank, top_rank - run, -1))
    columns = {1: run_cards}
    if not to_empty:
        columns[2] = "KS"
    cells: list[str | None] = [None] * game_cells
    for i, name in enumerate(("AH", "2H", "3H", "4H")[: game_cells - free]):
        cells[i] = name
    empty = set(range(9 - empty_cols, 9))
    return make_board(columns, cells, empty=empty)


def _cases() -> list[tuple[int, bool, int, int, int]]:
    cases = []
    for free, to_empty, empty_cols, cap in TABLE:
        for game_cells in (4, 2, 1):
            if free <= game_cells:
                cases.append((free, to_empty, empty_cols, cap, game_cells))
    return cases


@pytest.mark.parametrize(("free", "to_empty", "empty_cols", "cap", "game_cells"), _cases())
def test_table_on_real_boards(
    free: int, to_empty: bool, empty_cols: int, cap: int, game_cells: int
) -> None:
    longest = 13 if to_empty else 12  # a same-suit run is at most K..A, or Q..A onto K
    dst = 7 if to_empty else 1  # col8 or col2
    move_name = PLACE_NAMES[dst]

    # cap + 1 is refused (when the deck has that many cards for a run).
    if cap + 1 <= longest:
        board = capacity_board(free, to_empty, empty_cols, cap + 1, game_cells)
        assert board.cells.count(None) == free
        assert len(board.cells) == game_cells
        assert sum(1 for col in board.columns if not col) == empty_cols
        assert board.capacity(to_empty_column=to_empty) == cap
        with pytest.raises(IllegalMoveError) as info:
            board.check(0, dst, cap + 1)
        assert str(info.value) == f"group of {cap + 1} cards exceeds capacity {cap}"
        game = game_on(board.copy())
        with pytest.raises(IllegalMoveError) as info:
            game.play(Move("col1", move_name, cap + 1))
        assert str(info.value) == (
            f"col1>{move_name}*{cap + 1}: group of {cap + 1} cards exceeds capacity {cap}"
        )
        assert game.board == board

    # cap is allowed (or, beyond the longest possible run, the longest run is).
    count = min(cap, longest)
    board = capacity_board(free, to_empty, empty_cols, count, game_cells)
    assert board.capacity(to_empty_column=to_empty) == cap
    before = board.copy()
    board.check(0, dst, count)
    game = game_on(board)
    game.play(Move("col1", move_name, count))
    assert game.board.columns[dst][-count:] == before.columns[0]
    assert game.board.columns[0] == []
    assert game.score == 0


def test_rules_example_ten_onto_occupied_but_five_into_the_empty_column() -> None:
    # 4 empty cells and one empty column: 10 cards onto an occupied column, 5 into the empty one.
    board = capacity_board(4, False, 1, 11, 4)
    with pytest.raises(IllegalMoveError, match="group of 11 cards exceeds capacity 10"):
        board.check(0, 1, 11)
    board = capacity_board(4, False, 1, 10, 4)
    board.check(0, 1, 10)
    board = capacity_board(4, True, 1, 6, 4)
    with pytest.raises(IllegalMoveError, match="group of 6 cards exceeds capacity 5"):
        board.check(0, 7, 6)
    board = capacity_board(4, True, 1, 5, 4)
    board.check(0, 7, 5)


def test_source_column_emptied_by_the_move_is_not_a_waypoint() -> None:
    # The whole run leaves col1: col1 is not empty before the move, so it does not count.
    board = make_board({1: "QS JS TS", 2: "KS"}, ["AH", "2H", "3H", "4H"])
    assert board.capacity() == 1
    with pytest.raises(IllegalMoveError, match="group of 3 cards exceeds capacity 1"):
        board.check(0, 1, 3)


# -- the text form ------------------------------------------------------


@pytest.mark.parametrize("code", ["BK1-C4-AAAAAAB", "BK1-C2-AAAAA24", "BK1-C1-B777777"])
def test_dealt_board_text_round_trips(code: str) -> None:
    board = Board.deal(GameCode.parse(code))
    assert Board.from_text(board.text()) == board
    assert Board.from_text(board.text()).text() == board.text()


def test_mid_game_text_round_trips() -> None:
    text = (
        "foundations: 3S -- AD 2C\n"
        "cells: 9H -- KC --\n"
        "col1: JD KD 4C 6D 6S\n"
        "col2: 2D KS 5C TD 8S 9C\n"
        "col3: 9S 9D TS 4S 8D 2H\n"
        "col4: JC 5S QD QH TH QS 6H\n"
        "col5:\n"
        "col6: 7H QC AH 3D\n"
        "col7: 7C KH 4D JH 8C\n"
        "col8: 5H 3H 3C 7S 7D TC 5D JS 4H 8H 6C\n"
    )
    board = Board.from_text(text)
    assert board.text() == text
    assert board.foundations == [2, 1, 0, 3]  # clubs, diamonds, hearts, spades
    assert board.foundation_cards == 6
    assert board.foundation_top(Suit.SPADES) == Card("3S")
    assert board.foundation_top(Suit.HEARTS) is None
    assert board.cells == [Card("9H"), None, Card("KC"), None]
    assert board.columns[4] == []
    assert repr(board) == f"Board.from_text({text!r})"
    assert all(n == 1 for n in card_count(board).values())


def test_from_text_accepts_lower_case_tens_and_extra_blanks() -> None:
    text = Board.deal(GameCode(1)).text()
    messy = "\n  " + text.lower().replace("td", "10d").replace(" ", "  ") + "\n\n"
    assert Board.from_text(messy).text() == text


@pytest.mark.parametrize("cells", [1, 2, 4])
def test_cell_lines(cells: int) -> None:
    board = Board.from_text(board_text({}, [None] * cells))
    assert len(board.cells) == cells


def _deal_text() -> str:
    return Board.deal(GameCode(1)).text()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (_deal_text().replace(" 6S\n", "\n"), "missing 6S, repeated none"),
        (_deal_text().replace(" 6S\n", " 6S 6S\n"), "missing none, repeated 6S"),
        (_deal_text().replace(" 6S\n", " 6H\n"), "missing 6S, repeated 6H"),
        (_deal_text().replace("foundations: --", "foundations: AS"), "missing none, repeated AS"),
        (_deal_text().replace("cells: --", "cells: JD"), "missing none, repeated JD"),
        (_deal_text().replace("col1: JD KD", "col1: KD"), "missing JD"),
        (
            _deal_text().replace("foundations: -- --", "foundations: AH --"),
            "foundation spades cannot hold AH",
        ),
        (
            _deal_text().replace("foundations: -- -- -- --", "foundations: -- -- --"),
            "needs 4 entries",
        ),
        (_deal_text().replace("cells: -- -- -- --", "cells: -- -- --"), "4, 2 or 1 entries"),
        (_deal_text().replace("cells: -- -- -- --", "cells:"), "4, 2 or 1 entries"),
        (_deal_text().replace("col3:", "col9:"), "should start with col3:"),
        (_deal_text().replace("cells:", "reserve:"), "should start with cells:"),
        (_deal_text().replace("col1: JD", "col1 JD"), "should start with col1:"),
        (_deal_text().replace("col1: JD", "col1: XX"), "'XX' is not a card"),
        (_deal_text().replace("col8: 5H 3H 3C 7S 7D TC\n", ""), "needs 10 lines, got 9"),
        (_deal_text() + "col9:\n", "needs 10 lines, got 11"),
        ("", "needs 10 lines, got 0"),
    ],
)
def test_from_text_refuses_bad_boards(text: str, reason: str) -> None:
    with pytest.raises(InvalidNotationError, match=reason):
        Board.from_text(text)


def test_from_text_refuses_non_strings() -> None:
    with pytest.raises(InvalidNotationError, match="must be a string"):
        Board.from_text(None)  # type: ignore[arg-type]


def test_full_foundations_board_is_won() -> None:
    board = Board.from_text(
        "foundations: KS KH KD KC\ncells: -- -- -- --\n"
        + "".join(f"col{i}:\n" for i in range(1, 9))
    )
    assert board.won
    assert board.foundation_cards == 52
    assert board.legal_moves() == []


# -- checking single moves -----------------------------------------------


SAMPLE = board_text(
    {1: "KH 9C 8C 7C", 2: "TC", 3: "8H", 4: "9H 2S", 5: "AH"},
    ["5D", None, None, "7H"],
    {Suit.SPADES: 1, Suit.DIAMONDS: 4},
    empty={6},
)


def _places(*names: str) -> list[int]:
    return [PLACE_NAMES.index(n) for n in names]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("col3>col2", "8H does not go on TC: same suit, one rank higher required"),
        ("col1>col3", "7C does not go on 8H: same suit, one rank higher required"),
        ("col1>col2*2", "8C does not go on TC"),
        ("cell4>col1", "7H does not go on 7C"),
        ("col2>foundation", "TC cannot go to the foundation: it takes AC next"),
        ("col3>foundation", "8H cannot go to the foundation: it takes AH next"),
        ("col1>cell1", "cell1 already holds 5D"),
        ("cell2>col1", "cell2 is empty"),
        ("col1>cell2*2", "a cell holds one card, cannot move 2"),
        ("cell1>col6*2", "a cell holds one card, cannot move 2"),
        ("col1>foundation*2", "cards go to the foundation one at a time"),
        ("col1>col1", "col1 is both source and destination"),
        ("cell1>cell1", "cell1 is both source and destination"),
        ("col6>cell2", "col6 has 0 cards, cannot move 1"),
        ("col2>col6*2", "col2 has 1 cards, cannot move 2"),
        ("col1>col6*4", "the top 4 cards of col1 are not a same-suit run"),
        ("col1>col6*5", "col1 has 4 cards, cannot move 5"),
        ("col4>col6*2", "the top 2 cards of col4 are not a same-suit run"),
        ("foundation>col6", "cards on a foundation are final"),
    ],
)
def test_illegal_moves_say_why(move: str, reason: str) -> None:
    board = Board.from_text(SAMPLE)
    parsed = Move.parse(move)
    src, dst = _places(parsed.src, parsed.dst)
    with pytest.raises(IllegalMoveError) as info:
        board.check(src, dst, parsed.count)
    assert reason in str(info.value)
    game = game_on(board.copy())
    with pytest.raises(IllegalMoveError) as info:
        game.play(parsed)
    assert str(info.value).startswith(f"{parsed}: ")
    assert game.board == board and game.score == 0 and game.actions == 0


@pytest.mark.parametrize("count", [0, -1, -7])
def test_counts_below_one_are_refused(count: int) -> None:
    board = Board.from_text(SAMPLE)
    with pytest.raises(IllegalMoveError, match=f"cannot move {count} cards"):
        board.check(0, 5, count)  # col1 -> empty col6
    game = game_on(board.copy())
    with pytest.raises(IllegalMoveError):
        game.play(Move("col1", "col6", count))
    assert game.board == board


@pytest.mark.parametrize("move", ["col1>col3", "col1>col6*4", "cell2>col1", "col2>col6*2"])
def test_refused_check_does_not_change_the_board(move: str) -> None:
    board = Board.from_text(SAMPLE)
    parsed = Move.parse(move)
    src, dst = _places(parsed.src, parsed.dst)
    with pytest.raises(IllegalMoveError):
        board.check(src, dst, parsed.count)
    assert board.text() == SAMPLE


def _brute_force(board: Board) -> set[Move]:
    """Every (src, dst, count) that Board.check accepts."""
    places = [*range(8), *(8 + i for i in range(len(board.cells))), FOUNDATION]
    legal = set()
    for src, dst in itertools.product(places, repeat=2):
        for count in range(1, 14):
            try:
                board.check(src, dst, count)
            except IllegalMoveError:
                continue
            legal.add(Move(PLACE_NAMES[src], PLACE_NAMES[dst], count))
    return legal


def test_legal_moves_of_the_sample() -> None:
    board = Board.from_text(SAMPLE)
    moves = board.legal_moves()
    assert len(moves) == len(set(moves))
    assert set(moves) == _brute_force(board)
    assert Move("col1", "col6", 3) in moves  # 9C 8C 7C into the empty column
    assert Move("col1", "col2", 3) in moves  # 9C 8C 7C onto TC
    assert Move("col5", "foundation") in moves  # AH
    assert Move("col4", "foundation") in moves  # 2S on AS
    assert Move("cell1", "foundation") in moves  # 5D on 4D
    assert Move("cell4", "col3") in moves  # 7H on 8H
    assert Move("cell4", "col1") not in moves  # 7H on 7C


@pytest.mark.parametrize("deal", [1, 2, 3, 860, 11982])
@pytest.mark.parametrize("cells", [4, 2, 1])
def test_legal_moves_of_deals_match_brute_force(deal: int, cells: int) -> None:
    board = Board.deal(GameCode(deal, cells))
    moves = board.legal_moves()
    assert len(moves) == len(set(moves))
    assert set(moves) == _brute_force(board)
    assert [move_of(*step) for step in board.legal_steps()] == moves


def test_legal_steps_are_legal_moves_by_index_along_random_play() -> None:
    rng = random.Random(14)
    for deal, cells in ((5, 4), (6, 2), (7, 1)):
        for board in _random_play(Board.deal(GameCode(deal, cells)), rng, 60):
            steps = board.legal_steps()
            assert [move_of(*step) for step in steps] == board.legal_moves()
            for step in steps:
                board.check(*step)


def test_pointless_moves() -> None:
    board = make_board({1: "KS QS", 2: "5H"}, [None, "7D", None, None], empty={8})
    assert board.is_pointless(Move("cell2", "cell1"))
    assert board.is_pointless(Move("col1", "col8", 2))  # the whole column
    assert not board.is_pointless(Move("col1", "col8", 1))
    assert not board.is_pointless(Move("col2", "cell1"))
    assert not board.is_pointless(Move("cell2", "col8"))
    assert not board.is_pointless(Move("col2", "foundation"))
    assert not board.is_pointless(Move("cell2", "foundation"))
    assert board.is_pointless(Move("col2", "col8"))  # 5H is the whole column
    assert not board.is_pointless(Move("col3", "col8"))  # the top of a longer column


def test_copy_is_independent() -> None:
    board = Board.deal(GameCode(1))
    other = board.copy()
    assert other == board
    other.columns[0].pop()
    other.cells[0] = Card("6S")
    other.foundations[0] = 1
    assert board.text() == Board.deal(GameCode(1)).text()
    assert other != board
    assert board != "not a board"


def _dig(board: Board) -> bool:
    """Move cards one at a time to free cells and empty columns until a foundation move is legal."""
    board = board.copy()
    while not any(m.dst == "foundation" for m in board.legal_moves()):
        # The column holding the shallowest card that could go on its foundation.
        _, column = min(
            (len(col) - 1 - i, n)
            for n, col in enumerate(board.columns)
            for i, card in enumerate(col)
            if board.foundations[card & 3] == (card >> 2) - 1
        )
        spaces = [FIRST_CELL + i for i, held in enumerate(board.cells) if held is None]
        spaces += [n for n, col in enumerate(board.columns) if not col]
        if not spaces:
            return False
        board.check(column, spaces[0], 1)  # raises if the rules refuse it
        board.apply(column, spaces[0], 1)
    return True


def _random_play(board: Board, rng: random.Random, moves: int) -> Iterator[Board]:
    """``board`` after each of up to ``moves`` random legal moves (it stops when stuck)."""
    for _ in range(moves):
        legal = board.legal_moves()
        if not legal:
            return
        move = rng.choice(legal)
        board.apply(PLACE_INDEX[move.src], PLACE_INDEX[move.dst], move.count)
        yield board


def test_the_dig_out_shortcut_only_claims_what_single_moves_achieve() -> None:
    """Where the shortcut says a foundation move is reachable, digging shows it is."""
    rng = random.Random(7)
    claimed = 0
    for deal in range(1, 60):
        for cells in (4, 2, 1):
            for board in _random_play(Board.deal(GameCode(deal, cells)), rng, 120):
                if board._foundation_near():
                    claimed += 1
                    assert _dig(board), board.text()
    assert claimed > 200  # the check above ran often enough to mean something


def test_the_search_bound_changes_what_is_known_never_the_verdict() -> None:
    """Its shortcuts and its bound may leave a verdict unknown, never make one wrong."""
    rng = random.Random(11)
    verdicts: set[tuple[bool | None, bool | None]] = set()
    for deal in range(1, 120):
        for board in _random_play(Board.deal(GameCode(deal, rng.choice((1, 2, 4)))), rng, 100):
            if None not in board.cells and all(board.columns):
                bounded, full = board.foundation_reachable(24), board.foundation_reachable(5000)
                assert bounded is None or bounded == full, board.text()
                verdicts.add((bounded, full))
    assert {(True, True), (False, False)} <= verdicts
