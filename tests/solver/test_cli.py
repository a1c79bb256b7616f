from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from boulanger.cli import main
from boulanger.solver import catalog


def test_solve_json_replays(
    capsys: pytest.CaptureFixture[str], replays_to_win: Callable[..., bool]
) -> None:
    assert main(["solve", "bk1-c4-aaaaaab", "--json", "--budget", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"code", "result", "actions", "seconds", "positions"}
    assert out["code"] == "BK1-C4-AAAAAAB"
    assert out["result"] == "won"
    assert replays_to_win(out["code"], out["actions"])


def test_solve_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "BK1-C1-AAAAAAB", "--budget", "60"]) == 0
    assert "unsolvable" in capsys.readouterr().out
    assert main(["solve", "BK1-C4-AAAAAAB", "--budget", "60"]) == 0
    out = capsys.readouterr().out
    assert "won" in out and "par " in out


def test_solve_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "BK1-C4-AAAAAG7", "--json", "--budget", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == "unknown"


def test_solve_bad_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "BK1-C3-AAAAAAB"]) == 2
    assert "C3" in capsys.readouterr().err


def test_catalog_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c2.txt"
    args = ["catalog", "--cells", "2", "--from", "25", "--to", "40", "--budget", "60"]
    args += ["--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "deal 29: won" in printed
    assert "searched 16:" in printed
    parsed = catalog.CatalogFile.parse(out.read_text(), 2)
    assert sorted(parsed.pars) == [29, 33, 39]
    assert parsed.searched == [(25, 40)]


def test_catalog_command_checks_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--cells", "3", "--to", "5", "--out", "x"]) == 2
    assert "--cells" in capsys.readouterr().err


def test_catalog_command_needs_out_and_leaves_the_package_data_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shipped = catalog.data_path(2)
    before = shipped.read_bytes()
    with pytest.raises(SystemExit) as exited:
        main(["catalog", "--cells", "2", "--from", "25", "--to", "26", "--budget", "1"])
    assert exited.value.code == 2
    assert "--out" in capsys.readouterr().err
    assert shipped.read_bytes() == before
