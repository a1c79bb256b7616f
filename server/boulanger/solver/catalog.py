"""The catalog: deals verified winnable by the solver, one file per cell count.

The files are ``boulanger/data/catalog-c4.txt`` (and ``-c2``, ``-c1``)::

    # comment lines start with '#'
    # searched 1-5000
    # unknown 4711 4712
    1 95
    2 103

Each data line is a deal number and its par: the number of actions in the
solver's solution (foundation moves included; a group move is one action).
``# searched`` lists the deal ranges already searched, ``# unknown`` the deals
in them that the solver could not decide within its budget.

The catalog is made, and extended later, by::

    boulanger catalog --cells 4 --from 1 --to 6000 --budget 2 --out catalog-c4.txt

which skips deals already searched in ``--out``, so it can be stopped and
run again (``--max-seconds`` bounds a run, ``--retry-unknown`` searches the
unknown deals again). ``--out`` is required: the command never writes into
the installed package's data; a maintainer copies a file made this way
into ``server/boulanger/data/`` on purpose.
"""

from __future__ import annotations

import functools
import os
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..engine import GameCode
from ..engine.codes import CELL_COUNTS, CELL_COUNTS_TEXT
from .solve import UNKNOWN, WON, solve


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """A deal verified winnable, and the length of the solver's solution."""

    code: GameCode
    par: int


@dataclass(slots=True)
class CatalogFile:
    """The parsed content of one catalog file."""

    cells: int
    pars: dict[int, int] = field(default_factory=dict)
    searched: list[tuple[int, int]] = field(default_factory=list)
    unknown: set[int] = field(default_factory=set)

    def is_searched(self, deal: int) -> bool:
        """Whether a run already searched this deal (winnable or not)."""
        return any(a <= deal <= b for a, b in self.searched)

    def mark_searched(self, deal: int) -> None:
        """Add a deal to the searched ranges (merged, so the header stays short)."""
        self.searched = _merge([*self.searched, (deal, deal)])

    @classmethod
    def parse(cls, text: str, cells: int) -> CatalogFile:
        """Read a catalog file; :meth:`text` writes it back."""
        catalog = cls(cells)
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                words = line[1:].split()
                if words[:1] == ["searched"]:
                    for part in words[1:]:
                        a, _, b = part.partition("-")
                        catalog.searched.append((int(a), int(b or a)))
                elif words[:1] == ["unknown"]:
                    catalog.unknown.update(int(w) for w in words[1:])
                continue
            fields = line.split()
            if len(fields) != 2 or not all(f.isdigit() for f in fields):
                raise ValueError(f"catalog line {number}: {raw!r} is not 'deal par'")
            catalog.pars[int(fields[0])] = int(fields[1])
        catalog.searched = _merge(catalog.searched)
        return catalog

    def text(self) -> str:
        """The file's content: the header comments, then one line per winnable deal."""
        ranges = " ".join(f"{a}-{b}" for a, b in self.searched)
        lines = [
            f"# Baker's Game deals verified winnable with {self.cells}"
            f" cell{'s' if self.cells != 1 else ''}"
            f" (game codes BK1-C{self.cells}-...).",
            "# One line per deal: deal number, par (actions in the solver's solution).",
            f"# Made and extended by: boulanger catalog --cells {self.cells} --from A --to B",
            f"# searched {ranges}",
            " ".join(["# unknown", *(str(d) for d in sorted(self.unknown))]),
        ]
        lines += [f"{deal} {par}" for deal, par in sorted(self.pars.items())]
        return "\n".join(lines) + "\n"


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def data_path(cells: int) -> Path:
    """Where the package keeps the catalog of a cell count (in the source tree)."""
    return Path(__file__).resolve().parent.parent / "data" / f"catalog-c{cells}.txt"


def _check_cells(cells: int) -> None:
    if cells not in CELL_COUNTS:
        raise ValueError(f"cell count must be {CELL_COUNTS_TEXT}, not {cells!r}")


@functools.cache
def entries(cells: int) -> Sequence[CatalogEntry]:
    """Every catalog entry for a cell count, by deal number."""
    _check_cells(cells)
    resource = resources.files("boulanger") / "data" / f"catalog-c{cells}.txt"
    if not resource.is_file():
        return ()
    catalog = CatalogFile.parse(resource.read_text(encoding="utf-8"), cells)
    return tuple(
        CatalogEntry(GameCode(deal, cells), par) for deal, par in sorted(catalog.pars.items())
    )


@functools.cache
def _index(cells: int) -> dict[int, CatalogEntry]:
    return {entry.code.deal: entry for entry in entries(cells)}


def lookup(code: GameCode | str) -> CatalogEntry | None:
    """The catalog entry of a game code, or ``None`` when the deal is not in the catalog."""
    if not isinstance(code, GameCode):
        code = GameCode.parse(code)
    return _index(code.cells).get(code.deal)


def pick(cells: int, rng: random.Random | None = None) -> CatalogEntry:
    """A catalog entry chosen at random (with ``rng`` when given)."""
    choices = entries(cells)
    if not choices:
        raise LookupError(f"the catalog has no deal for {cells} cells")
    return rng.choice(choices) if rng is not None else random.choice(choices)


@dataclass(slots=True)
class Progress:
    """What a :func:`generate` run did so far, deal by deal."""

    searched: int = 0
    won: int = 0
    unsolvable: int = 0
    unknown: int = 0


def generate(
    cells: int,
    first: int,
    last: int,
    *,
    out: Path,
    budget: float = 2.0,
    max_seconds: float | None = None,
    retry_unknown: bool = False,
    save_every: float = 30.0,
    report: Callable[[int, str, int | None, Progress], None] | None = None,
) -> Progress:
    """Search deals ``first..last`` not yet searched and add the winnable ones to the file.

    The file is rewritten (atomically) every ``save_every`` seconds and at the
    end, so a run can be stopped at any time and started again.
    """
    _check_cells(cells)
    path = out
    catalog = (
        CatalogFile.parse(path.read_text(encoding="utf-8"), cells)
        if path.exists()
        else CatalogFile(cells)
    )
    progress = Progress()
    started = last_save = time.monotonic()
    for deal in range(first, last + 1):
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            break
        if catalog.is_searched(deal) and not (retry_unknown and deal in catalog.unknown):
            continue
        solution = solve(GameCode(deal, cells), budget=budget)
        progress.searched += 1
        catalog.unknown.discard(deal)
        if solution.result == WON:
            progress.won += 1
            catalog.pars[deal] = len(solution.actions)
        elif solution.result == UNKNOWN:
            progress.unknown += 1
            catalog.unknown.add(deal)
        else:
            progress.unsolvable += 1
        catalog.mark_searched(deal)
        if report is not None:
            report(deal, solution.result, solution.par, progress)
        if time.monotonic() - last_save > save_every:
            _save(path, catalog)
            last_save = time.monotonic()
    _save(path, catalog)
    return progress


def _save(path: Path, catalog: CatalogFile) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name("." + path.name + ".tmp")  # hidden: not shipped as package data
    temp.write_text(catalog.text(), encoding="utf-8")
    os.replace(temp, path)
