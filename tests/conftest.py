"""Shared fixtures: real redis-server and boulanger server processes.

Also two rules for the whole run: hypothesis tries the same examples every
time (profile ``ci``; ``HYPOTHESIS_PROFILE=explore`` looks for new ones), and
no process the tests started may outlive them (checked at the end).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from support import processes
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


def pytest_configure(config: pytest.Config) -> None:
    global _adopting
    # Orphans of the processes the tests start come to this process, not to
    # init: at the end, every child still running was left behind by a test.
    _adopting = processes.adopt_orphans()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _adopting:
        return
    left = processes.wait_gone(processes.children(os.getpid()), LEFTOVER_WAIT_S)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [p.describe() for p in left]
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_sep("=", "processes left running after the tests (killed now)", red=True)
            for line in lines:
                reporter.write_line(line)
        processes.kill(left)
        processes.wait_gone(left, LEFTOVER_WAIT_S)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    processes.reap_exited_children()


# Short countdowns, a message budget a scripted winner cannot exceed, and
# hints that a busy machine cannot turn into "unknown".
FAST_TEST_ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_HINT_BUDGET_S": "30",
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


@pytest.fixture(scope="session")
def memory_server() -> Iterator[ServerProcess]:
    server = ServerProcess("memory://", env=FAST_TEST_ENV)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server(redis_proc: RedisProcess) -> Iterator[ServerProcess]:
    server = ServerProcess(redis_proc.url, env=FAST_TEST_ENV)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("sqlite") / "boulanger.db"
    server = ServerProcess(f"sqlite:///{path}", env=FAST_TEST_ENV)
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "sqlite", "redis"])
def server(request: pytest.FixtureRequest) -> ServerProcess:
    """The race suite runs on every broker."""
    proc: ServerProcess = request.getfixturevalue(f"{request.param}_server")
    return proc


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    """A redis-server of this test's own, free to be killed and restarted."""
    proc = RedisProcess()
    proc.start()
    yield proc
    proc.cleanup()


@pytest.fixture
def two_servers(own_redis: RedisProcess) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one Redis: the topology of docker-compose.yml."""
    pair = (
        ServerProcess(own_redis.url, env=FAST_TEST_ENV),
        ServerProcess(own_redis.url, env=FAST_TEST_ENV),
    )
    for proc in pair:
        proc.start()
    yield pair
    for proc in pair:
        proc.stop()
