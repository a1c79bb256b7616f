"""Brokers: race logs and pub/sub, in memory or in Redis, chosen by URL."""

from .base import Broker, BrokerUnavailable, Condition, Listener, open_broker, race_channel

__all__ = ["Broker", "BrokerUnavailable", "Condition", "Listener", "open_broker", "race_channel"]
