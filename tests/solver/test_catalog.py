from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from boulanger.engine import GameCode
from boulanger.solver import WON, catalog, solve

# The shipped catalog must hold at least this many deals per cell count.
MINIMUM = {4: 3650, 2: 8000, 1: 3000}
SAMPLE = 20


@pytest.mark.parametrize("cells", [4, 2, 1])
def test_the_catalog_is_shipped(cells: int) -> None:
    entries = catalog.entries(cells)
    assert len(entries) >= MINIMUM[cells]
    deals = [e.code.deal for e in entries]
    assert deals == sorted(set(deals))
    assert all(e.code.cells == cells and e.par >= 52 for e in entries)


@pytest.mark.parametrize("cells", [4, 2, 1])
def test_a_sample_of_the_catalog_replays_to_a_win_at_par(
    cells: int, replays_to_win: Callable[..., bool]
) -> None:
    entries = catalog.entries(cells)
    for entry in random.Random(cells).sample(list(entries), SAMPLE):
        solution = solve(entry.code, budget=60)
        assert solution.result == WON, entry
        assert solution.par == entry.par, entry
        assert replays_to_win(entry.code, solution.actions)


def test_lookup_and_pick() -> None:
    entry = catalog.entries(4)[0]
    assert catalog.lookup(entry.code) == entry
    assert catalog.lookup(str(entry.code).lower()) == entry
    assert catalog.lookup(GameCode(10, 4)) is None  # deal 10 is not winnable
    rng = random.Random(7)
    picked = catalog.pick(2, rng)
    assert picked.code.cells == 2
    assert catalog.pick(2, random.Random(7)) == picked
    assert catalog.lookup(picked.code) == picked
    assert catalog.pick(1).code.cells == 1
    with pytest.raises(ValueError, match="cell count"):
        catalog.entries(3)


def test_the_file_format_round_trips() -> None:
    text = "# a comment\n# searched 1-3 5-9 4-4\n# unknown 6\n1 90\n2 101\n\n9 88\n"
    parsed = catalog.CatalogFile.parse(text, 4)
    assert parsed.searched == [(1, 9)]
    assert parsed.unknown == {6}
    assert parsed.pars == {1: 90, 2: 101, 9: 88}
    again = catalog.CatalogFile.parse(parsed.text(), 4)
    assert again == parsed
    with pytest.raises(ValueError, match="line 2"):
        catalog.CatalogFile.parse("1 90\n2 x\n", 4)


def test_generation_is_resumable(tmp_path: Path) -> None:
    out = tmp_path / "c4.txt"
    first = catalog.generate(4, 1, 12, out=out, budget=60)
    assert (first.searched, first.won, first.unsolvable, first.unknown) == (12, 11, 1, 0)
    again = catalog.generate(4, 1, 15, out=out, budget=60)
    assert again.searched == 3  # only 13..15 are new
    parsed = catalog.CatalogFile.parse(out.read_text(), 4)
    assert parsed.searched == [(1, 15)]
    assert sorted(parsed.pars) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15]
    assert parsed.pars[1] == solve("BK1-C4-AAAAAAB", budget=60).par


def test_unknown_deals_are_kept_and_retried(tmp_path: Path) -> None:
    out = tmp_path / "c4.txt"
    catalog.generate(4, 223, 223, out=out, budget=0.0)
    assert catalog.CatalogFile.parse(out.read_text(), 4).unknown == {223}
    assert catalog.generate(4, 223, 223, out=out).searched == 0
    retried = catalog.generate(4, 223, 223, out=out, retry_unknown=True, budget=60)
    assert retried.unsolvable == 1
    assert catalog.CatalogFile.parse(out.read_text(), 4).unknown == set()
