"""The store: race logs and pub/sub, accounts' keys, the daily challenge and per-address
limits, in memory, in a SQLite file or in Redis, chosen by URL (:func:`open_store`).

The contracts are :mod:`.contracts`; each backend is a folder (:mod:`.memory`,
:mod:`.sqlite`, :mod:`.redis`) holding its four parts.
"""

from .contracts import (
    CONTROL_CHANNEL,
    AppendRefused,
    Broker,
    BrokerUnavailable,
    Condition,
    DailyStore,
    KeyValue,
    Lease,
    Limits,
    Listener,
    Store,
    race_channel,
)
from .stores import open_broker, open_store

__all__ = [
    "CONTROL_CHANNEL",
    "AppendRefused",
    "Broker",
    "BrokerUnavailable",
    "Condition",
    "DailyStore",
    "KeyValue",
    "Lease",
    "Limits",
    "Listener",
    "Store",
    "open_broker",
    "open_store",
    "race_channel",
]
