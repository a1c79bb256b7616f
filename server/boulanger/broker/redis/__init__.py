"""The Redis broker and what it is made of (the Redis Cluster broker, :mod:`..cluster`, shares it).

- :mod:`.endpoint`: where a connection goes (host, unix socket, TLS, AUTH).
- :mod:`.subscriber`: the pub/sub connection, kept open and resynced.
- :mod:`.appender`: the append connection, commands pipelined.
- :mod:`.scripts`: the Lua scripts of a race's log and their commands.
- :mod:`.broker`: :class:`RedisBroker`, the broker on one Redis.
- :mod:`.daily`: :class:`RedisDailyStore`, the daily challenge in Redis.
"""

from ..base import CONTROL_CHANNEL
from .broker import REPLICA_WAIT_MS, RedisBroker
from .daily import RedisDailyStore
from .scripts import (
    APPEND_SCRIPT,
    APPEND_SHA,
    CONFIRM,
    RACE_TTL_S,
    append_command,
    append_script,
    check_script_loaded,
    confirm_command,
    race_key,
)

# The names this module had before it was a package.
_APPEND = APPEND_SCRIPT
_APPEND_SHA = APPEND_SHA
_key = race_key

__all__ = [
    "APPEND_SCRIPT",
    "APPEND_SHA",
    "CONFIRM",
    "CONTROL_CHANNEL",
    "RACE_TTL_S",
    "REPLICA_WAIT_MS",
    "_APPEND",
    "_APPEND_SHA",
    "RedisBroker",
    "RedisDailyStore",
    "_key",
    "append_command",
    "append_script",
    "check_script_loaded",
    "confirm_command",
    "race_key",
]
