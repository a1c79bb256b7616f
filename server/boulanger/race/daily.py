"""The daily challenge as plain Python: the deal of a date, the leaderboard key, streaks.

Only the standard library and the rules engine: the stores (each backend's
``daily`` in ``boulanger.broker``) and the web (``boulanger.web.daily``) drive
these functions.

**The deal of the day.** Every UTC date from :data:`FIRST_DAY` on has one deal
with 4 free cells, a function of the date and a fixed list only::

    deal_number(day) = POOL[(day_number(day) * STRIDE + OFFSET) % len(POOL)]

where ``day_number`` counts days from :data:`FIRST_DAY` (0 on that day) and
:data:`POOL` is the first 2,000 deals of the 4-cell catalog (deal numbers
1..2624) as the solver verified them winnable on 2026-11-30, written out below.
``STRIDE`` is coprime with ``len(POOL)``, so the map from day numbers to
positions is a permutation: no deal comes back within 2,000 days (about 5.5
years); after that the same sequence starts again.

The pool is written out here, not read from the catalog file, on purpose: the
catalog keeps growing (``boulanger catalog`` rewrites it, and a deal once
undecided may later be found winnable and slot in *between* others), and any
change to the list the formula indexes would change the deal of past and
future dates: leaderboards would then belong to another deal. With a fixed
list, the deal of a date never depends on the catalog's state; the catalog
only provides the par (a test checks that every pool deal is in it). To use
more deals some day, keep the formula for the dates already played and
switch to a new pool from a new first day.

**A secret schedule.** That formula is public, so anyone can work out the
deal of any date, and solve it, before the day begins. A server given a
*daily secret* (``BOULANGER_DAILY_SECRET``, the same for all its processes)
orders each run of ``len(POOL)`` days by the secret instead::

    deal_number(day) = POOL[order(cycle)[day_number(day) % len(POOL)]]

where ``cycle = day_number(day) // len(POOL)`` and ``order(cycle)`` sorts the
positions ``0 .. len(POOL) - 1`` by ``HMAC-SHA256(secret, "cycle:position")``:
still a permutation (no deal comes back within a cycle), the same in every
process and after restarts, and unknowable without the secret, even to
someone who has seen every deal so far. Setting or changing the secret
changes the deal of every date, past ones included: set it once, before the
first day is played.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import ClassVar, NotRequired, TypedDict

from ..engine import GameCode
from . import protocol as p
from .review import Decision, DecisionDict, LineSignal, LineSignalDict, counts, review_wire
from .standings import Standing
from .states import PlayerStatus
from .wire import ReviewWire

CELLS = 4
FIRST_DAY = date(2026, 1, 1)
STRIDE = 1237
OFFSET = 611
DAY_MS = 86_400_000

_POOL_TEXT = """
1-9 11-13 15-21 24-25 27 29-36 38-40 42 44-48 50-59 62 64-66 69 73-75 77-91 93-95 99 101-108
110-112 114-117 120 122-123 125-126 128 131 133-135 137-143 146-152 154-157 159 161 163-168
171 173-182 184-185 187 189-190 192 194-196 198-206 208-222 224 229-231 233-243 245-247
250-251 258-259 261-266 268-283 286-287 289-300 302-304 307 309-313 316 318 320-321 323-325
327 329-334 336 338-339 341-343 345-346 348-353 355-363 365-370 373-379 381 383-384 386
388-389 391-396 398-403 405-406 408-409 411-412 414 416-421 423-437 439-440 444-445 447-450
452-453 455-460 462-463 466-471 473 475-477 479-481 483-488 490-493 496-510 512-515 520-523
525-526 529 531-534 536-537 544-549 554-566 568-571 575-582 584-593 595 597 600 602-611
613-621 623-630 632-636 640 642-643 645-648 650-660 662 664-666 668-669 671-687 690-691
694-695 697-709 712 714 716-718 720-721 724-728 731-735 737-738 740-746 748 750-751 753-758
760-762 764-765 767-769 772-774 777-785 787-790 792-793 795-802 804 806-811 813-817 819-821
823-826 828-838 840-846 848-856 859-864 867-871 873-881 883-895 897-899 901 903-906 908-909
911 913-916 918-920 922-924 927-931 933-939 941-944 946 948-951 953-954 956 959-962 964-965
968-973 975-980 984-988 990-991 994-1006 1009 1011-1017 1019 1021-1022 1024 1026-1030 1032
1034-1037 1039-1057 1059-1060 1063 1066-1068 1070-1081 1083-1088 1090-1099 1101-1115 1117
1119 1122-1125 1127 1129-1135 1137-1140 1142-1144 1146-1150 1153-1157 1159-1163 1165-1168
1170-1171 1173-1174 1176-1181 1183-1184 1187-1188 1190-1196 1198-1199 1201-1206 1208-1212
1216-1218 1220 1222 1224-1227 1229-1230 1233-1254 1256-1259 1261-1262 1264-1267 1269-1273
1275-1276 1278 1280 1282 1284-1285 1287 1290-1293 1295-1300 1302-1306 1308-1313 1316-1317
1319-1322 1324-1328 1330-1332 1334-1335 1339-1346 1348-1352 1355-1364 1369-1371 1374-1375
1377-1381 1383 1385 1387-1389 1391-1392 1394-1395 1397-1399 1401-1405 1407-1408 1410-1415
1417-1422 1424-1426 1428-1433 1435-1438 1440-1444 1446-1449 1451-1469 1471-1472 1474-1478
1480-1481 1483-1484 1487 1490 1492 1494-1495 1497 1499 1501-1508 1510 1512 1515-1518
1520-1521 1523-1530 1532-1536 1538-1545 1547-1550 1552 1554-1556 1559 1561-1564 1566 1568
1570-1573 1577-1583 1585 1590-1594 1596-1598 1601-1602 1604-1618 1620-1621 1623-1624
1626-1627 1629-1632 1635-1636 1638 1640-1644 1647-1648 1650-1655 1657-1659 1662-1667
1669-1675 1677 1679-1684 1686-1689 1692 1695 1697-1698 1700-1709 1711-1716 1718-1721
1723-1724 1726-1735 1737 1739-1740 1742-1750 1752-1757 1759-1766 1768 1770-1772 1774-1779
1781-1785 1787-1788 1791 1793 1795 1797-1804 1806-1807 1809-1814 1816-1828 1834-1835
1837-1839 1842 1844-1855 1858-1867 1869 1872-1874 1876-1877 1879-1881 1884-1889 1891-1893
1895-1898 1900-1901 1903-1904 1906-1907 1909-1913 1916-1917 1919 1921-1925 1927-1933
1935-1940 1942 1944 1946-1948 1950-1952 1954-1955 1959-1962 1964 1966-1969 1971-1975 1977
1980 1983-1989 1992-1997 1999-2002 2004-2007 2009-2011 2013-2014 2016-2019 2021-2023
2025-2026 2028-2030 2032-2035 2037 2039-2043 2045-2047 2049 2051-2052 2054 2057 2059
2064-2065 2067-2069 2072 2074 2076-2093 2096 2098-2101 2103 2105-2109 2112-2115 2117 2120
2123 2125-2129 2131-2132 2134-2138 2140-2142 2145-2153 2156-2164 2166-2169 2171-2184 2186
2188-2191 2193-2197 2199-2201 2203 2205-2209 2211-2212 2214-2217 2219-2222 2224-2227 2230
2232-2233 2235-2236 2238 2240 2242-2243 2245-2250 2254-2256 2258-2263 2265-2268 2270
2272-2282 2284-2286 2288-2291 2293-2299 2301-2306 2308-2312 2315-2316 2318-2327 2329
2331-2333 2336-2338 2340-2341 2344-2348 2351-2352 2354-2362 2366-2373 2375-2388 2392-2393
2395-2402 2404-2406 2408 2410-2411 2413 2415 2417 2419 2421-2427 2429-2434 2436-2438
2440-2447 2449 2451 2453-2456 2458-2460 2462-2463 2465-2472 2477 2479-2482 2484-2495
2497-2504 2506-2509 2511-2522 2524 2526 2528-2530 2532 2535 2537-2538 2541-2542 2544
2546-2548 2550-2559 2561-2566 2570-2571 2573-2574 2576 2579-2581 2583-2585 2587-2590
2592-2600 2602-2604 2606 2608-2618 2620-2624
"""


def _parse_ranges(text: str) -> tuple[int, ...]:
    deals: list[int] = []
    for part in text.split():
        first, _, last = part.partition("-")
        deals.extend(range(int(first), int(last or first) + 1))
    return tuple(deals)


POOL: tuple[int, ...] = _parse_ranges(_POOL_TEXT)


class DateError(ValueError):
    """A date that is not ``YYYY-MM-DD``, or that has no daily challenge."""


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def parse_date(text: str) -> date:
    """Parse ``YYYY-MM-DD`` strictly (no other ISO 8601 form)."""
    if not isinstance(text, str) or not _DATE.fullmatch(text):
        raise DateError(f"{str(text)[:40]!r} is not a date: expected YYYY-MM-DD")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise DateError(f"{text!r} is not a calendar date") from None


def today(now_ms: int) -> date:
    """The UTC date at ``now_ms`` (Unix epoch milliseconds)."""
    return datetime.fromtimestamp(now_ms / 1000, UTC).date()


def day_over(text: str, now_ms: int) -> bool:
    """Whether the day ``text`` (``YYYY-MM-DD``) has ended at ``now_ms``."""
    return today(now_ms) > parse_date(text)


def day_start_ms(day: date) -> int:
    """Midnight UTC at the start of ``day``, in epoch milliseconds."""
    return (day - date(1970, 1, 1)).days * DAY_MS


def next_at(day: date) -> int:
    """When the next day's challenge starts: midnight UTC after ``day``."""
    return day_start_ms(day) + DAY_MS


