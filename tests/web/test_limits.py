"""Per-address counters: what counts as one address, and that counters expire."""

from __future__ import annotations

import logging
import sys

from boulanger.broker import Lease
from boulanger.broker.memory import MemoryLimits
from boulanger.web.limits import WINDOW_S, address_key
from boulanger.web.logs import ClientFaults, RateLimit


def test_ipv6_addresses_count_by_their_64() -> None:
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff:ffff:ffff:ffff")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("testclient") == "testclient"


def test_race_counters_are_forgotten_after_their_minute() -> None:
    now = [1000.0]
    limits = MemoryLimits(clock=lambda: now[0])
    for n in range(20_000):
        assert limits.hit_now(
            f"created:{{10.{n // 65536}.{n // 256 % 256}.{n % 256}}}", 20, WINDOW_S
        )
    assert len(limits.hits) == 20_000
    now[0] += WINDOW_S / 2
    limits.sweep()
    assert len(limits.hits) == 20_000  # still within their minute
    now[0] += WINDOW_S / 2
    limits.sweep()
    assert limits.hits == {}


def test_connection_counters_go_when_the_last_connection_does() -> None:
    limits = MemoryLimits()
    first = limits.enter_now("conns:{a}", 2, 90, "1")
    second = limits.enter_now("conns:{a}", 2, 90, "2")
    assert first is not None and second is not None
    assert limits.enter_now("conns:{a}", 2, 90, "3") is None
    limits.leave_now(first)
    assert limits.enter_now("conns:{a}", 2, 90, "4") is not None
    limits.leave_now(second)
    limits.leave_now(Lease("conns:{a}", "4"))
    assert limits.leases == {}


def _record(message: str, error: BaseException | None) -> logging.LogRecord:
    exc_info = (type(error), error, error.__traceback__) if error is not None else None
    return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, message, (), exc_info)


def test_client_faults_become_one_line_and_are_rate_limited() -> None:
    now = [0.0]
    faults = ClientFaults(RateLimit(lines=3, window=10, clock=lambda: now[0]))
    try:
        b"\xff".decode()
    except UnicodeDecodeError:
        error = sys.exc_info()[1]
    records = [_record("Invalid UTF-8 sequence received from client.", error) for _ in range(5)]
    passed = [r for r in records if faults.filter(r)]
    assert len(passed) == 3
    for record in passed:
        assert record.exc_info is None and record.levelno == logging.WARNING
        assert "\n" not in record.getMessage() and "UnicodeDecodeError" in record.getMessage()
    now[0] += 10
    later = _record("Invalid HTTP request received.", None)
    assert faults.filter(later) and "2 similar lines left out" in later.getMessage()
    # Our own failures keep their traceback.
    ours = _record("Exception in ASGI application\n", RuntimeError("bug"))
    assert faults.filter(ours) and ours.exc_info is not None
