"""The load generator's bots: bot players racing through the real WebSocket protocol.

Bots join races of 8 (the host starts each race), and play real games of
Baker's Game: each keeps a local mirror of its game (boulanger.engine.Game)
and follows the solver's solution of its deal, sent as ``move``, ``tap`` or
``double_tap``, with a few illegal moves (answered by ``reject``) and
detours taken back by ``undo`` mixed in, like a human. Near the end of the
solution a bot rewinds a few moves with ``undo`` and plays them again, so
the load stays steady for as long as a run lasts (``finish`` lets bots win).
All bots of a race live in one worker process, so that a rival's arrival
times match the actor's send times there.

What a worker measures: action->ack latency; for each rival and action, the
latency to the rival's ``progress`` (every delivery, and apart those that
change what the rival shows: the staleness); events lost (a ``prev_seq``
above the last ``seq`` seen) or out of order; events a connected bot never
received by the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

from bench.common import use_tree
from bench.lean import LeanClient, lean_connect
from bench.procs import LOAD_CORE, die_with_parent, pin

use_tree()

from boulanger.engine import Game, IllegalMoveError, Move  # noqa: E402
from boulanger.engine.moves import FIRST_CELL, FOUNDATION, PLACE_NAMES  # noqa: E402

RACE_SIZE = 8
PER_ADDRESS = 50  # connections per source address (the server allows 64)
RACES_PER_ADDRESS = 15  # races created per source address and minute (the server allows 20)
SOLUTIONS = Path(tempfile.gettempdir()) / "boulanger-bench-solutions.json"
DEALS = 300  # races use the first DEALS catalog deals, solved once and cached
# Actions remembered per race for matching rivals' arrivals (see RaceRun.on_ack).
SENT_KEPT = 4096
# What a progress changes on a rival's screen (Bot.shows).
PLAYER, ORDER = "player", "order"


# -- deals and solutions ----------------------------------------------------


def solutions(count: int = DEALS) -> list[tuple[str, list[dict[str, Any]]]]:
    """(code, solution actions) of the first ``count`` catalog deals; solved once, cached.

    Today's daily deal is left out: no race may be created on it until the day ends.
    """
    from boulanger.race.daily import deal_number, today
    from boulanger.solver import catalog, solve

    daily = deal_number(today(int(time.time() * 1000)))

    cache: dict[str, list[dict[str, Any]]] = {}
    if SOLUTIONS.exists():
        with contextlib.suppress(ValueError):
            cache = json.loads(SOLUTIONS.read_text())
    out = []
    changed = False
    for entry in catalog.entries(4):
        if len(out) == count:
            break
        if entry.code.deal == daily:
            continue
        code = str(entry.code)
        if code not in cache:
            found = solve(code, budget=10)
            if found.result != "won":
                continue
            cache[code] = found.actions
            changed = True
        out.append((code, cache[code]))
    if changed:
        SOLUTIONS.write_text(json.dumps(cache))
    return out


def source_address(n: int) -> str:
    """The n-th source address of the load generator, in 127.0.0.0/8 (never 127.0.0.1)."""
    return f"127.0.{10 + n // 200}.{1 + n % 200}"


# -- the bots (in worker processes) -----------------------------------------

PENDING_SENDS: set[asyncio.Future[Any]] = set()
EVENTS = ("player_joined", "race_starting", "progress", "race_over", "rematch")


class Stats:
    def __init__(self) -> None:
        self.ack_ms = array("d")
        self.rival_ms = array("d")  # every progress a rival got
        self.stale_ms = array("d")  # those that changed what the rival shows
        self.unchanged = 0  # rivals' progress events that changed nothing they show
        self.order_only = 0  # those that changed only the order of the race
        self.accepted = 0  # acks of actions sent in the window
        self.rejected = 0  # rejects (expected ones) of actions sent in the window
        self.sent = 0
        self.errors: dict[str, int] = {}
        self.disconnects = 0
        self.close_codes: dict[str, int] = {}
        self.lost = 0  # events skipped (a gap in seq)
        self.disorder = 0  # events at or below the last seq seen
        self.missing_at_end = 0  # events a connected player never received
        self.connect_failures = 0
        self.retries: dict[str, int] = {}  # try_again answers, sent again as the protocol says

    def retry(self, kind: str) -> None:
        self.retries[kind] = self.retries.get(kind, 0) + 1

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


class RaceRun:
    """The bots of one race, all in one worker process: rival latencies match here."""

    def __init__(self, spec: dict[str, Any], stats: Stats, window: list[float]) -> None:
        self.spec = spec
        self.stats = stats
        self.window = window  # [from, to] in perf_counter time
        self.bots: list[Bot] = []
        self.sent: dict[int, list[Any]] = {}  # seq -> [send time or None, rivals still to see it]
        # seq -> (arrival time, changed what the rival shows) seen before the ack
        self.early: dict[int, list[tuple[float, str]]] = {}
        self.started = asyncio.Event()
        self.start_at = 0.0

    def rivals(self) -> int:
        return sum(1 for bot in self.bots if bot.alive) - 1

    def on_ack(self, seq: int, t_send: float, measured: bool) -> None:
        early = self.early.pop(seq, ())
        if measured:
            for t, changed in early:
                self.delivered(t - t_send, changed)
        left = self.rivals() - len(early)
        if left > 0:
            sent = self.sent
            sent[seq] = [t_send if measured else None, left]
            if len(sent) > SENT_KEPT:
                # Actions whose progress went to the player alone are never seen by
                # rivals: the oldest entries go (a rival still due one is long late).
                for old in list(sent)[: SENT_KEPT // 2]:
                    del sent[old]

    def on_rival(self, seq: int, t: float, changed: str) -> None:
        entry = self.sent.get(seq)
        if entry is None:
            self.early.setdefault(seq, []).append((t, changed))
            return
        if entry[0] is not None:
            self.delivered(t - entry[0], changed)
        entry[1] -= 1
        if entry[1] <= 0:
            del self.sent[seq]

    def delivered(self, seconds: float, changed: str) -> None:
        """A rival was told of a measured action ``seconds`` after it was sent;
        ``changed``: what it changed on the rival's screen (see Bot.shows)."""
        stats = self.stats
        stats.rival_ms.append(seconds * 1000)
        if changed:
            stats.stale_ms.append(seconds * 1000)
            if changed == ORDER:
                stats.order_only += 1
        else:
            stats.unchanged += 1


