"""Simulated players for fair play: copiers of a solver's line, and human-like strategies.

A player decides its next action from the game as it stands (an engine
``Game`` that the caller keeps in step with the server) and says how long it
thinks before sending it. Everything is seeded: the same deal and seed give
the same actions and the same pauses.

Copiers play ``boulanger solve``'s line (:class:`Copier`), optionally with
detours: before a decision, now and then, a random move, then either an undo
or a fresh solve from where the detour led. Or the line of another solver,
Freecell Solver (:func:`fc_solve_line`).

Human-like players never see a solver's line:

* :class:`Planner` plays toward the next card to a foundation: it looks
  ahead (up to ``look`` positions, in its head: no actions) for a few moves
  that put another card on a foundation, takes the best of the plans found
  by a human's rule of thumb (cards out, spaces free, low cards dug out,
  columns in order) with some noise, and when it finds none, undoes its last
  plan and tries another. Its pauses follow :class:`HumanPace`.
* :class:`Greedy` looks one move ahead only, with undos when stuck; it loses
  most deals (then it resigns).
* :class:`HintUser` is a short-sighted planner that asks for a hint where it
  would undo a plan; refused (hints are for practice only), it undoes.
"""

from __future__ import annotations

import heapq
import math
import random
import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boulanger.engine import Board, Game, Move
from boulanger.engine.moves import FIRST_CELL, FOUNDATION, PLACE_INDEX, move_of
from boulanger.solver import solve_board
from boulanger.solver.fcsolve import FC_SOLVE, board_text
from boulanger.solver.search import SearchMove, children, key_of, settle

UNDO: dict[str, Any] = {"undo": True}


@dataclass(frozen=True, slots=True)
class Step:
    """An action (a move's dict or :data:`UNDO`; None asks for a hint) after ``think_ms``."""

    action: dict[str, Any] | None
    think_ms: int


# -- paces --------------------------------------------------------------------


class Jitter:
    """One action every ``low`` to ``high`` ms, uniformly (seeded)."""

    def __init__(self, low: int, high: int, seed: int) -> None:
        self.low, self.high = low, high
        self.rng = random.Random(seed)

    def __call__(self, kind: str, board: Board) -> int:
        return self.rng.randint(self.low, self.high)


class Steady:
    """One action every ``ms``."""

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self, kind: str, board: Board) -> int:
        return self.ms


def alternatives(board: Board) -> int:
    """The moves a player chooses among: legal, not to a foundation, not renaming places."""
    return sum(
        1 for m in board.legal_moves() if m.dst != "foundation" and not board.is_pointless(m)
    )


