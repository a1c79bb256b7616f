"""A process's copy of a race's log, without I/O: what to do with each text that arrives.

The log's events reach a process by pub/sub (in order, but at most once) and,
when a gap shows, by reading the log. :class:`Replica` keeps the race those
events build, the recent messages for clients that missed a few, and the
last event applied (to tell a log that lost events, after a failover). It
answers the hub's questions: is this text the next event, an old one or a
gap; was a refused append ours after all; what did a client miss. A race's
channel carries its events and nothing else (a kick goes on the
deployment's control channel). The hub (``boulanger.web.hub``) does the waiting: locks,
timers, broker calls and sending.

Text is turned into events and messages into text by a :class:`TextCodec`
given to it (``boulanger.codec``): this package reads no JSON.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from . import protocol as p
from .events import Acted, Event, Judged, Logged, Resigned, Started
from .race import Duplicate, Race, RaceMeta

# Messages kept for clients that missed a few (older ones get a snapshot).
RECENT_EVENTS = 256


class TextCodec(Protocol):
    """What a replica needs of the codec (the module ``boulanger.codec`` is one)."""

    def encode(self, message: p.Message) -> str: ...

    def decode_logged(self, text: str) -> Logged: ...

    def seq_of(self, text: str) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Applied:
    """An event applied: ``text`` goes to every connection of the race, or (``told``
    False: a progress that changes nothing the others see) to its player's alone."""

    logged: Logged
    text: str
    told: bool = True

    @property
    def board_of(self) -> str | None:
        """The player whose game changed, its board or its status (watchers get it), if any."""
        event = self.logged.event
        return event.player_id if isinstance(event, (Acted, Resigned, Judged)) else None

    @property
    def started(self) -> bool:
        return isinstance(self.logged.event, Started)


class Gap:
    """A text from beyond the next event: events came in between, unseen (read the log)."""


GAP = Gap()


class Replica:
    """One race as this process has it, built by applying the log's events in order."""

    def __init__(self, meta: RaceMeta, codec: TextCodec) -> None:
        self.codec = codec
        self.race = Race(meta)
        # (seq, message text) of the last RECENT_EVENTS events, for missed_since.
        self.recent: deque[tuple[int, str]] = deque(maxlen=RECENT_EVENTS)
        self.last: str | None = None  # the last event applied, as logged

    @property
    def seq(self) -> int:
        return self.race.seq

    def receive(self, text: str) -> Applied | Gap | None:
        """An event published on the race's channel: applied if it is the next one
        (:class:`Applied`), ``GAP`` if events are missing before it, None if it was
        applied already. A text that is no event raises the codec's error."""
        # Most events reaching the process that appended them were applied
        # already: their seq alone says so, without parsing them.
        seq = self.codec.seq_of(text)
        if seq is None:  # not as brokers lay events out: read it whole
            seq = self.codec.decode_logged(text).seq
        if seq <= self.race.seq:
            return None
        if seq > self.race.seq + 1:
            return GAP
        return self.apply(self.codec.decode_logged(text), text)

    def apply(self, logged: Logged, text: str) -> Applied:
        """Apply the next event (``text``: as logged); return the message for everyone."""
        message = self.race.apply(logged.seq, logged.event)
        self.last = text
        sent = self.codec.encode(message)
        self.recent.append((logged.seq, sent))
        return Applied(logged, sent, self.race.told(logged.seq))

    # -- catching up from the log ------------------------------------------

    def read_after(self, verify: bool) -> int:
        """The seq to read the log after; with ``verify``, from the last event applied on."""
        return self.race.seq - (verify and self.last is not None)

    def catch_up(self, texts: list[str], verify: bool) -> list[Applied] | None:
        """Apply what ``texts`` (the log after :meth:`read_after`) holds beyond the replica.

        None when ``verify`` finds the log without the last event applied here:
        it lost events, and the replica must be rebuilt from it.
        """
        if verify and self.last is not None:
            if not texts or texts[0] != self.last:
                return None
            texts = texts[1:]
        applied = []
        for text in texts:
            logged = self.codec.decode_logged(text)
            if logged.seq == self.race.seq + 1:
                applied.append(self.apply(logged, text))
        return applied

    @classmethod
    def rebuilt(cls, meta: RaceMeta, texts: list[str], codec: TextCodec) -> Replica:
        """A replica built afresh from the whole log (``texts``)."""
        replica = cls(meta, codec)
        for text in texts:
            logged = codec.decode_logged(text)
            replica.race.apply(logged.seq, logged.event)
            replica.last = text
        return replica

    # -- whose event ---------------------------------------------------------

    @staticmethod
    def mine(decision: Event, found: list[Logged]) -> Logged | None:
        """The event of ``decision`` among ``found``: an append refused because it went
        through before (a retried call whose first answer was lost)."""
        return next((logged for logged in found if logged.event == decision), None)

    @staticmethod
    def same_as(decision: Event) -> Callable[[Logged], bool]:
        """Whether a logged event is ``decision``."""
        return lambda logged: logged.event == decision

    def action_of(self, player_id: str | None, duplicate: Duplicate) -> Callable[[Logged], bool]:
        """Whether a logged event is the player's action that ``duplicate`` answers."""
        player = self.race.players.get(player_id or "")
        ids = (
            []
            if player is None
            else [a for a, answer in player.applied.items() if answer.seq == duplicate.seq]
        )

        def ours(logged: Logged) -> bool:
            event = logged.event
            return (
                bool(ids)
                and isinstance(event, (Acted, Resigned))
                and (event.player_id, event.action_id) == (player_id, ids[0])
            )

        return ours

    # -- clients that missed events --------------------------------------------

    def missed_since(self, last_seq: int, most: int = RECENT_EVENTS) -> list[str] | None:
        """Messages of the events after ``last_seq``; None when they are more than ``most``
        or gone from the recent ones (the client needs a snapshot)."""
        if last_seq >= self.race.seq:
            return []
        if self.race.seq - last_seq > most:
            return None
        if not self.recent or self.recent[0][0] > last_seq + 1:
            return None
        return [text for seq, text in self.recent if seq > last_seq]
