"""Settings come from defaults, BOULANGER_* variables, then explicit overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from boulanger.web.settings import Settings
from boulanger.web.solving import SolverPool


def test_environment_then_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOULANGER_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("BOULANGER_MESSAGES_PER_SECOND", "7.5")
    monkeypatch.setenv("BOULANGER_COUNTDOWN_MS", "100")
    monkeypatch.setenv("BOULANGER_CLIENT_DIR", "/srv/client")
    settings = Settings.from_env(broker_url=None, time_limit_s=60)
    assert settings.broker_url == "redis://127.0.0.1:1/0"
    assert settings.messages_per_second == 7.5 and settings.countdown_ms == 100
    assert settings.client_dir == Path("/srv/client") and settings.time_limit_s == 60
    assert Settings.from_env(broker_url="memory://").broker_url == "memory://"


def test_defaults_are_the_documented_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BROKER_URL", "MESSAGES_PER_SECOND", "MESSAGE_BURST", "MAX_FRAME_BYTES"):
        monkeypatch.delenv(f"BOULANGER_{name}", raising=False)
    settings = Settings.from_env()
    assert settings.broker_url == "memory://"
    assert (settings.message_burst, settings.messages_per_second) == (40, 5.0)
    assert settings.max_frame_bytes == 16 * 1024 and settings.outbound_buffer_bytes == 256 * 1024


def test_a_catalog_seed_fixes_the_deals_of_races_created_without_a_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BOULANGER_CATALOG_SEED", "tests")
    seed = Settings.from_env().catalog_seed
    assert seed == "tests" and Settings().catalog_seed == ""

    def deals(pool: SolverPool) -> list[str]:
        return [str(pool.pick(cells)[0]) for cells in (4, 4, 2, 4, 1, 4)]

    picked = deals(SolverPool(seed))
    assert deals(SolverPool(seed)) == picked  # the same sequence, process after process
    assert len(set(picked)) > 1 and deals(SolverPool("other")) != picked
