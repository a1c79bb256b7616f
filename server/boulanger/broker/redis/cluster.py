"""The Redis Cluster broker: each race's log and channel on the shard that owns its slot.

``redis-cluster://[user:password@]host:port[,host:port...]`` names some
nodes of the cluster; the broker asks them for the slot map (``CLUSTER
SLOTS``) and holds, for each primary, a :class:`Shard`: the raw append
connection (:mod:`.appender`) and the sharded pub/sub subscriber
(:mod:`.subscriber`), as the Redis broker holds one of each for its
one Redis.

- An append (a race's log, meta and reads too) goes to the primary that owns
  the race's slot (every key and the channel of a race share the
  ``{race_id}`` hash tag). ``MOVED`` is followed and refreshes the slot map;
  ``ASK`` is followed with ``ASKING``; ``TRYAGAIN`` is tried again.
- The append script publishes with ``SPUBLISH``: classic ``PUBLISH`` in a
  cluster reaches every node, and its cost grows with the cluster. Each
  channel is subscribed (``SSUBSCRIBE``) on the primary that owns its slot,
  one subscriber connection per primary. After a shard's connection drops
  (a primary killed, its replica taking over) or the slot map moves a
  channel to another primary, its listeners are told to resync once the
  new subscription is confirmed: what was published in between is lost.
- The deployment's control channel (:data:`~..contracts.CONTROL_CHANNEL`) is a
  plain one: ``PUBLISH`` on any primary, ``SUBSCRIBE`` on one primary per
  process (see :meth:`RedisClusterBroker.subscribe_control`).
- The slot map is asked for again whenever a shard's connection fails or is
  lost, on ``MOVED``, when a node unsubscribes a channel by itself (its slot
  went elsewhere), and every ``refresh_interval`` seconds.

Acknowledged means in the shard's primary's log; with ``replica_wait`` it
also means on that many of its replicas (``WAIT``, see
:class:`~.appender.Appender`), so that a failover cannot lose it.

The store's other parts (key-value, daily challenge, limits) use redis-py's
cluster client (:attr:`redis`), for plain commands and scripts on one slot each.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
from typing import Any
from urllib.parse import unquote

from redis.asyncio.cluster import ClusterNode, RedisCluster

from ...race.race import RaceMeta
from ..contracts import (
    CONTROL_CHANNEL,
    AppendRefused,
    Broker,
    BrokerUnavailable,
    Condition,
    Listener,
    race_channel,
)
from .appender import Appends, ReplyRefused, retrieved
from .endpoint import REPLY_TIMEOUT_S, Endpoint
from .log import REPLICA_WAIT_MS
from .resp import Reply, ReplyError, RespReader, UnexpectedReply, encode_command
from .scripts import (
    RACE_TTL_S,
    append_command,
    append_script,
    check_script_loaded,
    confirm_command,
    race_key,
)
from .slots import Node, SlotMap, key_slot, parse_cluster_url, redirect
from .subscriber import Subscription

log = logging.getLogger(__name__)

_APPEND = append_script("SPUBLISH")
_APPEND_SHA = hashlib.sha1(_APPEND.encode()).hexdigest()
_ASKING = encode_command("ASKING")
REDIRECTS = 5  # MOVED/ASK/TRYAGAIN followed per command, at most
REFRESH_GAP_S = 0.2  # between two slot map refreshes, at least


class Shard:
    """A primary's connections: appends (and the race commands), and its channels' subscriber."""

    def __init__(self, broker: RedisClusterBroker, node: Node) -> None:
        self.node = node
        endpoint = broker.endpoint.at(*node)
        self.listeners: dict[str, set[Listener]] = {}
        self.appends = Appends(
            endpoint,
            [encode_command("SCRIPT", "LOAD", _APPEND)],
            check_script_loaded(_APPEND_SHA),
            timeout=broker.append_timeout,
            idle=broker.health_check_interval,
            replicas=broker.replica_wait,
            wait_ms=broker.replica_wait_ms,
            scripts=(_APPEND,),
            on_down=broker.want_refresh,
        )
        self.subscription = Subscription(
            endpoint,
            self.listeners,
            sharded=True,
            health_interval=broker.health_check_interval,
            health_timeout=broker.health_check_timeout,
            on_down=broker.want_refresh,
            on_moved=broker.moved,
        )

    def start(self) -> None:
        self.subscription.start()
        self.appends.open()

    async def close(self) -> None:
        await self.appends.close()
        await self.subscription.close()


class RedisClusterBroker(Broker):
    """The broker on a Redis Cluster: each race's log and channel on the shard of its hash tag."""

    kind = "redis-cluster"

    def __init__(
        self,
        url: str,
        *,
        health_check_interval: float = 10.0,
        health_check_timeout: float = 5.0,
        append_timeout: float = REPLY_TIMEOUT_S,
        replica_wait: int = 0,
        replica_wait_ms: int = REPLICA_WAIT_MS,
        refresh_interval: float = 5.0,
    ) -> None:
        self.url = url
        self.seeds, template = parse_cluster_url(url)
        self.endpoint = Endpoint(template)  # credentials, TLS and timeouts of every node
        self.health_check_interval = health_check_interval
        self.health_check_timeout = health_check_timeout
        self.append_timeout = append_timeout
        self.replica_wait = replica_wait
        self.replica_wait_ms = min(replica_wait_ms, int(append_timeout * 500))
        self.refresh_interval = refresh_interval
        username, _, password = template[len("redis://") :].rpartition("@")[0].partition(":")
        self.redis: RedisCluster = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in self.seeds],
            username=unquote(username) or None,
            password=unquote(password) or None,
            decode_responses=True,
            socket_connect_timeout=2,
            socket_timeout=5,
            # redis-py's cap: 100 connections per node, past which a command fails.
        )
        self.slots: SlotMap | None = None
        self.mapped = asyncio.Event()  # set once a slot map is known
        self._shards: dict[Node, Shard] = {}
        self._listeners: dict[str, set[Listener]] = {}
        self._homes: dict[str, Node] = {}  # channel -> the primary it is subscribed on
        self._refresh = asyncio.Event()
        self._refresher: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        # The control channel's listeners, and the primary subscribed to it on
        # (picked by this number among the primaries: processes spread out).
        self._control_listeners: dict[str, set[Listener]] = {CONTROL_CHANNEL: set()}
        self._control: tuple[Node, Subscription] | None = None
        self._control_pick = random.randrange(1 << 30)

    def __repr__(self) -> str:
        return f"RedisClusterBroker({self.url!r})"

    async def start(self) -> None:
        self._refresher = asyncio.create_task(self._refresh_loop(), name="redis-cluster-slots")

    async def close(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        shards, self._shards = list(self._shards.values()), {}
        await asyncio.gather(*(shard.close() for shard in shards))
        self._control_listeners[CONTROL_CHANNEL].clear()
        self._home_control()  # closes its subscription
        if self._closing:
            await asyncio.wait(self._closing, timeout=2)
        await self.redis.aclose()

    async def ping(self) -> bool:
        """True when the slot map is known and some primary answers."""
        slots = self.slots
        if slots is None:
            return False
        for node in sorted(slots.primaries()):
            with contextlib.suppress(BrokerUnavailable):
                if await self._command_at(node, encode_command("PING")) == b"PONG":
                    return True
        return False

    # -- the slot map ------------------------------------------------------

    def want_refresh(self) -> None:
        """Ask for the slot map again soon (a shard failed, a MOVED, a channel moved)."""
        self._refresh.set()

    def moved(self, channel: str) -> None:
        """A primary unsubscribed ``channel`` by itself: its slot went elsewhere."""
        node = self._homes.pop(channel, None)
        shard = None if node is None else self._shards.get(node)
        if shard is not None:
            shard.listeners.pop(channel, None)
        self.want_refresh()

    async def _refresh_loop(self) -> None:
        backoff = REFRESH_GAP_S
        while True:
            try:
                self._apply(await self._fetch_slots())
                backoff = REFRESH_GAP_S
                wait = self.refresh_interval
            except (OSError, UnexpectedReply, ValueError) as error:
                log.warning("redis cluster slot map: %s", str(error) or type(error).__name__)
                wait = backoff
                backoff = min(backoff * 2, 2.0)
            except Exception:  # a bug: log it, but keep the map alive
                log.exception("redis cluster slot map refresh failed")
                wait = backoff
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._refresh.wait()
            self._refresh.clear()
            await asyncio.sleep(REFRESH_GAP_S)  # a burst of failures: one refresh

    async def _fetch_slots(self) -> SlotMap:
        """The map as the first node that answers tells it: primaries, seeds, then replicas."""
        known = self.slots.nodes if self.slots is not None else []
        primaries = self.slots.primaries() if self.slots is not None else set()
        candidates = dict.fromkeys([*(n for n in known if n in primaries), *self.seeds, *known])
        errors = []
        for node in candidates:
            try:
                return SlotMap.parse(
                    await self._ask(node, encode_command("CLUSTER", "SLOTS")), node
                )
            except (OSError, UnexpectedReply, ValueError) as error:
                errors.append(f"{node[0]}:{node[1]}: {str(error) or type(error).__name__}")
        raise ConnectionError("no node answered: " + "; ".join(errors))

    async def _ask(self, node: Node, command: bytes) -> Any:
        """One command on a connection of its own (the slot map, asked for rarely)."""
        endpoint = self.endpoint.at(*node)
        async with asyncio.timeout(endpoint.connect_timeout + REPLY_TIMEOUT_S):
            reader, writer = await asyncio.open_connection(*node, ssl=endpoint.ssl)
            try:
                writer.write(endpoint.hello + command)
                resp, replies = RespReader(), list[Reply]()
                while len(replies) < (2 if endpoint.hello else 1):
                    data = await reader.read(1 << 16)
                    if not data:
                        raise ConnectionError("closed the connection")
                    replies.extend(resp.feed(data))
            finally:
                writer.transport.abort()
        for reply in replies:
            if isinstance(reply, ReplyError):  # a refused AUTH, a node not in cluster mode
                raise ConnectionError(f"answered {reply}")
        return replies[-1]

    def _apply(self, slots: SlotMap) -> None:
        """Take a new map: a shard per primary, every channel on its slot's primary."""
        if slots != self.slots:
            log.info("redis cluster slot map: %s", slots)
            self.slots = slots
            for node in slots.primaries():
                self._shard(node)
        primaries = slots.primaries()
        for node in [n for n in self._shards if n not in primaries]:
            self._retire(node)  # a primary no more, or a MOVED's target not yet in a map
        for channel in list(self._listeners):
            self._home(channel, fresh=False)
        self._home_control()
        self.mapped.set()

    def _shard(self, node: Node) -> Shard:
        shard = self._shards.get(node)
        if shard is None:
            shard = self._shards[node] = Shard(self, node)
            shard.start()
        return shard

    def _retire(self, node: Node) -> None:
        """Close a shard that is no primary any more (its channels are homed elsewhere)."""
        shard = self._shards.pop(node)
        for channel in list(shard.listeners):
            if self._homes.get(channel) == node:
                del self._homes[channel]
        shard.listeners.clear()
        task = asyncio.create_task(shard.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _home(self, channel: str, fresh: bool) -> None:
        """Subscribe ``channel`` on the primary of its slot, if not there already.

        A channel that moves (``fresh`` False) resyncs its listeners once the
        new subscription is confirmed.
        """
        slots = self.slots
        node = None if slots is None else slots.owner(key_slot(channel))
        old = self._homes.get(channel)
        if node == old:
            return
        if old is not None:
            del self._homes[channel]
            shard = self._shards.get(old)
            if shard is not None:
                shard.listeners.pop(channel, None)
                shard.subscription.remove(channel)
        if node is None:
            return
        shard = self._shard(node)
        shard.listeners[channel] = self._listeners[channel]
        self._homes[channel] = node
        shard.subscription.add(channel, resync=not fresh)

    # -- commands on a slot's primary --------------------------------------

    def _owner(self, slot: int) -> Node:
        node = None if self.slots is None else self.slots.owner(slot)
        if node is None:
            self.want_refresh()
            raise BrokerUnavailable("the cluster's slot map is not known yet")
        return node

    async def _command(self, slot: int, command: bytes, resend: bytes | None = None) -> Any:
        """``command`` on the primary that owns ``slot``, following redirections.

        ``resend`` as :meth:`~.appender.Appender.send` takes it (an append's);
        None answers any reply but a redirection as it is.
        """
        node = self._owner(slot)
        asking = False
        for _ in range(REDIRECTS):
            reply = await self._command_at(node, command, resend, asking)
            if not isinstance(reply, ReplyError):
                return reply
            text = str(reply)
            moved = redirect(text, node)
            if moved is not None:
                kind, _, node = moved
                asking = kind == "ASK"
                if not asking:
                    self.want_refresh()
                continue
            if text.startswith("TRYAGAIN"):  # keys of the slot half migrated: soon
                await asyncio.sleep(0.05)
                node, asking = self._owner(slot), False
                continue
            if text.startswith("CLUSTERDOWN"):
                self.want_refresh()
            if resend is None:
                return reply
            raise ReplyRefused(text)
        raise BrokerUnavailable(f"more than {REDIRECTS} redirections for slot {slot}")

    async def _command_at(
        self, node: Node, command: bytes, resend: bytes | None = None, asking: bool = False
    ) -> Any:
        """``command`` on ``node``'s append connection; an error reply comes back as a value."""
        shard = self._shard(node)
        appender = shard.appends.conn or await shard.appends.ready()
        if asking:
            appender.send(_ASKING, None).add_done_callback(retrieved)
        try:
            return await appender.send(command, resend)
        except ReplyRefused as refused:
            return ReplyError(*refused.args)

    # -- race logs ---------------------------------------------------------

    async def create_race(self, meta: RaceMeta) -> None:
        key = race_key(meta.race_id, "meta")
        command = encode_command("SET", key, json.dumps(meta.to_dict()), "EX", RACE_TTL_S)
        _check(await self._command(key_slot(key), command))

    async def race_meta(self, race_id: str) -> RaceMeta | None:
        key = race_key(race_id, "meta")
        text = _check(await self._command(key_slot(key), encode_command("GET", key)))
        return None if text is None else RaceMeta.from_dict(json.loads(text))

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        command = append_command(_APPEND_SHA, race_id, event, condition)
        seq = int(await self._command(key_slot(race_channel(race_id)), command, command))
        if not seq:
            raise AppendRefused(f"race {race_id}: the log has moved on")
        return seq

    async def confirm(self, race_id: str, event: str) -> bool:
        if not self.replica_wait:
            return True
        command = confirm_command(race_id, event)
        return bool(await self._command(key_slot(race_channel(race_id)), command, b""))

    async def read(self, race_id: str, after: int) -> list[str]:
        key = race_key(race_id, "log")
        texts = _check(await self._command(key_slot(key), encode_command("LRANGE", key, after, -1)))
        return [text if isinstance(text, str) else text.decode() for text in texts]

    # -- pub/sub -----------------------------------------------------------

    async def subscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is not None:
            listeners.add(listener)
            return
        self._listeners[channel] = {listener}
        self._home(channel, fresh=True)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is None:
            return
        listeners.discard(listener)
        if listeners:
            return
        del self._listeners[channel]
        node = self._homes.pop(channel, None)
        shard = None if node is None else self._shards.get(node)
        if shard is not None:
            shard.listeners.pop(channel, None)
            shard.subscription.remove(channel)

    async def publish(self, channel: str, data: str) -> None:
        _check(await self._command(key_slot(channel), encode_command("SPUBLISH", channel, data)))

    # -- the control channel -----------------------------------------------
    #
    # Plain PUBLISH and SUBSCRIBE, not the sharded pair: a cluster forwards a
    # PUBLISH to every node, whose subscribers all get it, so a process may
    # subscribe on any primary and publish on any that answers. No shard is
    # on every control message's path (a sharded channel lives on one slot:
    # its primary down, no process could kick until the failover ends), and
    # the subscribers spread over the primaries. The forwarding to every node
    # costs the cluster bus, which is why races' channels are sharded; a
    # control message is rare (one per replaced connection).

    async def subscribe_control(self, listener: Listener) -> None:
        self._control_listeners[CONTROL_CHANNEL].add(listener)
        self._home_control()

    async def unsubscribe_control(self, listener: Listener) -> None:
        self._control_listeners[CONTROL_CHANNEL].discard(listener)
        self._home_control()

    async def publish_control(self, data: str) -> None:
        command = encode_command("PUBLISH", CONTROL_CHANNEL, data)
        home = self._control[0] if self._control is not None else None
        primaries = sorted(self.slots.primaries()) if self.slots is not None else []
        if not primaries:
            self.want_refresh()
            raise BrokerUnavailable("the cluster's slot map is not known yet")
        failure: Exception | None = None
        for node in dict.fromkeys([*([home] if home in primaries else []), *primaries]):
            try:
                _check(await self._command_at(node, command))
                return
            except BrokerUnavailable as error:  # down, or refused: the next primary
                failure = error
        raise BrokerUnavailable(f"no primary took the control message: {failure}")

    def _home_control(self) -> None:
        """Keep one subscription to the control channel while it has listeners, on a
        primary of the slot map (moved when that node is a primary no more)."""
        slots = self.slots
        primaries = sorted(slots.primaries()) if slots is not None else []
        wanted = bool(self._control_listeners[CONTROL_CHANNEL]) and bool(primaries)
        current = self._control
        if current is not None and (not wanted or current[0] not in primaries):
            self._control = None
            task = asyncio.create_task(current[1].close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        if wanted and self._control is None:
            node = primaries[self._control_pick % len(primaries)]
            subscription = Subscription(
                self.endpoint.at(*node),
                self._control_listeners,
                always=(CONTROL_CHANNEL,),
                health_interval=self.health_check_interval,
                health_timeout=self.health_check_timeout,
                on_down=self.want_refresh,  # a new map moves it if the node is gone
            )
            subscription.start()
            self._control = (node, subscription)


def _check(reply: Any) -> Any:
    """A reply, or :class:`BrokerUnavailable` for an error reply."""
    if isinstance(reply, ReplyError):
        raise ReplyRefused(str(reply))
    return reply
