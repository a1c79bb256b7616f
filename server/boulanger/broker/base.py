"""The broker: each race's ordered event log, and pub/sub fan-out between processes.

Four implementations share this interface: :mod:`.sqlite` (embedded, one
process, one durable file: what ``boulanger serve`` uses by default),
:mod:`.memory` (embedded, nothing kept: for tests and trying), :mod:`.redis`
(shared by many processes) and :mod:`.cluster` (the same on a Redis Cluster,
each race on its shard). :mod:`.stores` picks one by URL. Each keeps the
daily challenge's store beside its logs (:meth:`Broker.daily_store`).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Protocol

from ..race.condition import Condition as Condition

if TYPE_CHECKING:
    from .accounts import KeyValue
    from .daily import DailyStore


class BrokerUnavailable(Exception):
    """The broker cannot be reached right now; the caller should try again."""


class AppendRefused(Exception):
    """An append's condition failed: the log moved on meanwhile (nothing was appended)."""


class Listener(Protocol):
    """What a broker delivers a subscribed channel's messages to (a race hub, a live board)."""

    def on_message(self, data: str) -> None:
        """A message published on a subscribed channel (must not block)."""

    def on_resync(self) -> None:
        """Messages may have been lost (the connection to the broker dropped)."""


def race_channel(race_id: str) -> str:
    """The pub/sub channel of a race's events (nothing else goes on it)."""
    # The {hash tag} keeps a race's keys and channel on one Redis Cluster shard.
    return f"bk:race:{{{race_id}}}"


# The deployment's one control channel: messages to every process, not to a
# race's replicas (a kick: a player joined again elsewhere). Each process
# subscribes to it once, whatever the number of its races.
CONTROL_CHANNEL = "bk:control"


class Broker(abc.ABC):
    """A store of race logs with pub/sub between processes (see the module docstring).

    Open one with :func:`boulanger.broker.open_store` (with its daily store)
    or :func:`boulanger.broker.open_broker`.
    """

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
    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None:
        """Store a new race's meta (:class:`~boulanger.race.race.RaceMeta` as a dict)."""

    @abc.abstractmethod
    async def race_meta(self, race_id: str) -> dict[str, Any] | None:
        """A race's meta, or None when the race is unknown (or aged out)."""

    @abc.abstractmethod
    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        """Append ``event`` if ``condition`` holds, and publish it; return its ``seq``.

        ``event`` is a JSON object's text, which the broker does not read
        (:func:`boulanger.codec.encode_event`). The broker numbers it (``seq``
        = the log's length + 1) and stores and publishes it with that number
        first (:func:`boulanger.codec.with_seq`). Raises :class:`AppendRefused`,
        appending nothing, when the condition fails, and
        :class:`BrokerUnavailable` when the broker cannot be reached.
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
    async def subscribe(self, channel: str, listener: Listener) -> None:
        """Deliver the channel's messages to ``listener`` from now on."""

    @abc.abstractmethod
    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        """Stop delivering the channel's messages to ``listener``."""

    @abc.abstractmethod
    async def publish(self, channel: str, data: str) -> None:
        """Send ``data`` to the channel's listeners in every process (at most once)."""

    # The control channel goes through these three, not the ones above: a
    # broker may carry it otherwise than a race's channel (a cluster does).

    async def subscribe_control(self, listener: Listener) -> None:
        """Deliver the control channel's messages (:data:`CONTROL_CHANNEL`) to ``listener``."""
        await self.subscribe(CONTROL_CHANNEL, listener)

    async def unsubscribe_control(self, listener: Listener) -> None:
        """Stop delivering the control channel's messages to ``listener``."""
        await self.unsubscribe(CONTROL_CHANNEL, listener)

    async def publish_control(self, data: str) -> None:
        """Send ``data`` to every process's control listeners (at most once)."""
        await self.publish(CONTROL_CHANNEL, data)

    def shared_client(self) -> Any | None:
        """The redis-py client that the processes sharing this broker share, for the
        address limits (None: the limits are this process's own)."""
        return None

    # -- the daily challenge ---------------------------------------------------

    def key_value(self) -> KeyValue:
        """The accounts' key-value shell kept with this broker's data (one per broker)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no key-value store")

    def daily_store(self, retention_days: int) -> DailyStore:
        """The daily challenge's store kept with this broker's data."""
        raise NotImplementedError(f"{type(self).__name__} keeps no daily store")
