"""Shared fixtures: real redis-server processes, and the app served in the test's loop.

``server`` (and ``memory_server``, ``sqlite_server``, ``redis_server``) is
the application as ``boulanger serve`` runs it, served by uvicorn inside the
test's own event loop (support/apps.py): a fresh one for each test. Tests
that need a real process (a SIGKILL, a restart, nginx in front, the command
line) start :class:`~support.servers.ServerProcess` themselves, or use
``two_servers``.

Also two rules for the whole run: hypothesis tries the same examples every
time (profile ``ci``; ``HYPOTHESIS_PROFILE=explore`` looks for new ones), and
no process the tests started may outlive them (checked at the end).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from support import processes
from support.apps import CHEAP_HASHING, AppServer
from support.servers import RedisCluster, RedisProcess, ServerProcess

# The same examples on every run, no example database (nothing learnt from an
# earlier run changes this one), no deadline or speed check (a busy machine
# is not a failure).
hypothesis_settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
# Looking for new failing examples, on purpose: not for CI.
hypothesis_settings.register_profile("explore", max_examples=2000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# How long processes may take to finish once the tests are over.
LEFTOVER_WAIT_S = 10.0
_adopting = False
# With pytest-xdist (``-n``), each worker checks its own children at its end
# and tells the controller what it found: the controller's children are the
# workers themselves.
_LEFTOVER_KEY = "boulanger_leftover_processes"
_reported: list[str] = []


# Files that take longest run first (make test hands files out in collection
# order, --no-loadscope-reorder): the browser tests, each file tens of seconds,
# then the many short files fill the workers' gaps, and no worker is left with
# a long one at the end.
LONG_FIRST = ("tests/client/",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def long_first(item: pytest.Item) -> int:
        return 0 if item.nodeid.startswith(LONG_FIRST) else 1

    items.sort(key=long_first)  # stable: each file's own order kept


def pytest_configure(config: pytest.Config) -> None:
    global _adopting
    # Orphans of the processes the tests start come to this process, not to
    # init: at the end, every child still running was left behind by a test.
    _adopting = processes.adopt_orphans()


def _leftovers() -> list[str]:
    """This process's children still running, each described, then killed."""
    # The solver workers of the apps served in process are this process's
    # children, and with them came multiprocessing's resource tracker, which
    # would end with this process: it is stopped here (it waits for it), so
    # that whatever is left now was left by a test.
    stop_tracker = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop_tracker is not None:
        stop_tracker()
    left = processes.wait_gone(processes.children(os.getpid()), LEFTOVER_WAIT_S)
    lines = [p.describe() for p in left]
    if left:
        processes.kill(left)
        processes.wait_gone(left, LEFTOVER_WAIT_S)
    processes.reap_exited_children()
    return lines


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """An xdist worker is done: what it found left running (see :func:`_leftovers`)."""
    _reported.extend(getattr(node, "workeroutput", {}).get(_LEFTOVER_KEY, []))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Captured output as UTF-8 can carry it: the log of an app served in the test's
    process may quote a client's lone surrogates, which an xdist worker could not
    send to the controller (it would crash)."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [
        (title, text.encode("utf-8", "backslashreplace").decode("utf-8"))
        for title, text in report.sections
    ]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if config.pluginmanager.hasplugin("dsession"):  # the xdist controller
        lines = list(_reported)
    elif not _adopting:
        return
    else:
        lines = _leftovers()
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports
            workeroutput[_LEFTOVER_KEY] = lines
            return
    if lines:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_sep("=", "processes left running after the tests (killed now)", red=True)
            for line in lines:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Short countdowns, a message budget a scripted winner cannot exceed, hints
# that a busy machine cannot turn into "unknown", and the cheapest password
# hashing: a server starts with one hash (and these servers' tests make no
# accounts; tests/web/test_accounts.py runs with the production cost).
FAST_TEST_ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_HINT_BUDGET_S": "30",
    **CHEAP_HASHING,
}


@pytest.fixture(scope="session")
def redis_proc() -> Iterator[RedisProcess]:
    """A throwaway redis-server (AOF on) shared by the session's tests."""
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """A throwaway Redis Cluster (3 primaries, 3 replicas) shared by the session's tests.

    Tests that kill its nodes start a cluster of their own.
    """
    with RedisCluster() as cluster:
        yield cluster


@pytest.fixture
def own_cluster() -> Iterator[RedisCluster]:
    """A Redis Cluster of this test's own, free to have nodes killed and slots moved."""
    with RedisCluster() as cluster:
        yield cluster


@pytest.fixture
async def memory_server() -> AsyncIterator[AppServer]:
    async with AppServer("memory://", env=FAST_TEST_ENV) as server:
        yield server


@pytest.fixture
async def redis_server(redis_proc: RedisProcess) -> AsyncIterator[AppServer]:
    """On the session's Redis: its races and daily entries stay there after the test."""
    async with AppServer(redis_proc.url, env=FAST_TEST_ENV) as server:
        yield server


@pytest.fixture
async def sqlite_server(tmp_path: Path) -> AsyncIterator[AppServer]:
    async with AppServer(f"sqlite:///{tmp_path / 'boulanger.db'}", env=FAST_TEST_ENV) as server:
        yield server


@pytest.fixture(params=["memory", "sqlite", "redis"])
def server(request: pytest.FixtureRequest) -> AppServer:
    """The race suite runs on every broker."""
    served: AppServer = request.getfixturevalue(f"{request.param}_server")
    return served


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    """A redis-server of this test's own, free to be killed and restarted."""
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture
async def two_apps(own_redis: RedisProcess) -> AsyncIterator[tuple[AppServer, AppServer]]:
    """Two apps on one Redis, each with its own connections: docker-compose.yml's
    two processes, served in the test's loop."""
    async with (
        AppServer(own_redis.url, env=FAST_TEST_ENV) as one,
        AppServer(own_redis.url, env=FAST_TEST_ENV) as two,
    ):
        yield one, two


@pytest.fixture
def two_servers(own_redis: RedisProcess) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one Redis: the topology of docker-compose.yml (for the
    tests that kill one)."""
    pair = (
        ServerProcess(own_redis.url, env=FAST_TEST_ENV),
        ServerProcess(own_redis.url, env=FAST_TEST_ENV),
    )
    for proc in pair:
        proc.start()
    yield pair
    for proc in pair:
        proc.stop()
