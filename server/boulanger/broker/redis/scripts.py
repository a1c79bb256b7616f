"""The Lua scripts of a race's log, and the commands that run them.

Keys of one race share the ``{race_id}`` hash tag so that Redis Cluster
keeps them on one shard. An append is one script: it checks the append's
condition (see :class:`~..base.Condition`), numbers the event, pushes it and
publishes it, atomically, so the channel carries each race's events in log
order.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ...codec import seq_of
from ..contracts import Condition, race_channel
from .resp import UnexpectedReply, encode_command

RACE_TTL_S = 7 * 24 * 3600


def append_script(publish: str) -> str:
    """The append script, publishing with ``PUBLISH`` or (Redis Cluster) ``SPUBLISH``.

    KEYS: the log (a list), the race's state (a hash: "over", and "p:<id>"
    holding each player's number of events). ARGV: event JSON without its
    seq, channel, ttl, expected log length or "", player field or "",
    expected player events, "1" when the event ends the race.
    """
    return f"""
local len = redis.call('LLEN', KEYS[1])
if ARGV[4] ~= '' and len ~= tonumber(ARGV[4]) then return 0 end
if ARGV[5] ~= '' then
  if redis.call('HEXISTS', KEYS[2], 'over') == 1 then return 0 end
  local n = tonumber(redis.call('HGET', KEYS[2], ARGV[5]) or '0')
  if n ~= tonumber(ARGV[6]) then return 0 end
  redis.call('HSET', KEYS[2], ARGV[5], n + 1)
end
if ARGV[7] == '1' then redis.call('HSET', KEYS[2], 'over', '1') end
local seq = len + 1
local text = '{{"seq":' .. seq .. ',' .. string.sub(ARGV[1], 2)
redis.call('RPUSH', KEYS[1], text)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('{publish}', ARGV[2], text)
return seq
"""


APPEND_SCRIPT = append_script("PUBLISH")
APPEND_SHA = hashlib.sha1(APPEND_SCRIPT.encode()).hexdigest()

# Whether an event is in the log at its seq; if so, a write (the log's TTL
# renewed) that a WAIT after it can only see replicated once the event is.
# KEYS: the log; ARGV: seq, the event's text as logged, ttl.
CONFIRM = """
if redis.call('LINDEX', KEYS[1], tonumber(ARGV[1]) - 1) ~= ARGV[2] then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def race_key(race_id: str, part: str) -> str:
    """The key of one part (``log``, ``state``, ``meta``) of a race: its id is the hash tag."""
    return f"bk:race:{{{race_id}}}:{part}"


def append_command(sha: str, race_id: str, text: str, condition: Condition) -> bytes:
    """``EVALSHA`` of the append script (whose sha is ``sha``) for one event's text."""
    # The script puts "seq" first, as codec.with_seq does.
    return encode_command(
        "EVALSHA",
        sha,
        2,
        race_key(race_id, "log"),
        race_key(race_id, "state"),
        text,
        race_channel(race_id),
        RACE_TTL_S,
        "" if condition.log_length is None else condition.log_length,
        "" if condition.player_id is None else f"p:{condition.player_id}",
        condition.player_events,
        "1" if condition.ends_race else "0",
    )


def confirm_command(race_id: str, text: str) -> bytes:
    """``CONFIRM`` for a logged event's text (as :meth:`Broker.read` returned it)."""
    seq = seq_of(text)
    assert seq is not None, "not a logged event"
    return encode_command("EVAL", CONFIRM, 1, race_key(race_id, "log"), seq, text, RACE_TTL_S)


def check_script_loaded(sha: str) -> Any:
    """An :class:`~.appender.Appends` check: SCRIPT LOAD answered the script's sha."""

    def check(answers: list[Any]) -> None:
        if answers[-1] != sha.encode():
            raise UnexpectedReply(f"SCRIPT LOAD answered {answers[-1]!r:.100}")

    return check
