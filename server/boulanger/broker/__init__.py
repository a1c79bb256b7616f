"""Brokers: race logs and pub/sub, in memory, in a SQLite file or in Redis, chosen by URL."""

from .base import AppendRefused, Broker, BrokerUnavailable, Condition, Listener, race_channel
from .stores import Store, open_broker, open_store

__all__ = [
    "AppendRefused",
    "Broker",
    "BrokerUnavailable",
    "Condition",
    "Listener",
    "Store",
    "open_broker",
    "open_store",
    "race_channel",
]
