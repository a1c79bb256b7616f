"""Shared fixtures: real redis-server and boulanger server processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.servers import RedisCluster, RedisProcess, ServerProcess

# Short countdowns, and a message budget a scripted winner cannot exceed.
FAST_TEST_ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
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