class Bot:
    def __init__(
        self, race: RaceRun, index: int, base: str, address: str, cfg: dict[str, Any]
    ) -> None:
        self.race = race
        self.index = index
        self.url = f"{base}/ws/races/{race.spec['race_id']}"
        self.address = address
        self.cfg = cfg
        self.stats = race.stats
        self.checks = not cfg["target"].startswith("baseline")  # the baseline accepts all
        self.rnd = random.Random(hash((race.spec["race_id"], index, cfg["seed"])))
        self.game = Game(race.spec["code"])
        self.solution = [Move.from_dict(m) for m in race.spec["solution"]]
        self.path = 0  # solution moves applied
        self.stack: list[bool] = []  # applied moves: True = on the solution path, False = detour
        self.rewind = 0
        self.ws: Any = None
        self.lean: LeanClient | None = None
        self.player_id = ""
        self.last_seq = 0
        # The last event known sent to everyone (an event's prev_seq, a rival's seq).
        self.told_seq = 0
        # What this bot's screen shows of each rival and of the race (see shows()).
        self.shown: dict[str, str] = {}
        self.order = ""
        self.alive = False
        self.closing = False
        self.pending: tuple[str, float, asyncio.Future[Any], str] | None = None
        self.joined: asyncio.Future[Any] | None = None
        self.actions = 0
        self.reader: asyncio.Task[None] | None = None
        self.done = False

    # -- connection --------------------------------------------------------

    async def connect(self) -> bool:
        loop = asyncio.get_running_loop()
        try:
            if self.cfg["client"] == "lean":
                self.lean = await lean_connect(
                    self, self.url, self.address, self.cfg["compression"]
                )
            else:
                from websockets.asyncio.client import connect

                self.ws = await connect(
                    self.url,
                    local_addr=(self.address, 0),
                    ping_interval=None,
                    max_size=2**20,
                    compression=self.cfg["compression"],
                    open_timeout=60,
                    close_timeout=2,
                )
        except Exception as error:
            self.stats.connect_failures += 1
            self.stats.error(f"connect: {type(error).__name__}")
            return False
        self.alive = True
        self.joined = loop.create_future()
        if self.ws is not None:
            self.reader = asyncio.create_task(self.read_loop())
        host_key = self.race.spec["host_key"] if self.index == 0 else None
        join = {"type": "join", "role": "player", "name": f"bot{self.index}", "host_key": host_key}
        try:
            await self.transmit(json.dumps(join))
            async with asyncio.timeout(60):
                welcome = await self.joined
        except Exception as error:
            self.stats.error(f"join: {type(error).__name__}")
            return False
        if welcome.get("type") != "welcome":
            self.stats.error(f"join: {welcome.get('code')}")
            return False
        self.player_id = welcome["player_id"]
        self.last_seq = max(self.last_seq, welcome["race"]["seq"])
        self.told_seq = max(self.told_seq, self.last_seq)
        return True

    async def transmit(self, text: str) -> None:
        if self.lean is not None:
            self.lean.send_text(text)
        else:
            await self.ws.send(text)

    def event_seq(self, seq: int, prev: int) -> None:
        """An event's place: after the last, and nothing sent to everyone missed between
        (``prev``: its prev_seq; seq - 1 from a server that sends every event to all)."""
        if seq <= self.last_seq:
            self.stats.disorder += 1
            return
        if prev > self.last_seq:
            self.stats.lost += prev - self.last_seq
        self.last_seq = seq
        self.told_seq = max(self.told_seq, prev)

    def shows(self, text: str, player_id: str) -> str:
        """What a progress changes on this bot's screen: ``PLAYER`` (that player's
        cards, score, status, rank, time or review, or the race's state), ``ORDER``
        (the order alone) or nothing (docs/protocol.md, "Who is sent a progress").
        Read without parsing the JSON."""
        i = text.find('"foundation_cards":')
        if i < 0:
            return PLAYER  # the baseline relays every action: each one is news
        j = text.index(',"actions":', i)
        k = text.index('"status":', j)
        m = text.index(',"elapsed_ms":', k)
        n = text.index('"rank":', m)
        o = text.index(',"leaderboard":', n)
        state = text.index('"race_state":')
        mine = text[i:j] + text[k:m] + text[n:o] + text[state : state + 24]
        order = text[o:]
        changed = (
            PLAYER if self.shown.get(player_id) != mine else ORDER if self.order != order else ""
        )
        self.shown[player_id] = mine
        self.order = order
        return changed

    async def read_loop(self) -> None:
        """The websockets client's reader: every message to on_text."""
        perf = time.perf_counter
        code = None
        try:
            async for text in self.ws:
                self.on_text(text, perf())
        except Exception as error:
            if not self.closing:
                self.stats.error(f"read: {type(error).__name__}")
        finally:
            code = getattr(self.ws, "close_code", None)
            self.on_closed(code)

    def on_text(self, text: str, t: float) -> None:
        stats = self.stats
        race = self.race
        if text.startswith('{"type":"progress"'):
            i = text.index('"seq":') + 6
            end = text.index(",", i)
            seq = int(text[i:end])
            prev = seq - 1
            if text.startswith('"prev_seq":', end + 1):
                prev = int(text[end + 12 : text.index(",", end + 12)])
            if self.player_id:
                # Events of joined players only (the welcome's snapshot covers the rest).
                self.event_seq(seq, prev)
            i = text.index('"player_id":"') + 13
            player_id = text[i : text.index('"', i)]
            changed = self.shows(text, player_id)  # one's own progress changes the order too
            if player_id != self.player_id:
                self.told_seq = max(self.told_seq, seq)
                race.on_rival(seq, t, changed)
            return
        message = json.loads(text)
        kind = message["type"]
        if kind in ("ack", "reject"):
            pending = self.pending
            if pending is None or pending[0] != message["action_id"]:
                stats.error(f"unexpected {kind}")
                return
            if kind == "reject" and message.get("code") == "try_again":
                # "send it again with the same action_id"; latency counts from the first send
                stats.retry(f"action: {message.get('reason', '')[:60]}")
                asyncio.get_running_loop().call_later(0.05, self.send_nowait, pending[3])
                return
            self.pending = None
            t_send = pending[1]
            measured = race.window[0] <= t_send < race.window[1]
            if measured:
                stats.ack_ms.append((t - t_send) * 1000)
            if kind == "ack":
                race.on_ack(message["seq"], t_send, measured)
                self.event_seq_ack(message["seq"])
            pending[2].set_result((message, measured))
        elif kind in EVENTS:
            if self.player_id:
                self.event_seq(message["seq"], message.get("prev_seq", message["seq"] - 1))
                self.told_seq = max(self.told_seq, message["seq"])
            if kind == "race_starting":
                race.start_at = message["start_at"] / 1000
                race.started.set()
        elif kind == "welcome" or kind == "error":
            if self.joined is not None and not self.joined.done():
                self.joined.set_result(message)
            elif (
                message.get("code") == "try_again" and self.index == 0 and not race.started.is_set()
            ):
                stats.retry(f"start: {message.get('reason', '')[:60]}")
                start = json.dumps({"type": "start"})
                asyncio.get_running_loop().call_later(0.2, self.send_nowait, start)
            else:
                stats.error(f"error {message.get('code')}")
        elif kind == "ping":
            self.send_nowait(json.dumps({"type": "pong", "t": message["t"]}))

    def send_nowait(self, text: str) -> None:
        if not self.alive:
            return
        if self.lean is not None:
            with contextlib.suppress(ConnectionError):
                self.lean.send_text(text)
        else:
            task = asyncio.ensure_future(self.ws.send(text))
            PENDING_SENDS.add(task)
            task.add_done_callback(PENDING_SENDS.discard)

    def on_closed(self, code: int | None) -> None:
        if not self.alive:
            return
        self.alive = False
        stats = self.stats
        if not self.closing:
            stats.disconnects += 1
            stats.close_codes[str(code)] = stats.close_codes.get(str(code), 0) + 1
        if self.joined is not None and not self.joined.done():
            self.joined.set_result({"type": "closed"})
        if self.pending is not None and not self.pending[2].done():
            self.pending[2].set_exception(ConnectionError("closed"))

    def event_seq_ack(self, seq: int) -> None:
        # The acting player sees its own progress event too (on boulanger);
        # the baseline sends it only to the other 7: the ack stands for it.
        if not self.checks:
            self.event_seq(seq, seq - 1)

    # -- playing -----------------------------------------------------------

    def _place_card(self, src: str, depth: int) -> str:
        index = PLACE_NAMES.index(src)
        board = self.game.board
        if index >= FIRST_CELL:
            return str(board.cells[index - FIRST_CELL])
        return str(board.columns[index][-depth])

    def choose(self) -> tuple[dict[str, Any], str, Any]:
        """The next action: (message, expected answer, effect on the mirror)."""
        game, rnd, cfg = self.game, self.rnd, self.cfg
        if self.rewind > 0 or (self.stack and not self.stack[-1]):
            return {"type": "undo"}, "ack", "undo"
        if self.path >= len(self.solution):
            return {}, "", None  # won
        if self.path == len(self.solution) - 1 and not cfg["finish"]:
            self.rewind = rnd.randint(3, 20)
            return {"type": "undo"}, "ack", "undo"
        r = rnd.random()
        if r < cfg["illegal"]:
            bad = self._illegal()
            if bad is not None:
                return {"type": "move", **bad.to_dict()}, "reject", None
        elif r < cfg["illegal"] + cfg["detour"]:
            wanted = self.solution[self.path]
            options = [m for m in game.legal_moves() if m != wanted]
            if options:
                move = rnd.choice(options)
                return {"type": "move", **move.to_dict()}, "ack", ("detour", move)
        move = self.solution[self.path]
        if move.dst == "foundation" and move.count == 1 and rnd.random() < 0.4:
            card = self._place_card(move.src, 1)
            if game.tap_move(card) == move:
                return {"type": "tap", "card": card}, "ack", ("path", move)
        if rnd.random() < 0.2 and move.src.startswith("col"):
            card = self._place_card(move.src, move.count)
            if game.double_tap_move(card) == move:
                return {"type": "double_tap", "card": card}, "ack", ("path", move)
        return {"type": "move", **move.to_dict()}, "ack", ("path", move)

    def _illegal(self) -> Move | None:
        board = self.game.board
        cells = len(board.cells)
        places = list(range(8)) + list(range(FIRST_CELL, FIRST_CELL + cells)) + [FOUNDATION]
        for _ in range(20):
            src = self.rnd.randrange(8 + cells)
            src = src if src < 8 else FIRST_CELL + src - 8
            dst = self.rnd.choice(places)
            if src == dst:
                continue
            try:
                board.check(src, dst, 1)
            except IllegalMoveError:
                return Move(PLACE_NAMES[src], PLACE_NAMES[dst], 1)
        return None

    def apply(self, effect: Any, message: dict[str, Any]) -> None:
        game = self.game
        if effect == "undo":
            game.undo()
            if self.stack.pop():
                self.path -= 1
            if self.rewind > 0:
                self.rewind -= 1
        else:
            kind, move = effect
            game.play(move)
            if kind == "path":
                self.path += 1
                self.stack.append(True)
            else:
                self.stack.append(False)
        if self.checks:
            # An ack carries the numbers (an older server's, its whole game).
            view = message.get("game") or message
            if view.get("actions") != game.actions or view.get("score") != game.score:
                self.stats.error("desync: ack's numbers differ from the bot's mirror")
                self.done = True

    async def play(self, stop: float) -> None:
        """Act until ``stop`` (perf_counter time)."""
        race, cfg, stats = self.race, self.cfg, self.stats
        loop = asyncio.get_running_loop()
        perf = time.perf_counter
        pace = cfg["pace_s"]
        await race.started.wait()
        delay = race.start_at - time.time()
        if pace:
            delay += self.rnd.uniform(0, pace)
        await asyncio.sleep(max(0.0, delay) + 0.005)
        next_at = perf()
        while self.alive and not self.done:
            if pace:
                now = perf()
                if next_at > now:
                    await asyncio.sleep(next_at - now)
            if perf() >= stop:
                return
            message, expected, effect = self.choose()
            if not message:
                self.done = True  # won
                return
            self.actions += 1
            action_id = f"a{self.actions}"
            message["action_id"] = action_id
            future = loop.create_future()
            t_send = perf()
            text = json.dumps(message)
            self.pending = (action_id, t_send, future, text)
            if race.window[0] <= t_send < race.window[1]:
                stats.sent += 1
            try:
                await self.transmit(text)
                answer, measured = await future
            except Exception:
                return  # the reader counted the disconnect
            kind = answer["type"]
            if measured:
                if kind == "ack":
                    stats.accepted += 1
                else:
                    stats.rejected += 1
            if kind == "ack" and (expected == "ack" or not self.checks):
                if effect is not None:
                    self.apply(effect, answer)
            elif kind != expected and self.checks:
                stats.error(f"expected {expected}, got {kind} {answer.get('code', '')}")
                self.done = True
            if pace:
                next_at = t_send + pace * self.rnd.uniform(0.5, 1.5)

    async def close(self) -> None:
        self.closing = True
        if self.lean is not None:
            self.lean.close()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            with contextlib.suppress(Exception):
                await self.reader


