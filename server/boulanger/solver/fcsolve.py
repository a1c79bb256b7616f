"""Run Freecell Solver (``fc-solve``) on a Baker's Game position, for cross-checks.

``fc-solve -g bakers_game --method soft-dfs -to 01ABCDE`` only tries
single-card moves, so its "could not solve" is a proof, like ours (provided no
iteration limit was hit: ``--show-exceeded-limits`` tells the two apart).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile

from ..engine import Board, GameCode
from .search import Verdict

FC_SOLVE = "fc-solve"
_SUITS = "CDHS"


def available() -> bool:
    """Whether fc-solve is installed (cross-checks are skipped without it)."""
    return shutil.which(FC_SOLVE) is not None


def board_text(board: Board) -> str:
    """The board in fc-solve's input format (one line per column, bottom card first)."""
    found = " ".join(f"{_SUITS[s]}-{board.foundations[s]}" for s in range(4))
    cells = " ".join(str(c) if c is not None else "-" for c in board.cells)
    lines = [f"Foundations: {found}", f"Freecells: {cells}"]
    lines += [" ".join(str(c) for c in col) for col in board.columns]
    return "\n".join(lines) + "\n"


def verdict(board: Board, *, max_iters: int | None = None, timeout: float = 120.0) -> Verdict:
    """Won, unsolvable or unknown (iteration limit) according to fc-solve."""
    args = [
        FC_SOLVE,
        "-g",
        "bakers_game",
        "--freecells-num",
        str(len(board.cells)),
        "--method",
        "soft-dfs",
        "-to",
        "01ABCDE",
        # Without this, an exhausted iteration limit is also reported as
        # "I could not solve this game.", which then proves nothing.
        "--show-exceeded-limits",
    ]
    if max_iters is not None:
        args += ["-mi", str(max_iters)]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as handle:
        handle.write(board_text(board))
        handle.flush()
        out = subprocess.run(
            [*args, handle.name], capture_output=True, text=True, timeout=timeout, check=False
        ).stdout
    if "This game is solveable." in out:
        return Verdict.WON
    if "I could not solve this game." in out:
        return Verdict.UNSOLVABLE
    if "Iterations count exceeded" in out:
        return Verdict.UNKNOWN
    raise RuntimeError(f"unexpected fc-solve output: {out[-300:]!r}")


def verdict_for(code: GameCode | str, **kwargs: float | int | None) -> Verdict:
    """:func:`verdict` of a game code's deal."""
    if not isinstance(code, GameCode):
        code = GameCode.parse(code)
    return verdict(Board.deal(code), **kwargs)  # type: ignore[arg-type]