def expires_at(day: date, retention_days: int) -> int:
    """When a day's leaderboard may be forgotten: ``retention_days`` after the day ends."""
    return next_at(day) + retention_days * DAY_MS


def day_number(day: date) -> int:
    """Days since :data:`FIRST_DAY` (0 on that day)."""
    return (day - FIRST_DAY).days


def deal_number(day: date, secret: str = "") -> int:
    """The deal of ``day``: the public schedule, or the secret one (see the module docstring)."""
    number = day_number(day)
    if number < 0:
        raise DateError(f"no daily challenge before {FIRST_DAY.isoformat()}, not {day}")
    if secret:
        cycle, position = divmod(number, len(POOL))
        return POOL[_secret_order(secret, cycle)[position]]
    return POOL[(number * STRIDE + OFFSET) % len(POOL)]


@functools.lru_cache(maxsize=4)
def _secret_order(secret: str, cycle: int) -> tuple[int, ...]:
    """The pool's positions in the order of one cycle of the secret schedule."""
    key = secret.encode()

    def mark(position: int) -> bytes:
        return hmac.new(key, f"{cycle}:{position}".encode(), hashlib.sha256).digest()

    return tuple(sorted(range(len(POOL)), key=mark))


def game_code(day: date, secret: str = "") -> GameCode:
    """The game code of ``day``'s challenge."""
    return GameCode(deal_number(day, secret), CELLS)


