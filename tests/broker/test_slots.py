"""Hash slots, the slot map, redirections and the cluster URL, without a cluster."""

from __future__ import annotations

import pytest

from boulanger.broker.redis.resp import ReplyError
from boulanger.broker.redis.slots import SLOTS, SlotMap, key_slot, parse_cluster_url, redirect


def test_key_slots_as_redis_computes_them() -> None:
    # Values from the Redis Cluster specification and CLUSTER KEYSLOT.
    assert key_slot("somekey") == 11058
    assert key_slot("123456789") == 0x31C3 % SLOTS
    assert key_slot("foo{hash_tag}") == key_slot("bar{hash_tag}") == key_slot("hash_tag") == 2515
    # An empty tag does not count; only the first { opens one (CLUSTER KEYSLOT agrees:
    # tests/broker/test_cluster.py asks a real node).
    assert key_slot("{}x") == 10595
    assert key_slot("a{}{b}") == 15033 != key_slot("b")
    assert key_slot("{a}{b}") == key_slot("a")
    # A race's keys and channel share its slot.
    slots = {key_slot(f"bk:race:{{Xy3v9Kq2}}{part}") for part in (":log", ":state", ":meta", "")}
    assert len(slots) == 1


def test_a_slot_map_from_cluster_slots() -> None:
    reply = [
        [0, 5460, [b"10.0.0.1", 7000, b"id1"], [b"10.0.0.4", 7003, b"id4"]],
        [10923, 16383, [b"", 7002, b"id3"], [b"?", 7005, b"id6"]],
        [5461, 10922, [b"10.0.0.2", 7001, b"id2", [b"hostname", b"x"]]],
    ]
    slots = SlotMap.parse(reply, ("10.0.0.9", 7002))
    assert slots.owner(0) == slots.owner(5460) == ("10.0.0.1", 7000)
    assert slots.owner(5461) == ("10.0.0.2", 7001)
    assert slots.owner(16383) == ("10.0.0.9", 7002)  # an empty host: the node asked
    assert slots.primaries() == {("10.0.0.1", 7000), ("10.0.0.2", 7001), ("10.0.0.9", 7002)}
    assert slots.nodes[:3] == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("10.0.0.9", 7002)]
    assert set(slots.nodes[3:]) == {("10.0.0.4", 7003), ("10.0.0.9", 7005)}
    assert slots.complete
    assert slots == SlotMap.parse(list(reversed(reply)), ("10.0.0.9", 7002))
    partial = SlotMap.parse(reply[:1], ("h", 1))
    assert not partial.complete and partial.owner(6000) is None and partial != slots
    for bad in (ReplyError("ERR This instance has cluster support disabled"), [[1]], [[5, 2, []]]):
        with pytest.raises(ValueError):
            SlotMap.parse(bad, ("h", 1))


def test_redirections_are_read() -> None:
    asked = ("10.0.0.9", 7000)
    assert redirect("MOVED 3999 127.0.0.1:6381", asked) == ("MOVED", 3999, ("127.0.0.1", 6381))
    assert redirect("ASK 3999 :6381", asked) == ("ASK", 3999, ("10.0.0.9", 6381))
    assert redirect("ASK 1 [::1]:6381", asked) == ("ASK", 1, ("::1", 6381))
    for other in ("TRYAGAIN Multiple keys", "MOVED x 1:2", "MOVED 1 host", "ERR MOVED 1 h:2"):
        assert redirect(other, asked) is None


def test_cluster_urls() -> None:
    seeds, url = parse_cluster_url("redis-cluster://10.0.0.1:7000,10.0.0.2:7001")
    assert seeds == [("10.0.0.1", 7000), ("10.0.0.2", 7001)]
    assert url == "redis://10.0.0.1:7000/0"
    seeds, url = parse_cluster_url("redis-cluster://ann:p%40ss@redis-1:6379, redis-2:6379/")
    assert seeds == [("redis-1", 6379), ("redis-2", 6379)]
    assert url == "redis://ann:p%40ss@redis-1:6379/0"
    for bad in ("redis-cluster://", "redis-cluster://host", "redis-cluster://h:1,h", "redis://h:1"):
        with pytest.raises(ValueError):
            parse_cluster_url(bad)