class HumanPace:
    """How long a person takes, by the kind of action (see docs/fair-play.md).

    ``plan``: the first move of a plan, a mental preparation (1.35 s in the
    keystroke-level model, spread by a log-normal factor), a choice among n
    alternatives (Hick-Hyman law: 150 ms per bit, log2(n + 1)) and a pointing
    (0.4 to 0.7 s); ``move``, a move within a plan: the pointing and a third
    of the choice; ``tap``, a card to a foundation: 250 to 450 ms; ``undo``,
    the first of a run of undos: noticing (0.8 to 2.5 s), then 250 to 400 ms
    each; ``hint``: 1.5 to 3 s before asking.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.last = ""

    def __call__(self, kind: str, board: Board) -> int:
        rng = self.rng
        choice = 150 * math.log2(1 + alternatives(board)) if kind in ("plan", "move") else 0
        if kind == "plan":
            ms = 1350 * rng.lognormvariate(0, 0.4) + choice + rng.uniform(400, 700)
        elif kind == "move":
            ms = rng.uniform(350, 650) + choice / 3
        elif kind == "tap":
            ms = rng.uniform(250, 450)
        elif kind == "undo":
            ms = rng.uniform(250, 400) if self.last == "undo" else rng.uniform(800, 2500)
        else:  # hint
            ms = rng.uniform(1500, 3000)
        self.last = kind
        return round(ms)


Pace = Callable[[str, Board], int]


# -- moves as the search names them ---------------------------------------------


def _settled(board: Board) -> tuple[bytes, tuple[bytes, ...], tuple[int, ...]]:
    cells = [int(c) for c in board.cells if c is not None]
    cols = [bytes(col) for col in board.columns]
    found = list(board.foundations)
    settle(cells, cols, found)
    return bytes(sorted(cells)), tuple(sorted(cols)), tuple(found)


def engine_move(board: Board, move: SearchMove) -> Move:
    """The engine's move for a search move on ``board`` (as ``solve``'s steps place it)."""
    kind, card, count = move
    src = next((FIRST_CELL + i for i, held in enumerate(board.cells) if held == card), None)
    if src is None:
        src = next(
            i for i, col in enumerate(board.columns) if len(col) >= count and col[-count] == card
        )
    if kind == "p":
        dst = next(i for i, col in enumerate(board.columns) if col and col[-1] == card + 4)
    elif kind == "e":
        dst = next(i for i, col in enumerate(board.columns) if not col)
    else:
        dst = FIRST_CELL + board.cells.index(None)
    return move_of(src, dst, count)


def foundation_move(board: Board) -> Move | None:
    """A card that can go to its foundation now (columns first, then cells), if any."""
    tops = [(i, col[-1]) for i, col in enumerate(board.columns) if col]
    held = [(FIRST_CELL + i, c) for i, c in enumerate(board.cells) if c is not None]
    for src, card in tops + held:
        if board.foundations[card & 3] == (card >> 2) - 1:
            return move_of(src, FOUNDATION, 1)
    return None


def _step(action: Move | dict[str, Any], kind: str, board: Board, pace: Pace) -> Step:
    return Step(action if isinstance(action, dict) else action.to_dict(), pace(kind, board))


# -- copiers --------------------------------------------------------------------


class Copier:
    """Plays a solver's line; with ``detours`` > 0, strays before that share of decisions.

    A detour is a random move (not to a foundation, not the line's), then,
    one time in two, an undo (back on the line), else a fresh solve from
    where the detour led (a new line; an undo if there is none).
    """

    def __init__(self, pace: Pace, seed: int, detours: float = 0.0) -> None:
        self.pace = pace
        self.rng = random.Random(seed)
        self.detours = detours
        self.line: list[Move] = []
        self.strayed = False
        self.detours_made = 0

    def hinted(self, move: dict[str, Any] | None) -> None:  # never asks
        pass

    def _solve(self, board: Board) -> bool:
        solution = solve_board(board, budget=30)
        self.line = [Move.from_dict(a) for a in solution.actions]
        return solution.result == "won"

    def next(self, game: Game) -> Step | None:
        board = game.board
        if self.strayed:
            self.strayed = False
            if self.rng.random() < 0.5 or not self._solve(board):
                return _step(UNDO, "undo", board, self.pace)
        if not self.line and not self._solve(board):
            return None
        move = self.line[0]
        if move.dst != "foundation" and self.detours and self.rng.random() < self.detours:
            others = [
                m
                for m in board.legal_moves()
                if m.dst != "foundation" and not board.is_pointless(m) and m != move
            ]
            if others:
                self.strayed = True
                self.detours_made += 1
                return _step(self.rng.choice(others), "move", board, self.pace)
        self.line.pop(0)
        return _step(move, "move", board, self.pace)


class LineCopier(Copier):
    """Plays a given line (another solver's) without detours."""

    def __init__(self, line: list[Move], pace: Pace) -> None:
        super().__init__(pace, 0)
        self.line = list(line)

    def _solve(self, board: Board) -> bool:
        return False


_FC_MOVE = re.compile(
    r"Move (a card|\d+ cards) from (stack|freecell) (\d+) to (stack|freecell|the foundations) ?(\d*)"
)


def fc_solve_line(code: str, timeout: float = 60.0) -> list[Move] | None:
    """Freecell Solver's line for a deal, as engine moves (None without fc-solve or a win)."""
    board = Game(code).board
    command = [FC_SOLVE, "-g", "bakers_game", "--freecells-num", str(len(board.cells)), "-m"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as handle:
        handle.write(board_text(board))
        handle.flush()
        try:
            out = subprocess.run(
                [*command, handle.name],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return None
    if "This game is solveable." not in out:
        return None
    game = Game(code)
    line = []
    for found in _FC_MOVE.finditer(out):
        what, src_kind, src, dst_kind, dst = found.groups()
        count = 1 if what == "a card" else int(what.split()[0])
        src_place = f"col{int(src) + 1}" if src_kind == "stack" else f"cell{int(src) + 1}"
        if dst_kind == "the foundations":
            dst_place = "foundation"
        else:
            dst_place = f"col{int(dst) + 1}" if dst_kind == "stack" else f"cell{int(dst) + 1}"
        move = Move(src_place, dst_place, count)
        game.play(move)  # raises if the two engines disagree
        line.append(move)
    return line if game.board.won else None


# -- human-like players ------------------------------------------------------------


def rule_of_thumb(cells: bytes | list[int], cols: Any, found: Any, ncells: int) -> float:
    """How good a position looks to a person: cards out, spaces, low cards dug out, order."""
    score = 10.0 * sum(found) + 6 * sum(1 for c in cols if not c) + 3 * (ncells - len(cells))
    for suit in range(4):
        needed = (found[suit] + 1) * 4 + suit
        for col in cols:
            at = bytes(col).find(bytes((needed,))) if needed < 56 else -1
            if at >= 0:
                score -= 2 * (len(col) - 1 - at)  # cards above the next one needed
                break
    for col in cols:
        score -= sum(1 for i in range(1, len(col)) if col[i] != col[i - 1] - 4)
    return score


def _gumbel(rng: random.Random) -> float:
    return -math.log(-math.log(rng.random() or 1e-12))


class Planner:
    """Plays toward the next card to a foundation, a plan at a time (see the module docstring)."""

    def __init__(self, pace: Pace, seed: int, look: int = 400, noise: float = 3.0) -> None:
        self.pace = pace
        self.rng = random.Random(seed)
        self.look = look
        self.noise = noise
        self.plan: list[SearchMove] = []
        self.sizes: list[int] = []  # actions of each plan played, for undoing them
        self.tried: set[bytes] = set()  # positions plans have led to
        self.undoing = 0
        self.first = True

    def hinted(self, move: dict[str, Any] | None) -> None:
        pass

    def _find(self, board: Board) -> list[SearchMove] | None:
        """A plan from ``board``: moves up to another card on a foundation, or None."""
        ncells = len(board.cells)
        root = _settled(board)
        base = sum(root[2])
        seen = {key_of(root[0], root[1])}
        heap: list[tuple[float, int, Any, list[SearchMove]]] = [(0.0, 0, root, [])]
        goals: list[tuple[float, list[SearchMove]]] = []
        tie = looked = 0
        while heap and looked < self.look and len(goals) < 8:
            _, _, state, path = heapq.heappop(heap)
            looked += 1
            for key, k_cells, k_cols, k_found, move in children(*state, ncells):
                if key in seen:
                    continue
                seen.add(key)
                steps = [*path, move]
                worth = rule_of_thumb(k_cells, k_cols, k_found, ncells)
                if sum(k_found) > base:
                    if key not in self.tried:
                        noise = self.noise * _gumbel(self.rng)
                        goals.append((worth - 3 * len(steps) + noise, steps))
                        self.tried.add(key)
                    continue
                tie += 1
                state2 = (bytes(k_cells), tuple(k_cols), k_found)
                heapq.heappush(heap, (-worth + 2 * len(steps), tie, state2, steps))
        if not goals:
            return None
        return max(goals, key=lambda goal: goal[0])[1]

    def stuck(self, game: Game) -> Step | None:
        """No plan from here: undo the last plan (None: nothing left to undo)."""
        if not self.sizes or self.sizes[-1] > game.undo_depth:
            return None
        self.undoing = self.sizes.pop() - 1
        return _step(UNDO, "undo", game.board, self.pace)

    def next(self, game: Game) -> Step | None:
        board = game.board
        if self.undoing:
            self.undoing -= 1
            return _step(UNDO, "undo", board, self.pace)
        home = foundation_move(board)
        if home is not None:
            if self.sizes:
                self.sizes[-1] += 1
            return _step(home, "tap", board, self.pace)
        kind = "move"
        if not self.plan:
            plan = self._find(board)
            if plan is None:
                return self.stuck(game)
            self.plan = plan
            self.sizes.append(0)
            kind = "plan"
        move = engine_move(board, self.plan.pop(0))
        self.sizes[-1] += 1
        return _step(move, kind, board, self.pace)


class HintUser(Planner):
    """A short-sighted planner that asks for a hint where it would undo (refused: undoes)."""

    def __init__(self, pace: Pace, seed: int, look: int = 60) -> None:
        super().__init__(pace, seed, look=look)
        self.hint: Move | None = None
        self.refused = False
        self.hints = 0

    def hinted(self, move: dict[str, Any] | None) -> None:
        if move is None:
            self.refused = True
        else:
            self.hint = Move.from_dict(move)
            self.hints += 1

    def stuck(self, game: Game) -> Step | None:
        if self.refused:
            self.refused = False  # asks again next time it is stuck
            return super().stuck(game)
        return Step(None, self.pace("hint", game.board))

    def next(self, game: Game) -> Step | None:
        if self.hint is not None:
            move, self.hint = self.hint, None
            self.plan = []
            self.sizes.append(1)
            return _step(move, "move", game.board, self.pace)
        return super().next(game)


class Greedy:
    """One move ahead by the rule of thumb, with noise; undoes when nothing new is left."""

    def __init__(self, pace: Pace, seed: int, noise: float = 2.0) -> None:
        self.pace = pace
        self.rng = random.Random(seed)
        self.noise = noise
        self.seen: set[tuple[object, ...]] = set()

    def hinted(self, move: dict[str, Any] | None) -> None:
        pass

    def next(self, game: Game) -> Step | None:
        board = game.board
        self.seen.add(board._shape())
        home = foundation_move(board)
        if home is not None:
            return _step(home, "tap", board, self.pace)
        best: tuple[float, Move] | None = None
        ncells = len(board.cells)
        for move in board.legal_moves():
            if board.is_pointless(move):
                continue
            after = board.copy()
            after.apply(PLACE_INDEX[move.src], PLACE_INDEX[move.dst], move.count)
            if after._shape() in self.seen:
                continue
            cells = [c for c in after.cells if c is not None]
            worth = rule_of_thumb(cells, after.columns, after.foundations, ncells)
            worth += self.noise * _gumbel(self.rng)
            if best is None or worth > best[0]:
                best = (worth, move)
        if best is None:
            return _step(UNDO, "undo", board, self.pace) if game.can_undo else None
        return _step(best[1], "plan", board, self.pace)


# -- offline play -------------------------------------------------------------------


def play_offline(player: Any, code: str, limit: int = 1500, hints: bool = False) -> dict[str, Any]:
    """The record of ``player``'s game (with ``t``), played on an engine game here.

    It stops at a win, when the player gives up, or after ``limit`` actions.
    ``hints``: answered by the solver (as in practice), else refused.
    """
    from boulanger.solver import hint as solver_hint

    game = Game(code)
    t = 0
    actions: list[dict[str, Any]] = []
    while not game.board.won and len(actions) < limit:
        step = player.next(game)
        if step is None:
            break
        t += step.think_ms
        if step.action is None:
            found = solver_hint(game, budget=5.0) if hints else None
            move = None if found is None or found.move is None else found.move.to_dict()
            player.hinted(move)
            continue
        game.apply_action(step.action)
        actions.append({**step.action, "t": t})
    return {"code": code, "actions": actions}