# -- entries and the leaderboard order ----------------------------------

WON, RESIGNED, TIME_LIMIT = "won", "resigned", "time_limit"
RESULTS = (WON, RESIGNED, TIME_LIMIT)


class DailyEntryDict(TypedDict):
    """A day's entry as the daily store keeps it (``review`` only when held; ``line``
    and ``line_held`` when known, for moderators)."""

    name: str
    result: str
    time_ms: int
    actions: int
    score: int
    foundation_cards: int
    review: NotRequired[str]
    line: NotRequired[LineSignalDict]
    line_held: NotRequired[str]
    decision: NotRequired[DecisionDict]
    at: NotRequired[int]


@dataclass(frozen=True, slots=True)
class DailyEntry:
    """One player's result on a day: what the leaderboard shows.

    ``time_ms`` runs from the race's ``start_at`` to the win or the resign
    (the time limit for a game still open when the limit passed). ``review``
    is why the result is held (boulanger.race.review): a held entry is kept,
    and shown to its player, but stays off the leaderboard. ``line`` (a win's
    measured line) and ``line_held`` (why it holds the win) are kept for
    moderators, beyond the race's own log, and never shown on the wire.
    ``decision`` is a moderator's (boulanger.web.desk): a confirmed entry
    counts, a disqualified one does not, held or not. ``at``: when it was
    recorded (ms; 0 for an entry stored before it was kept).
    """

    name: str
    result: str
    time_ms: int
    actions: int
    score: int
    foundation_cards: int
    review: str | None = None
    line: LineSignal | None = None
    line_held: str | None = None
    decision: Decision | None = None
    at: int = 0

    @property
    def counts(self) -> bool:
        """Whether the entry is on the leaderboard and its win in its player's streak."""
        return counts(self.review, self.decision)

    def to_dict(self) -> DailyEntryDict:
        """The stored form (``review`` only when held; ``line`` and ``line_held`` when known)."""
        data: DailyEntryDict = {
            "name": self.name,
            "result": self.result,
            "time_ms": self.time_ms,
            "actions": self.actions,
            "score": self.score,
            "foundation_cards": self.foundation_cards,
        }
        if self.review is not None:
            data["review"] = self.review
        if self.line is not None:
            data["line"] = self.line.to_dict()
        if self.line_held is not None:
            data["line_held"] = self.line_held
        if self.decision is not None:
            data["decision"] = self.decision.to_dict()
        if self.at:
            data["at"] = self.at
        return data

    @classmethod
    def from_dict(cls, data: DailyEntryDict) -> DailyEntry:
        """The entry :meth:`to_dict` wrote (as stored by the daily store)."""
        review = data.get("review")
        line = data.get("line")
        line_held = data.get("line_held")
        decision = data.get("decision")
        return cls(
            name=str(data["name"]),
            result=str(data["result"]),
            time_ms=int(data["time_ms"]),
            actions=int(data["actions"]),
            score=int(data["score"]),
            foundation_cards=int(data["foundation_cards"]),
            review=None if review is None else str(review),
            line=None if line is None else LineSignal.from_dict(line),
            line_held=None if line_held is None else str(line_held),
            decision=None if decision is None else Decision.from_dict(decision),
            at=int(data.get("at", 0)),
        )


