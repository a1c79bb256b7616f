"""A race's presence in one server process: its replica, its local connections.

The hub subscribes to the race's channel, hands what arrives to its replica
(:class:`~boulanger.race.replica.Replica`, which says what each text is),
reads the log whenever the replica sees a gap or the broker reconnects, and
fans each event out to the race's connections in this process, encoded once.
Local requests go through :meth:`RaceHub.submit`: decide against the replica,
append to the log if nobody appended meanwhile, apply. The hub owns what
waits: locks, timers, broker calls and sending.

:class:`Hubs` holds a process's hubs, and listens to the deployment's control
channel once for all of them: a kick (a player joined again, maybe in another
process) closes that player's other connections here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .. import codec
from ..broker import AppendRefused, Broker, BrokerUnavailable, race_channel
from ..race import protocol as p
from ..race.accounts import DELETED
from ..race.errors import Refused
from ..race.events import Event, Logged
from ..race.race import Duplicate, Race, RaceMeta
from ..race.replica import GAP, RECENT_EVENTS, Applied, Replica
from ..race.wire import ReviewWire, SnapshotWire, StandingWire
from .clock import now_ms
from .connection import CLOSE_REPLACED, CLOSE_TRY_AGAIN, Connection, send_to_all

log = logging.getLogger(__name__)

APPEND_ATTEMPTS = 8
# How long an appended event may wait for the events before it over pub/sub
# before the log is read instead.
PUBSUB_PATIENCE_S = 0.5
# How long a player pauses before their position is judged (see judge_later).
JUDGE_AFTER_S = 1.0


OverHook = Callable[["RaceHub"], Awaitable[None]]


def _deleted(player: StandingWire) -> StandingWire:
    hidden: StandingWire = {**player, "name": DELETED}
    hidden.pop("signed_in", None)  # the account is gone, and its rating with it
    hidden.pop("rating", None)
    return hidden


def shown(
    snapshot: SnapshotWire,
    deleted: frozenset[str],
    decisions: Mapping[str, ReviewWire] | None = None,
) -> SnapshotWire:
    """``snapshot`` with the names of the ``deleted`` players' accounts hidden, and
    moderators' ``decisions`` (player id -> review) in their players' standings."""
    if not deleted and not decisions:
        return snapshot
    players = []
    for player in snapshot["players"]:
        pid = player["player_id"]
        if pid in deleted:
            player = _deleted(player)
        if decisions and pid in decisions:
            player = {**player, "review": decisions[pid]}
        players.append(player)
    return {**snapshot, "players": players}


class RaceHub:
    """One race in this process: its replica, its connections here, and the requests
    of those connections, appended to the race's log through the broker."""

    def __init__(
        self,
        broker: Broker,
        meta: RaceMeta,
        on_over: OverHook | None = None,
        judge_after_s: float = JUDGE_AFTER_S,
    ) -> None:
        self.broker = broker
        self.judge_after_s = judge_after_s
        # Players of this process whose position waits to be judged: when (loop
        # time), and the one timer each (re-armed when it fires too early).
        self._judge_due: dict[str, float] = {}
        self._judge_timers: dict[str, asyncio.TimerHandle] = {}
        # Called (possibly more than once, in any process) once the race is over.
        self.on_over = on_over
        self.replica = Replica(meta, codec)
        self.channel = race_channel(meta.race_id)
        self.connections: set[Connection] = set()
        self.lock = asyncio.Lock()  # decisions about the whole race
        self._player_locks: dict[str, asyncio.Lock] = {}  # one player's actions
        # submit() calls waiting for the replica to reach a seq.
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.last_used = time.monotonic()
        self._catching_up: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._over_done = False
        # Players whose account was deleted: snapshots show them as "deleted
        # player" (see RaceResults.find_deleted; read again at every welcome).
        self.deleted: frozenset[str] = frozenset()
        # Moderators' decisions on its results (see Desk.find_decisions), by player.
        self.decisions: dict[str, ReviewWire] = {}

    def snapshot(self, now: int) -> SnapshotWire:
        """The race as a client sees it at ``now``, with deleted accounts' names hidden
        and moderators' decisions shown."""
        return shown(self.race.snapshot(now), self.deleted, self.decisions)

    @property
    def race(self) -> Race:
        """The race as this process has it (a new object after a :meth:`rebuild`)."""
        return self.replica.race

    @property
    def race_id(self) -> str:
        return self.race.race_id

    async def open(self) -> None:
        """Subscribe to the race's channel, then read its log."""
        # Subscribe first, then read the log: nothing falls in between.
        await self.broker.subscribe(self.channel, self)
        await self.catch_up()

    async def close(self) -> None:
        """Stop timers and tasks, and unsubscribe."""
        if self._timer is not None:
            self._timer.cancel()
        for timer in self._judge_timers.values():
            timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await self.broker.unsubscribe(self.channel, self)

    # -- listener --------------------------------------------------------

    def on_message(self, data: str) -> None:
        """An event published on the race's channel: its replica says what to do."""
        try:
            received = self.replica.receive(data)
        except ValueError:  # no event: nothing else goes on a race's channel
            log.warning("race %s: dropped a text that is no event: %.100r", self.race_id, data)
            return
        if isinstance(received, Applied):
            self._applied(received)
        elif received is GAP:
            self.on_resync()

    def on_resync(self) -> None:
        """Messages may be lost: read the log (once at a time, until the broker answers)."""
        if self._catching_up is None or self._catching_up.done():
            self._catching_up = self._spawn(self._resync())

    async def _resync(self) -> None:
        delay = 0.05
        while True:
            try:
                # The broker reconnected: maybe to a replica promoted in a
                # failover, whose log may lack events applied here.
                await self.catch_up(verify=True)
                return
            except BrokerUnavailable:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def catch_up(self, verify: bool = False) -> list[Logged]:
        """Apply what the log has beyond the replica; return those events.

        With ``verify``, first check that the log still holds the last event
        applied here, and rebuild the replica from the log if it does not.
        """
        texts = await self.broker.read(self.race_id, self.replica.read_after(verify))
        applied = self.replica.catch_up(texts, verify)
        if applied is None:
            await self.rebuild()
            return []
        for one in applied:
            self._applied(one)
        self._check_over()
        return [one.logged for one in applied]

    async def rebuild(self) -> None:
        """Start the replica afresh from the log, and send every connection a snapshot.

        For a log that lost events this replica applied: a Redis failover
        loses the appends its primary had not passed to the replica, and
        their events may have reached this process by pub/sub already (with
        the replica wait on, none of them was acknowledged).
        """
        texts = await self.broker.read(self.race_id, 0)
        self.replica = Replica.rebuilt(self.race.meta, texts, codec)
        race = self.race
        log.warning("race %s: rebuilt from the log (%d events)", self.race_id, race.seq)
        for seq, waiter in self._waiters:
            if seq <= race.seq and not waiter.done():
                waiter.set_result(None)
        now = now_ms()
        for conn in list(self.connections):
            player = race.players.get(conn.player_id or "")
            if conn.player_id is not None and player is None:
                conn.close(CLOSE_TRY_AGAIN)  # their join was lost: join again
                continue
            game = None if player is None else player.view()
            conn.send(codec.encode(p.Snapshot(self.snapshot(now), game)))
        self._arm_timer()
        self._check_over()

    # -- applying --------------------------------------------------------

    def _applied(self, applied: Applied) -> None:
        """An event the replica applied: wake who waits for it, send its message to all."""
        if self._waiters:
            for seq, waiter in self._waiters:
                if seq <= self.race.seq and not waiter.done():
                    waiter.set_result(None)
        player_id = applied.board_of
        # A player's progress may wait its window (web.frames.Ticker): the
        # player's own ack takes theirs at once; joins, the start and the end go now.
        if applied.told:
            send_to_all(self.connections, applied.text, soon=player_id is None)
        else:  # nothing the others see changed (Race.told): the player's own connections
            own = [c for c in self.connections if c.player_id == player_id]
            if own:
                send_to_all(own, applied.text, soon=False)
        if player_id is not None:
            self._send_board(player_id)  # after a resign: the board's final status
        elif applied.started:
            self._arm_timer()
        self._check_over()

    def _send_board(self, player_id: str) -> None:
        race = self.race
        watchers = [c for c in self.connections if c.watching == player_id]
        if watchers:
            # Checked again for every board: nobody else sees a board still playing.
            now = now_ms()
            watchers = [
                c for c in watchers if race.watch_refusal(c.player_id, player_id, now) is None
            ]
        if watchers:
            game = race.players[player_id].view()
            send_to_all(watchers, codec.encode(p.BoardUpdate(player_id, game)), soon=False)

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        ends_at = self.race.ends_at
        if ends_at is None or self.race.over_reason is not None:
            return
        delay = max(0.0, (ends_at - now_ms()) / 1000) + 0.01
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(delay, self._check_over)

    def _check_over(self) -> None:
        if self.race.decide_over(now_ms()) is not None:
            self._spawn(self._finish())
        elif self.race.over_reason is not None and self.on_over is not None and not self._over_done:
            self._over_done = True
            self._spawn(self._run_over_hook())

    async def _run_over_hook(self) -> None:
        assert self.on_over is not None
        try:
            await self.on_over(self)
        except Exception:
            self._over_done = False  # try again on the next event or resync
            log.exception("race %s: on-over hook failed", self.race_id)

    async def _finish(self) -> None:
        with contextlib.suppress(Refused, BrokerUnavailable):
            await self.submit(lambda: self.race.decide_over(now_ms()))

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- requests --------------------------------------------------------

    async def submit(
        self,
        decide: Callable[[], Event | Duplicate | None],
        player_id: str | None = None,
    ) -> Logged | Duplicate | None:
        """Decide against the replica and append; retry when another process appended first.

        With ``player_id``, the decision concerns that player's game alone (an
        action): it waits only for that player's earlier requests, so the
        players of a race have their appends in flight together (each append
        is a round trip to Redis). Other decisions wait for each other.

        Raises :class:`Refused` (the decision's refusal, or ``try_again``
        when the broker is unreachable).
        """
        lock = self.lock
        if player_id is not None:
            lock = self._player_locks.get(player_id) or self._player_locks.setdefault(
                player_id, asyncio.Lock()
            )
        async with lock:
            for _ in range(APPEND_ATTEMPTS):
                decision = decide()
                if decision is None:
                    return None
                try:
                    if isinstance(decision, Duplicate):
                        # Applied here already: its first append went through.
                        ours = self.replica.action_of(player_id, decision)
                        await self._durable(decision.seq, ours)
                        return decision
                    body = codec.encode_event(decision)
                    try:
                        seq = await self.broker.append(
                            self.race_id, body, self.race.condition(decision)
                        )
                    except AppendRefused:
                        # Refused: the log moved on in a way that matters, or our
                        # own append went through but its answer was lost (a
                        # retried call). Catch up, and decide again if not ours.
                        seq_before = self.race.seq
                        found = await self.catch_up()
                        mine = Replica.mine(decision, found)
                        if mine is not None:
                            await self._durable(mine.seq, Replica.same_as(decision))
                            return mine
                        if not found and self.race.seq == seq_before:
                            # Refused, and the log has nothing new: it lacks
                            # something this replica applied.
                            await self.catch_up(verify=True)
                        continue
                    logged = Logged(seq, decision)
                    if seq == self.race.seq + 1:
                        self._applied(self.replica.apply(logged, codec.with_seq(seq, body)))
                    elif seq > self.race.seq:
                        await self._until_applied(seq)  # others' events came first
                    return logged
                except BrokerUnavailable:
                    raise Refused(
                        "try_again", "the server cannot record actions right now; send it again"
                    ) from None
            raise Refused("try_again", "the race is busy; send it again")

    # -- judging a position -------------------------------------------------

    def judge_later(self, player_id: str) -> None:
        """After the player's action here: judge their position once they pause.

        Whether a position is stuck or a dead end takes a search (the largest
        part of the race's own work on an action, docs/performance.md). A
        player who keeps acting needs no verdict on each passing position, and
        only tight positions can be either, so this process judges a tight one
        when its player has not acted for ``judge_after_s``, and logs the
        verdict when it changes their status (a ``progress`` event for all).
        Each action only notes when the judgement is due; one timer per player
        waits for it.
        """
        if not self.race.needs_judging(player_id):
            self._judge_due.pop(player_id, None)
            return
        loop = asyncio.get_running_loop()
        self._judge_due[player_id] = loop.time() + self.judge_after_s
        if player_id not in self._judge_timers:
            self._judge_timers[player_id] = loop.call_later(
                self.judge_after_s, self._judge_when_due, player_id
            )

    def _judge_when_due(self, player_id: str) -> None:
        del self._judge_timers[player_id]
        due = self._judge_due.get(player_id)
        if due is None:  # the player moved to a position that needs no judging
            return
        loop = asyncio.get_running_loop()
        if due > loop.time():  # they acted since the timer was set: wait for the rest
            self._judge_timers[player_id] = loop.call_later(
                due - loop.time(), self._judge_when_due, player_id
            )
            return
        del self._judge_due[player_id]
        self._spawn(self._judge(player_id))

    async def _judge(self, player_id: str) -> None:
        # Refused: the race ended meanwhile; unavailable: the next pause judges again.
        with contextlib.suppress(Refused, BrokerUnavailable):
            await self.submit(lambda: self.race.decide_status(player_id, now_ms()), player_id)

    async def _durable(self, seq: int, ours: Callable[[Logged], bool]) -> None:
        """Before acknowledging an event found applied (a retried action), make sure
        it is as durable as an acknowledged append: raises BrokerUnavailable if not.

        An append reported failed (its answer lost, or, with the replica wait
        on, WAIT saw no replica in time) may still be in the primary's log,
        and from there in this replica (by pub/sub or a catch-up). The player
        was answered try_again and sends the action again with the same
        action_id; it is then found applied here (a Duplicate) or in the log
        (the append refused: that player's events moved on). Without a
        replica wait, an event read from the primary's log is as durable as
        any acknowledged append: nothing to do. With one it may be on the
        primary alone, and a failover now would lose an acknowledged action.
        So the broker confirms it: the log must hold this very event at its
        seq (``ours``), and a WAIT behind a write that follows it must see
        the replicas. If WAIT does not, the action is answered try_again
        again, and the client's next resend confirms again (the event is
        never appended twice: the replica and the log both have it). If the
        log no longer holds it (a failover lost it), this replica is ahead
        of the log: it is rebuilt from the log and the action answered
        try_again; the resend is then decided afresh and appended.
        """
        if not self.broker.replica_wait:
            return
        texts = await self.broker.read(self.race_id, seq - 1)
        text = texts[0] if texts and codec.seq_of(texts[0]) == seq else None
        if (
            text is None
            or not ours(codec.decode_logged(text))
            or not await self.broker.confirm(self.race_id, text)
        ):
            await self.rebuild()
            raise BrokerUnavailable(f"the log lost event {seq} of race {self.race_id}")

    async def _until_applied(self, seq: int) -> None:
        """Wait until the replica has applied ``seq``: the events before it come
        by pub/sub, in order, right behind the append's answer; read the log
        if they are slow (a dropped message, a broker reconnecting)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, waiter))
        try:
            await asyncio.wait_for(waiter, PUBSUB_PATIENCE_S)
        except TimeoutError:
            await self.catch_up()
        finally:
            self._waiters = [w for w in self._waiters if w[1] is not waiter]

    def attach(self, conn: Connection) -> None:
        """A connection of this race in this process gets its events from now on."""
        self.connections.add(conn)
        self.last_used = time.monotonic()

    def detach(self, conn: Connection) -> None:
        """The connection is gone."""
        self.connections.discard(conn)
        self.last_used = time.monotonic()

    async def kick_others(self, conn: Connection) -> None:
        """Close this player's other connections, in every process."""
        assert conn.player_id is not None
        kick = codec.Kick(self.race_id, conn.player_id, conn.nonce)
        self.kicked(kick)  # here at once; other processes by the control channel
        with contextlib.suppress(BrokerUnavailable):
            await self.broker.publish_control(codec.encode_kick(kick))

    def kicked(self, kick: codec.Kick) -> None:
        """Close the kicked player's connections here, but the one it keeps."""
        for conn in list(self.connections):
            if conn.player_id == kick.player_id and conn.nonce != kick.keep:
                conn.close(CLOSE_REPLACED)

    def missed_since(self, last_seq: int, most: int = RECENT_EVENTS) -> list[str] | None:
        """Encoded events after ``last_seq``; None when they are more than ``most`` or gone."""
        return self.replica.missed_since(last_seq, most)


