"""Brokers: race logs and pub/sub, in memory, in a SQLite file or in Redis, chosen by URL."""

from .base import (
    CONTROL_CHANNEL,
    AppendRefused,
    Broker,
    BrokerUnavailable,
    Condition,
    Listener,
    race_channel,
)
from .stores import Store, open_broker, open_store

__all__ = [
    "CONTROL_CHANNEL",
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