def entry_from_standing(standing: Standing, time_limit_ms: int, at: int = 0) -> DailyEntry:
    """A finished race player's daily entry."""
    if standing.time_ms is not None:
        result, time_ms = WON, standing.time_ms
    elif standing.status == PlayerStatus.RESIGNED:
        result, time_ms = RESIGNED, standing.elapsed_ms
    else:
        result, time_ms = TIME_LIMIT, time_limit_ms
    return DailyEntry(
        name=standing.name,
        result=result,
        time_ms=max(0, time_ms),
        actions=standing.actions,
        score=standing.score,
        foundation_cards=standing.foundation_cards,
        review=standing.review,
        line=standing.line,
        line_held=standing.line_held,
        at=at,
    )


_TIME_MAX = 10**10 - 1
_SCORE_MAX = 10**9 - 1
_ACTIONS_MAX = 10**8 - 1
ENTRY_ID_DIGITS = 10


def ranking_key(entry: DailyEntry, entry_id: int) -> str:
    """A string whose byte order is the leaderboard order (lowest first).

    Winners by time, then everyone by cards on foundations (more first),
    score (more first), actions (fewer first), and last by ``entry_id`` (the
    order in which results were recorded). Fixed-width decimal fields, so the
    plain byte order of these strings (a Redis sorted set whose members share
    one score) is the leaderboard order, with no floating point involved. The
    key ends with the entry id, so it also names the entry.
    """
    won = entry.result == WON
    fields = (
        "0" if won else "1",
        f"{min(entry.time_ms, _TIME_MAX) if won else 0:010d}",
        f"{52 - entry.foundation_cards:02d}",
        f"{_SCORE_MAX - min(max(entry.score, 0), _SCORE_MAX):09d}",
        f"{min(entry.actions, _ACTIONS_MAX):08d}",
        f"{entry_id:0{ENTRY_ID_DIGITS}d}",
    )
    return "".join(fields)


def entry_id_of(key: str) -> int:
    """The entry id at the end of a :func:`ranking_key`."""
    return int(key[-ENTRY_ID_DIGITS:])


