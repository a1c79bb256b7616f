"""The broker: each race's ordered event log, and pub/sub fan-out between processes.

Four implementations share this interface: :mod:`.sqlite` (embedded, one
process, one durable file: what ``boulanger serve`` uses by default),
:mod:`.memory` (embedded, nothing kept: for tests and trying), :mod:`.redis`
(shared by many processes) and :mod:`.cluster` (the same on a Redis Cluster,
each race on its shard).
"""

from __future__ import annotations

import abc
from typing import Any, Protocol

from ..race.condition import Condition as Condition


class BrokerUnavailable(Exception):
    """The broker cannot be reached right now; the caller should try again."""


class Listener(Protocol):
    def on_message(self, data: str) -> None:
        """A message published on a subscribed channel (must not block)."""

    def on_resync(self) -> None:
        """Messages may have been lost (the connection to the broker dropped)."""


def race_channel(race_id: str) -> str:
    # The {hash tag} keeps a race's keys and channel on one Redis Cluster shard.
    return f"bk:race:{{{race_id}}}"


class Broker(abc.ABC):
    kind: str
    # Replicas an append must reach before it counts as appended (see confirm()).
    replica_wait = 0

    async def start(self) -> None:  # noqa: B027  (optional hook)
        """Connect; called once before use."""

    async def close(self) -> None:  # noqa: B027  (optional hook)
        """Disconnect and stop background tasks."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """True when the broker answers."""

    # -- race logs ---------------------------------------------------------

    @abc.abstractmethod
    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None: ...

    @abc.abstractmethod
    async def race_meta(self, race_id: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        """Append ``event`` if ``condition`` holds, and publish it; return its ``seq``.

        ``event`` is a JSON object's text, which the broker does not read
        (:func:`boulanger.codec.encode_event`). The broker numbers it (``seq``
        = the log's length + 1) and stores and publishes it with that number
        first (:func:`boulanger.codec.with_seq`). Returns 0, appending
        nothing, when the condition fails. Raises :class:`BrokerUnavailable`.
        """

    async def confirm(self, race_id: str, event: str) -> bool:
        """Whether ``event`` (a text :meth:`read` returned) is in the log, durable as an
        acknowledged append is; raises :class:`BrokerUnavailable` when that cannot be told.

        An event found in the log is on the primary, which is all an append
        promises without a replica wait: only a broker with one has to check.
        """
        return True

    @abc.abstractmethod
    async def read(self, race_id: str, after: int) -> list[str]:
        """The events with ``seq`` greater than ``after``, in order, as logged (``seq`` first)."""

    # -- pub/sub -----------------------------------------------------------

    @abc.abstractmethod
    async def subscribe(self, channel: str, listener: Listener) -> None: ...

    @abc.abstractmethod
    async def unsubscribe(self, channel: str, listener: Listener) -> None: ...

    @abc.abstractmethod
    async def publish(self, channel: str, data: str) -> None: ...


def open_broker(url: str | None, replica_wait: int = 0) -> Broker:
    """A broker chosen by URL: ``memory://`` (the default), ``sqlite:///path/to/file.db``,
    ``redis://host:port/db`` or ``redis-cluster://host:port[,host:port...]``.

    ``replica_wait``: replicas an append must reach before it is acknowledged
    (Redis brokers only; ``WAIT``).
    """
    if not url or url.startswith("memory:"):
        from .memory import MemoryBroker

        return MemoryBroker()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisBroker

        return RedisBroker(url, replica_wait=replica_wait)
    if url.startswith("redis-cluster://"):
        from .cluster import RedisClusterBroker

        return RedisClusterBroker(url, replica_wait=replica_wait)
    if url.startswith("sqlite:"):
        from .sqlite import SqliteBroker

        return SqliteBroker(url)
    raise ValueError(
        f"unknown broker URL {url!r}: use sqlite:///path/to/file.db, memory://, "
        "redis://host:port or redis-cluster://host:port[,host:port...]"
    )
