"""Redis Cluster's hash slots: the slot of a key, and the node that serves each slot.

Pure: no I/O. A key's slot is the CRC16 (XMODEM) of its hash tag, the part
between the first ``{`` and the next ``}`` when that part is not empty, or
of the whole key, modulo 16384. Every key and the channel of one race share
the ``{race_id}`` tag, so a race lives on one shard.
"""

from __future__ import annotations

import binascii
from typing import TypeAlias

from .resp import Reply

SLOTS = 16384

Node: TypeAlias = tuple[str, int]  # host, port


def key_slot(key: str) -> int:
    """The slot of ``key`` (or of a channel: sharded pub/sub hashes channels alike)."""
    data = key.encode()
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    return binascii.crc_hqx(data, 0) % SLOTS


def redirect(reply: str, asked: Node) -> tuple[str, int, Node] | None:
    """A ``MOVED``/``ASK`` error's kind, slot and node; None for any other error.

    ``MOVED 3999 127.0.0.1:6381``; an empty host means the node that answered.
    """
    parts = reply.split(" ")
    if len(parts) != 3 or parts[0] not in ("MOVED", "ASK"):
        return None
    host, _, port = parts[2].rpartition(":")
    if not port.isdigit() or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1]), (host.strip("[]") or asked[0], int(port))


class SlotMap:
    """Which primary serves each slot, and every node known, from ``CLUSTER SLOTS``."""

    __slots__ = ("_owners", "nodes", "ranges")

    def __init__(
        self, ranges: list[tuple[int, int, Node]], nodes: list[Node] | None = None
    ) -> None:
        self.ranges = sorted(ranges)
        self._owners: list[Node | None] = [None] * SLOTS
        for first, last, node in self.ranges:
            self._owners[first : last + 1] = [node] * (last - first + 1)
        # Primaries first, then replicas: whom to ask for the next map.
        self.nodes = list(dict.fromkeys([*(node for _, _, node in self.ranges), *(nodes or [])]))

    @classmethod
    def parse(cls, reply: Reply, asked: Node) -> SlotMap:
        """The map from a ``CLUSTER SLOTS`` reply given by ``asked``.

        Each entry is ``[first, last, [host, port, id, ...], replica...]``; an
        empty host (or ``?``) is the asked node's.
        """
        if not isinstance(reply, list):
            raise ValueError(f"CLUSTER SLOTS answered {reply!r:.100}")
        ranges: list[tuple[int, int, Node]] = []
        others: list[Node] = []
        for entry in reply:
            if not isinstance(entry, list) or len(entry) < 3:
                raise ValueError(f"unexpected CLUSTER SLOTS entry {entry!r:.100}")
            first, last = entry[0], entry[1]
            if not isinstance(first, int) or not isinstance(last, int) or not 0 <= first <= last:
                raise ValueError(f"unexpected slot range {entry!r:.100}")
            nodes = [_node(item, asked) for item in entry[2:]]
            ranges.append((first, min(last, SLOTS - 1), nodes[0]))
            others.extend(nodes[1:])
        return cls(ranges, others)

    def owner(self, slot: int) -> Node | None:
        """The primary that owns ``slot``, or None when no node claims it."""
        return self._owners[slot]

    def primaries(self) -> set[Node]:
        """Every primary that owns a range of slots."""
        return {node for _, _, node in self.ranges}

    @property
    def complete(self) -> bool:
        return None not in self._owners

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SlotMap) and other.ranges == self.ranges

    def __hash__(self) -> int:
        return hash(tuple(self.ranges))

    def __repr__(self) -> str:
        return f"SlotMap({self.ranges!r})"


def _node(item: Reply, asked: Node) -> Node:
    if not isinstance(item, list) or len(item) < 2 or not isinstance(item[1], int):
        raise ValueError(f"unexpected CLUSTER SLOTS node {item!r:.100}")
    host = item[0].decode() if isinstance(item[0], bytes) else ""
    return (asked[0] if host in ("", "?") else host), item[1]


def parse_cluster_url(url: str) -> tuple[list[Node], str]:
    """The seed nodes of ``redis-cluster://[user:password@]host:port[,host:port...]``,
    and a ``redis://`` URL of the first with the credentials (for :class:`Endpoint`)."""
    rest = url.removeprefix("redis-cluster://")
    if rest == url:
        raise ValueError(f"not a redis-cluster:// URL: {url!r}")
    rest = rest.split("/", 1)[0].split("?", 1)[0]
    userinfo, _, hosts = rest.rpartition("@")
    seeds: list[Node] = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{item!r} in {url!r} is not host:port")
        seeds.append((host.strip("[]"), int(port)))
    first = f"[{seeds[0][0]}]" if ":" in seeds[0][0] else seeds[0][0]
    auth = f"{userinfo}@" if userinfo else ""
    return seeds, f"redis://{auth}{first}:{seeds[0][1]}/0"