@dataclass(frozen=True, slots=True)
class RankedEntry:
    """An entry at its place on the leaderboard (``rank`` counts from 1; None: held)."""

    rank: int | None
    entry_id: int
    entry: DailyEntry

    def to_wire(self) -> EntryWire:
        """The entry as the daily leaderboard's messages carry it (docs/protocol.md)."""
        e = self.entry
        return {
            "rank": self.rank,
            "entry_id": self.entry_id,
            "name": e.name,
            "result": e.result,
            "time_ms": e.time_ms,
            "actions": e.actions,
            "score": e.score,
            "foundation_cards": e.foundation_cards,
            "review": review_wire(e.review, e.decision),
        }


class EntryWire(TypedDict):
    """A ranked entry as the daily leaderboard's messages carry it."""

    rank: int | None
    entry_id: int
    name: str
    result: str
    time_ms: int
    actions: int
    score: int
    foundation_cards: int
    review: ReviewWire | None


# -- streaks and sharing --------------------------------------------------


def streak(won_days: Collection[date], day: date) -> int:
    """Consecutive days won, ending on ``day`` or the day before (0 when neither was won)."""
    last = day if day in won_days else day - timedelta(days=1)
    count = 0
    while last in won_days:
        count += 1
        last -= timedelta(days=1)
    return count


def format_time(ms: int) -> str:
    """``m:ss.t`` (``h:mm:ss.t`` from one hour)."""
    tenths = ms // 100
    hours, rest = divmod(tenths, 36_000)
    minutes, rest = divmod(rest, 600)
    seconds, tenth = divmod(rest, 10)
    if hours:
        return f"{hours}:{minutes:02d}:{seconds:02d}.{tenth}"
    return f"{minutes}:{seconds:02d}.{tenth}"


SQUARES = 13  # one per rank the four foundations reached together


def squares(cards: int) -> str:
    """The share's line of squares: full for a rank all four suits passed, half for
    one some did, empty for the rest (how far, never which card)."""
    n = max(0, min(52, cards))
    return "".join(
        "\U0001f7e9" if n >= 4 * (i + 1) else "\U0001f7e8" if n > 4 * i else "\u2b1c"
        for i in range(SQUARES)
    )


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def share_text(
    day: date,
    ranked: RankedEntry,
    total: int,
    streak_days: int,
    par: int | None = None,
    site: str | None = None,
) -> str:
    """The share text, as the client writes it in English (client/share.js): the day's
    number (1 on :data:`FIRST_DAY`), the result and place, the moves and par, the
    squares, and a link to the day's page on ``site`` (none without it). No code, no
    board, no move: the deal stays secret."""
    entry = ranked.entry
    if entry.result == WON:
        result = f"Won in {format_time(entry.time_ms)}"
    else:
        result = f"Not won: {entry.foundation_cards}/52 cards"
    if entry.decision is not None and ranked.rank is None:
        result += f" · {entry.decision.status}"  # disqualified (a confirmed entry has its rank)
    elif ranked.rank is None:
        result += " · under review"
    else:
        result += f" · {_ordinal(ranked.rank)} of {total}"
    moves = f"{entry.actions} move" + ("" if entry.actions == 1 else "s")
    if par:
        moves += f" · par {par}"
    line = squares(entry.foundation_cards)
    if streak_days > 1:
        line += f" {streak_days} days in a row"
    lines = [f"Baker's Game daily #{day_number(day) + 1}", result, moves, line]
    if site is not None:
        lines.append(f"{site}/daily/{day.isoformat()}")
    return "\n".join(lines)


# -- the live leaderboard's messages ---------------------------------------


@dataclass(slots=True)
class DailyLeaderboard(p.Message):
    """The live leaderboard of a day: the top page, and entries recorded since the last one."""

    type: ClassVar[str] = "daily_leaderboard"
    date: str
    total: int
    entries: list[EntryWire]
    recent: list[EntryWire]


# What a client may send on ``/ws/daily/{date}``, and what it receives.
CLIENT_MESSAGES: dict[str, type[p.Message]] = {"ping": p.Ping, "pong": p.Pong}
SERVER_MESSAGES: dict[str, type[p.Message]] = {
    cls.type: cls for cls in (DailyLeaderboard, p.Error, p.ServerPing, p.ServerPong)
}