async def worker_async(conn: Any, cfg: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    stats = Stats()
    window = [float("inf"), float("inf")]
    races = [RaceRun(spec, stats, window) for spec in cfg["races"]]
    bots = []
    for race in races:
        for index, (base, address) in enumerate(
            zip(race.spec["bases"], race.spec["addresses"], strict=False)
        ):
            bot = Bot(race, index, base, address, cfg)
            race.bots.append(bot)
            bots.append(bot)
    # Join: races one after the other, their 8 players at once; a bounded number in flight.
    gate = asyncio.Semaphore(cfg["connect_concurrency"])

    async def join_race(race: RaceRun) -> None:
        async with gate:
            for bot in race.bots:  # in order: the host first
                await bot.connect()

    await asyncio.gather(*(join_race(race) for race in races))
    joined = sum(1 for bot in bots if bot.player_id)
    conn.send(("joined", joined, len(bots)))
    command = await loop.run_in_executor(None, conn.recv)
    if command[0] == "go":
        _, _start_wall, measure_from, measure_to, stop_wall = command
        offset = time.perf_counter() - time.time()
        window[0], window[1] = measure_from + offset, measure_to + offset
        stop = stop_wall + offset
        for race in races:
            if race.bots and race.bots[0].player_id:
                await race.bots[0].transmit(json.dumps({"type": "start"}))
        players = [asyncio.create_task(bot.play(stop)) for bot in bots if bot.player_id]
        await asyncio.sleep(max(0.0, stop_wall - time.time()))
        # Stop acting; let answers and events in flight arrive.
        _done, pending = await asyncio.wait(players, timeout=5)
        for task in pending:
            task.cancel()
        unanswered = sum(1 for bot in bots if bot.pending is not None)
        if unanswered:
            stats.errors["unanswered at the end"] = unanswered
        await asyncio.sleep(cfg["drain_s"])
        for race in races:
            # Every connected bot has the race's last event sent to everyone.
            final = max((bot.told_seq for bot in race.bots), default=0)
            stats.missing_at_end += sum(
                max(0, final - bot.last_seq) for bot in race.bots if bot.alive
            )
        conn.send(("stats", stats_dict(stats)))
    else:  # idle players: the parent has measured, and says stop
        conn.send(("stats", stats_dict(stats)))
    await asyncio.gather(*(bot.close() for bot in bots))


def stats_dict(stats: Stats) -> dict[str, Any]:
    return {
        "ack_ms": stats.ack_ms.tobytes(),
        "rival_ms": stats.rival_ms.tobytes(),
        "stale_ms": stats.stale_ms.tobytes(),
        "unchanged": stats.unchanged,
        "order_only": stats.order_only,
        "accepted": stats.accepted,
        "rejected": stats.rejected,
        "sent": stats.sent,
        "errors": stats.errors,
        "disconnects": stats.disconnects,
        "close_codes": stats.close_codes,
        "lost": stats.lost,
        "disorder": stats.disorder,
        "missing_at_end": stats.missing_at_end,
        "connect_failures": stats.connect_failures,
        "retries": stats.retries,
    }


def worker_main(conn: Any, cfg: dict[str, Any]) -> None:
    die_with_parent()
    with contextlib.suppress(OSError):
        os.setsid()
    pin(LOAD_CORE, cfg["nice"])
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(worker_async(conn, cfg))
