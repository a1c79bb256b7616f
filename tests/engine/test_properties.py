"""Property tests: random legal play, undo, and group moves as chains of single moves."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boulanger.engine import (
    ALL_CARDS,
    PLACE_NAMES,
    Board,
    Card,
    Game,
    GameCode,
    IllegalMoveError,
    Move,
    group_capacity,
    move_points,
)
from boulanger.engine.moves import FOUNDATION, PLACE_INDEX

from .helpers import card_count

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,  # the same examples on every run
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

codes = st.builds(
    GameCode,
    deal=st.integers(min_value=1, max_value=2**31 - 1),
    cells=st.sampled_from([4, 2, 1]),
)


def choices(seed: int, length: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(2**16) for _ in range(length)]


plays = st.builds(choices, seed=st.integers(0, 2**32), length=st.integers(1, 300))


def random_position(seed: int) -> Board:
    """A random legal position: some of each suit on its foundation, the rest on the table.

    Half the time the table is built from same-suit runs cut at random, so
    that long runs, empty columns and group moves are common.
    """
    rng = random.Random(seed)
    cells_count = rng.choice([4, 2, 1])
    foundations = [rng.choice([0, 0, rng.randint(0, 13)]) for _ in range(4)]
    rest = [c for c in ALL_CARDS if c.rank > foundations[c.suit]]
    if rng.random() < 0.5:
        rest.sort(key=lambda c: (c.suit, -c.rank))
        pieces: list[list[Card]] = []
        while rest:
            size = rng.randint(1, 6)
            pieces.append(rest[:size])
            rest = rest[size:]
        rng.shuffle(pieces)
        rest = [c for piece in pieces for c in piece]
    else:
        rng.shuffle(rest)
    cells: list[Card | None] = [None] * cells_count
    for i in range(cells_count):
        if rest and rng.random() < 0.4:
            cells[i] = rest.pop()
    used_columns = rng.sample(range(8), rng.randint(4, 8)) if rest else []
    columns: list[list[Card]] = [[] for _ in range(8)]
    # Cut the rest into consecutive stretches, one per used column.
    cuts = sorted(rng.sample(range(1, len(rest)), min(len(used_columns) - 1, len(rest) - 1)))
    for column, (a, b) in zip(
        used_columns, itertools.pairwise([0, *cuts, len(rest)]), strict=False
    ):
        columns[column] = rest[a:b]
    if rest and not any(columns):
        columns[0] = rest
    return Board(columns, cells, foundations)


def game_at(board: Board) -> Game:
    game = Game(GameCode(1, len(board.cells)))
    game.board = board
    return game


positions = st.builds(random_position, st.integers(0, 2**32))
# A game from a deal, or from a random position (deeper: runs, empty columns).
starts = st.one_of(st.builds(Game, codes), st.builds(game_at, positions))


def choose(game: Game, choice: int) -> Move | None:
    """A legal move picked by ``choice``, favouring moves that lead deeper into the game.

    Mostly the foundation, then moves onto columns, and a cell only now and
    then: uniform random play fills the cells and is stuck within a few moves.
    """
    moves = game.legal_moves()
    if not moves:
        return None
    board = game.board
    foundation = [m for m in moves if m.dst == "foundation"]
    onto_columns = [m for m in moves if m.dst.startswith("col") and not board.is_pointless(m)]
    if foundation and choice % 4 != 0:
        return foundation[choice % len(foundation)]
    if onto_columns and choice % 5 != 0:
        return onto_columns[choice % len(onto_columns)]
    return moves[choice % len(moves)]


def walk(game: Game, picks: list[int]) -> Iterator[Move | None]:
    """Random play from ``picks``, yielding each action (None for an undo).

    Now and then, and whenever no move is left, it undoes a move: that keeps
    games going instead of stopping at the first dead end.
    """
    for choice in picks:
        move = choose(game, choice)
        if move is None or (choice % 13 == 0 and game.can_undo):
            if not game.can_undo:
                return
            game.undo()
            yield None
        else:
            game.play(move)
            yield move


def brute_force(board: Board) -> set[Move]:
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


def assert_every_card_once(board: Board) -> None:
    counts = card_count(board)
    assert all(n == 1 for n in counts.values()), {c: n for c, n in counts.items() if n != 1}
    assert Board.from_text(board.text()) == board


@PROPERTY
@given(game=starts, picks=plays)
def test_random_legal_play_keeps_every_card_exactly_once(game: Game, picks: list[int]) -> None:
    points: list[int] = []  # the points of each move still on the board
    for step, action in enumerate(walk(game, picks)):
        if action is None:
            points.pop()
        else:
            src, dst = PLACE_INDEX[action.src], PLACE_INDEX[action.dst]
            points.append(move_points(src, dst))
        assert_every_card_once(game.board)
        assert game.score == sum(points) >= 0
        if step % 20 == 0:
            moves = game.legal_moves()
            assert len(moves) == len(set(moves))
            assert set(moves) == brute_force(game.board)


@PROPERTY
@given(game=starts, picks=plays)
def test_play_then_undo_restores_board_text_and_score(game: Game, picks: list[int]) -> None:
    start = game.board.text()
    before: list[tuple[str, int]] = []  # the position and score before each move on the board
    state = (game.board.text(), game.score)
    for action in walk(game, picks):
        if action is None:
            state = before.pop()
            assert (game.board.text(), game.score) == state
        else:
            before.append(state)
        state = (game.board.text(), game.score)
    # Undo whatever is left to undo, checking each step.
    while game.can_undo:
        game.undo()
        assert (game.board.text(), game.score) == before.pop()
    if not before:  # everything was undone
        assert game.board.text() == start
        assert game.score == 0


# -- group moves as chains of single moves ---------------------------------


def decompose(board: Board, src: int, dst: int, count: int) -> list[tuple[int, int]]:
    """The classic recursive plan: a group move as single moves via free cells and empty columns.

    With c free cells, n <= c + 1 cards go through the cells. Otherwise an
    empty column e (not the target) takes the top half (using the other empty
    columns), the bottom half goes to the target, and the top half follows.
    """
    cells = [8 + i for i, held in enumerate(board.cells) if held is None]
    empties = [i for i in range(8) if not board.columns[i] and i != dst]
    plan: list[tuple[int, int]] = []

    def move(n: int, frm: int, to: int, spare: list[int]) -> None:
        if n <= len(cells) + 1:
            used = cells[: n - 1]
            plan.extend((frm, cell) for cell in used)
            plan.append((frm, to))
            plan.extend((cell, to) for cell in reversed(used))
            return
        assert spare, f"{n} cards do not fit: the plan needs an empty column"
        waypoint, rest = spare[0], spare[1:]
        top = n // 2
        move(top, frm, waypoint, rest)
        move(n - top, frm, to, rest)
        move(top, waypoint, to, rest)

    move(count, src, dst, empties)
    return plan


def assert_group_move_is_a_chain_of_single_moves(board: Board, move: Move) -> None:
    src, dst = PLACE_INDEX[move.src], PLACE_INDEX[move.dst]
    direct = board.copy()
    direct.check(src, dst, move.count)
    direct.apply(src, dst, move.count)
    stepwise = board.copy()
    for frm, to in decompose(board, src, dst, move.count):
        stepwise.check(frm, to, 1)  # every single move is legal
        stepwise.apply(frm, to, 1)
    assert stepwise == direct


@PROPERTY
@given(game=starts, picks=plays)
def test_group_moves_in_random_play_are_chains_of_single_moves(
    game: Game, picks: list[int]
) -> None:
    for _ in walk(game, picks):
        for move in game.legal_moves():
            if move.count > 1:
                assert_group_move_is_a_chain_of_single_moves(game.board, move)


def test_random_play_sweep_reaches_many_group_moves() -> None:
    """A fixed sweep over random positions: every group move met is checked."""
    checked = 0
    empty_column_moves = 0
    for seed in range(40):
        game = game_at(random_position(seed))
        for _ in walk(game, choices(seed, 100)):
            for move in game.legal_moves():
                if move.count > 1:
                    assert_group_move_is_a_chain_of_single_moves(game.board, move)
                    checked += 1
                    empty_column_moves += not game.board.columns[PLACE_INDEX[move.dst]]
    assert checked > 5000
    assert empty_column_moves > 2000


@st.composite
def group_boards(draw: st.DrawFn) -> tuple[Board, int, int]:
    """A board with a same-suit run on col1, a target, and a random number of free cells and empty columns.

    Returns the board, the target column index and the run length.
    """
    game_cells = draw(st.sampled_from([4, 2, 1]))
    free = draw(st.integers(0, game_cells))
    empty_cols = draw(st.integers(0, 3))
    to_empty = draw(st.booleans()) if empty_cols else False
    suit = draw(st.integers(0, 3))
    top_rank = 13 if to_empty else 12
    cap = group_capacity(free, empty_cols - 1 if to_empty else empty_cols)
    # Mostly a run of exactly the capacity or one more, sometimes any length.
    run = draw(st.sampled_from([cap, cap + 1, cap - 1, draw(st.integers(1, top_rank))]))
    run = max(1, min(run, top_rank))
    run_cards = [Card.of(r, suit) for r in range(top_rank, top_rank - run, -1)]
    used = set(run_cards)
    target_cards = [] if to_empty else [Card.of(13, suit)]
    used |= set(target_cards)
    rest = [c for c in ALL_CARDS if c not in used]
    random.Random(draw(st.integers(0, 2**32))).shuffle(rest)
    cells: list[Card | None] = [rest.pop() for _ in range(game_cells - free)]
    cells += [None] * free
    columns: list[list[Card]] = [[] for _ in range(8)]
    columns[0] = run_cards
    empty = set(range(8 - empty_cols, 8))
    if to_empty:
        target = 7
    else:
        columns[1] = target_cards
        target = 1
    fillers = [i for i in range(1, 8) if i not in empty and i != target]
    for n, card in enumerate(rest):
        columns[fillers[n % len(fillers)]].append(card)
    if not to_empty:
        columns[1] = [*columns[1][1:], *target_cards]  # keep the target card on top
    board = Board(columns, cells, [0, 0, 0, 0])
    return board, target, run


@settings(PROPERTY, max_examples=300)
@given(case=group_boards())
def test_group_of_capacity_is_a_chain_and_one_more_is_refused(
    case: tuple[Board, int, int],
) -> None:
    board, target, run = case
    to_empty = not board.columns[target]
    free = board.cells.count(None)
    empty = sum(1 for col in board.columns if not col) - (1 if to_empty else 0)
    cap = group_capacity(free, empty)
    assert board.capacity(to_empty_column=to_empty) == cap
    for count in range(1, run + 1):
        # Only a run whose highest card fits the target can go.
        fits = to_empty or count == run
        move = Move("col1", PLACE_NAMES[target], count)
        if fits and count <= cap:
            assert_group_move_is_a_chain_of_single_moves(board, move)
            assert move in board.legal_moves()
        elif fits and count == cap + 1:
            try:
                board.check(0, target, count)
            except IllegalMoveError as error:
                assert str(error) == f"group of {count} cards exceeds capacity {cap}"
            else:
                raise AssertionError(f"{move} over capacity {cap} was accepted")
            assert move not in board.legal_moves()
        elif fits:
            assert move not in board.legal_moves()