class Hubs:
    """This process's hubs, opened on demand and closed when idle; the listener of
    the deployment's control channel (one subscription for every race)."""

    def __init__(
        self,
        broker: Broker,
        idle_s: float,
        on_over: OverHook | None = None,
        judge_after_s: float = JUDGE_AFTER_S,
    ) -> None:
        self.broker = broker
        self.idle_s = idle_s
        self.on_over = on_over
        self.judge_after_s = judge_after_s
        self._hubs: dict[str, RaceHub] = {}
        self._opening: dict[str, asyncio.Future[RaceHub | None]] = {}

    def __len__(self) -> int:
        return len(self._hubs)

    async def start(self) -> None:
        """Listen to the control channel (the broker started)."""
        await self.broker.subscribe_control(self)

    def on_message(self, data: str) -> None:
        """A control message: a kick closes connections of its race's hub here, if any."""
        kick = codec.decode_control(data)
        if kick is None:
            log.warning("dropped a control message of no known kind: %.100r", data)
            return
        hub = self._hubs.get(kick.race_id)
        if hub is not None:
            hub.kicked(kick)

    def on_resync(self) -> None:
        """Control messages may have been lost: there is nothing to read them back from."""

    def all(self) -> list[RaceHub]:
        """This process's hubs now."""
        return list(self._hubs.values())

    def local(self, race_id: str) -> RaceHub | None:
        """The race's hub in this process, if it has one now (nothing is read)."""
        return self._hubs.get(race_id)

    async def get(self, race_id: str) -> RaceHub | None:
        """The hub of ``race_id``, opened if needed; None for a race that does not exist."""
        hub = self._hubs.get(race_id)
        if hub is not None:
            return hub
        pending = self._opening.get(race_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[RaceHub | None] = asyncio.get_running_loop().create_future()
        self._opening[race_id] = future
        try:
            meta = await self.broker.race_meta(race_id)
            hub = None
            if meta is not None:
                hub = RaceHub(self.broker, meta, self.on_over, self.judge_after_s)
                await hub.open()
                self._hubs[race_id] = hub
            future.set_result(hub)
            return hub
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        finally:
            del self._opening[race_id]

    async def sweep(self) -> None:
        """Close hubs nobody in this process has used for a while."""
        cutoff = time.monotonic() - self.idle_s
        for race_id, hub in list(self._hubs.items()):
            if not hub.connections and hub.last_used < cutoff:
                del self._hubs[race_id]
                await hub.close()

    async def close(self) -> None:
        """Stop listening to the control channel; close every hub of this process."""
        await self.broker.unsubscribe_control(self)
        for hub in list(self._hubs.values()):
            await hub.close()
        self._hubs.clear()
