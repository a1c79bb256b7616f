"""The race WebSocket: ``/ws/races/{race_id}``.

A thin shell (the transport limits are :mod:`.session`'s): it decodes
messages and hands them to the race hub. Every refusal is a typed ``reject``/``error`` or a close
code; an unexpected failure is logged with the race and player ids and the
client sees only ``internal``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable

from starlette.websockets import WebSocket

from .. import codec
from ..broker import BrokerUnavailable
from ..race import protocol as p
from ..race.accounts import Account
from ..race.errors import Refused
from ..race.ids import new_player_id, new_secret
from ..race.race import Duplicate
from ..race.states import Role
from .clock import now_ms
from .connection import (
    CLOSE_NO_RACE,
    CLOSE_POLICY,
    CLOSE_TRY_AGAIN,
    TokenBucket,
)
from .hub import RaceHub
from .limits import requester
from .services import Server
from .session import Session, refuse

log = logging.getLogger(__name__)

# A client further behind than this gets a snapshot instead of the events.
RESYNC_EVENTS_MAX = 32
SNAPSHOT_COST = 8


def limited_per_address(
    endpoint: Callable[[WebSocket], Awaitable[None]],
) -> Callable[[WebSocket], Awaitable[None]]:
    """A WebSocket endpoint that refuses an address holding too many connections (1008)."""

    @functools.wraps(endpoint)
    async def limited(websocket: WebSocket) -> None:
        server: Server = websocket.app.state.server
        address = websocket.client.host if websocket.client else "?"
        held = await server.addresses.enter(address)
        if held is None:
            await refuse(websocket, CLOSE_POLICY, "too many connections from this address")
            return
        try:
            await endpoint(websocket)
        finally:
            await server.addresses.leave(held)

    return limited


@limited_per_address
async def race_socket(websocket: WebSocket) -> None:
    """``/ws/races/{race_id}``: a player's or a spectator's connection to a race."""
    server: Server = websocket.app.state.server
    try:
        hub = await server.hubs.get(websocket.path_params["race_id"])
    except BrokerUnavailable:
        await refuse(websocket, CLOSE_TRY_AGAIN, "try again")
        return
    if hub is None:
        await refuse(websocket, CLOSE_NO_RACE, "no such race")
        return
    account = None
    if server.accounts.same_origin(websocket):  # a cookie sent by another site's page is ignored
        try:
            account = await server.accounts.account_of(websocket)
        except BrokerUnavailable:
            await refuse(websocket, CLOSE_TRY_AGAIN, "try again")
            return
    await websocket.accept()
    await RaceSession(server, hub, websocket, account).run()


class RaceSession(Session):
    """One connection's conversation with one race."""

    def __init__(
        self,
        server: Server,
        hub: RaceHub,
        websocket: WebSocket,
        account: Account | None = None,
    ) -> None:
        super().__init__(server.settings, websocket, lambda: server.stopping)
        self.server = server
        self.hub = hub
        # The signed-in account (boulanger.web.accounts): a player it joins as shows its name.
        self.account = account
        settings = server.settings
        self.resync_budget = TokenBucket(settings.resync_burst, settings.resync_events_per_second)

    def describe(self) -> str:
        return f"race {self.hub.race_id} player {self.conn.player_id}"

    async def closing(self) -> None:
        self.hub.detach(self.conn)

    async def handle(self, text: str) -> None:
        try:
            message = codec.decode_client(text)
        except Refused as error:
            self.fault(error.code, error.reason, ref=error.ref, action_id=error.action_id)
            return
        action_id = getattr(message, "action_id", None)
        ref = message.ref
        try:
            await self._dispatch(message)
        except Refused as refused:
            self.refuse(refused, ref=ref, action_id=action_id)
        except Exception:
            log.exception(
                "race %s player %s: %s failed",
                self.hub.race_id,
                self.conn.player_id,
                message.type,
            )
            internal = Refused("internal", "unexpected server error")
            self.refuse(internal, ref=ref, action_id=action_id)

    async def _dispatch(self, message: p.Message) -> None:
        conn = self.conn
        if isinstance(message, p.Ping):
            conn.send(codec.encode(p.ServerPong(message.t, ref=message.ref)))
            return
        if isinstance(message, p.Pong):
            return
        if isinstance(message, p.Join):
            await self._join(message)
            return
        if conn.role is None:
            raise Refused("not_joined", "the first message must be join")
        race = self.hub.race
        if isinstance(message, p.Resync):
            self._resync(message.last_seq, message.ref)
        elif isinstance(message, p.ACTION_TYPES):
            await self._act(message)
        elif isinstance(message, p.Start):
            await self.hub.submit(lambda: race.decide_start(self._player_id(), now_ms()))
        elif isinstance(message, p.Leave):
            await self._leave()
        elif isinstance(message, p.Watch):
            self._watch(message.player_id, message.ref)
        elif isinstance(message, p.Rematch):
            await self._rematch()
        elif isinstance(message, p.HintRequest):
            await self._hint(message.ref)
        else:  # pragma: no cover - every client type is handled above
            raise Refused("unknown_type", f"unexpected {message.type}")

    async def _leave(self) -> None:
        """The player leaves the lobby: out of the race, this connection watches it."""
        player_id = self._player_id()
        race = self.hub.race
        await self.hub.submit(lambda: race.decide_leave(player_id, now_ms()))
        self.conn.role, self.conn.player_id = Role.SPECTATOR, None

    def _player_id(self) -> str:
        if self.conn.role is not Role.PLAYER or self.conn.player_id is None:
            raise Refused("spectator", "spectators cannot act")
        return self.conn.player_id

    # -- join and resync ---------------------------------------------------

    async def _join(self, message: p.Join) -> None:
        conn, hub = self.conn, self.hub
        race = hub.race
        if conn.role is not None:
            raise Refused("already_joined", "this connection has joined already")
        token: str | None
        if Role(message.role) is Role.SPECTATOR:
            if race.meta.daily is not None and race.code_hidden(now_ms()):
                # Watching would show today's deal before one's own attempt.
                raise Refused("not_yet", "a daily attempt can be watched once its day ends")
            conn.role, token = Role.SPECTATOR, None
        elif message.token is not None:
            # This process's copy of the race may lag the log (events come by
            # pub/sub), and the welcome must hold every action acknowledged to
            # the player, wherever it was: catch up from the log first.
            try:
                await hub.catch_up()
            except BrokerUnavailable:
                raise Refused("try_again", "the race cannot be read right now") from None
            race = hub.race  # rebuilt meanwhile, if a failover lost events applied here
            player = race.player_by_token(message.token)
            if player is None:
                raise Refused("bad_token", "no player of this race has that token")
            conn.role, conn.player_id = Role.PLAYER, player.player_id
            token = message.token
            await hub.kick_others(conn)
            # Back, maybe on another process (the one that saw their last action
            # may have gone before the pause ended): the judgement is this one's.
            hub.judge_later(player.player_id)
        else:
            player_id, token = new_player_id(), new_secret()
            accounts = self.server.accounts
            rating = None
            if self.account is not None:
                message = dataclasses.replace(message, name=self.account.name)
                rating = await accounts.rating_shown(self.account, race.code.cells)
            else:
                await accounts.check_guest_name(message.name)
            signed_in = self.account is not None
            await hub.submit(
                lambda: race.decide_join(
                    message, now_ms(), player_id, token, signed_in=signed_in, rating=rating
                )
            )
            conn.role, conn.player_id = Role.PLAYER, player_id
            if self.account is not None:
                await self.server.accounts.store.note_player(
                    race.race_id, player_id, self.account.id
                )
        with contextlib.suppress(BrokerUnavailable):  # else the names last read stay
            await self.server.results.find_deleted(hub)
            await self.server.desk.find_decisions(hub)
        hub.attach(conn)
        conn.send(self._welcome(token, message.ref))
        if message.last_seq is not None:
            self._resync(message.last_seq, message.ref)

    def _welcome(self, token: str | None, ref: str | None) -> str:
        race = self.hub.race
        pid = self.conn.player_id
        welcome = p.Welcome(
            self.conn.role or Role.SPECTATOR,
            pid,
            token,
            self.hub.snapshot(now_ms()),
            race.game_of(pid),
            ref=ref,
        )
        return codec.encode(welcome)

    def _resync(self, last_seq: int, ref: str | None) -> None:
        """The events after ``last_seq`` (or a snapshot when more than a few are missed,
        or when ``last_seq`` is negative), then ``resync_done``.

        What a resync sends counts against a budget of its own (a snapshot as
        :data:`SNAPSHOT_COST` events): a 40-byte request must not buy a
        stream of events that the message budget never sees. Nothing here
        awaits: no event can slip in between, so every event after the
        ``resync_done``'s seq reaches the client live, in order.
        """
        race = self.hub.race
        # A negative last_seq asks for the snapshot, however few events it missed:
        # a client whose own game disagrees with an ack's numbers asks so.
        missed = None if last_seq < 0 else self.hub.missed_since(last_seq, RESYNC_EVENTS_MAX)
        cost = SNAPSHOT_COST if missed is None else len(missed)
        if not self.resync_budget.take(cost):
            self.fault("bad_message", "too many resyncs: slow down", CLOSE_POLICY, ref=ref)
            return
        if missed is None:
            game = race.game_of(self.conn.player_id)
            self.conn.send(codec.encode(p.Snapshot(self.hub.snapshot(now_ms()), game, ref=ref)))
        else:
            for text in missed:
                self.conn.send(text)
        self.conn.send(codec.encode(p.ResyncDone(race.seq, ref=ref)))

    # -- actions -----------------------------------------------------------

    async def _act(self, action: p.Action) -> None:
        player_id = self._player_id()
        race = self.hub.race
        result = await self.hub.submit(
            lambda: race.decide_action(player_id, action, now_ms()), player_id
        )
        # The answer the race remembers for this action id (the same for a resend).
        # (The race read again: a failover may have had it rebuilt meanwhile.)
        answer = result.answer if isinstance(result, Duplicate) else None
        if answer is None:
            assert result is not None
            answer = self.hub.race.players[player_id].applied[action.action_id]
        self.conn.send(codec.encode(answer.ack(action.action_id, action.ref)))
        self.hub.judge_later(player_id)
        self.server.lines.start(self.hub, player_id)  # a win: measure its line now

    def _watch(self, player_id: str | None, ref: str | None) -> None:
        race = self.hub.race
        conn = self.conn
        if player_id is None:
            conn.watching = None
            return
        if player_id not in race.players:
            raise Refused("unknown_player", "no player with that id in this race")
        refusal = race.watch_refusal(conn.player_id, player_id, now_ms())
        if refusal is not None:
            raise refusal
        conn.watching = player_id
        board = p.BoardUpdate(player_id, race.players[player_id].view(), ref=ref)
        conn.send(codec.encode(board))

    async def _rematch(self) -> None:
        """One rematch per race: asking again answers the one opened (to this connection)."""
        race = self.hub.race
        player_id = self._player_id()
        # Refuse early, before creating anything.
        if race.decide_rematch(player_id, "-", "-") is None:
            self.conn.send(codec.encode(race.rematch_message))
            return
        # A rematch is a race created by the host: it counts against their address.
        address = self.websocket.client.host if self.websocket.client else "?"
        if not await self.server.addresses.may_create(address):
            raise Refused("too_many_races", "too many races created from this address")
        # The new race takes the old host key: the host's client already holds it.
        created = await self.server.races.create(
            cells=race.code.cells,
            practice=race.meta.practice,
            open_boards=race.meta.open_boards,
            host_key_hash=race.meta.host_key_hash,
        )
        new_id, code = created["race_id"], created["code"]  # code: null, the deal is secret
        opened = await self.hub.submit(lambda: race.decide_rematch(player_id, new_id, code))
        if opened is None:  # another connection's rematch came first: the new race goes unused
            self.conn.send(codec.encode(race.rematch_message))

    async def _hint(self, ref: str | None) -> None:
        race = self.hub.race
        player_id = self._player_id()
        if not race.meta.practice:
            raise Refused("no_hints", "hints are only for practice games")
        if race.code.deal == self.server.daily.deal_today():
            raise Refused("daily_deal", "no hints on today's daily deal until the day ends")
        record = race.players[player_id].game.record()
        owners = [requester(self.websocket)]
        if self.account is not None:
            owners.append(f"account:{self.account.id}")
        result, move = await self.server.solver.hint(record, self.settings.hint_budget_s, owners)
        self.conn.send(codec.encode(p.HintResult(result, move, ref=ref)))
