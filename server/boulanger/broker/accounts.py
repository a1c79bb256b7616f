"""Accounts, sessions, histories and ratings in the store.

Every operation here is one key at a time (no transaction spans two keys), so
the same code runs on every store through its key-value part
(:class:`~.contracts.KeyValue`): the memory store's dictionaries, the SQLite
store's file, Redis, and Redis Cluster. An account's own
keys share one hash tag (``{ID}``), so a cluster keeps them on one shard::

    bk:acct:{ID}               string  account JSON: name, password hash, passkeys, daily key
    bk:acct:{ID}:history       list    race results, newest first (RaceResult JSON)
    bk:acct:{ID}:rating:C      string  rating JSON for races with C cells
    bk:acct:{ID}:ratings:C     list    the rating's history for C cells, newest first
                                       (RatingPoint JSON)
    bk:acct:{ID}:rating:C:writer:T  string  marks writer T's update done (Redis); expires
    bk:name:{K}                string  account id of the name whose look-alike key is K
    bk:cred:{C}                string  account id of passkey credential C
    bk:claim:{H}               string  account id that claimed the guest key whose hash is H
    bk:sess:{S}                string  "ID EPOCH": the session's account and the account's
                                       epoch it was opened under, S the session id's hash; expires
    bk:dev:{D}                 string  account id a device signed in to, D the device cookie's
                                       hash; expires
    bk:chal:{S}                string  a WebAuthn ceremony's challenge; expires in minutes
    bk:chal:{S}:used           string  set by the one request that takes the ceremony; expires
    bk:race:{R}:accounts       hash-ish player id -> account id of a race's signed-in players
    bk:rated:{R}               string  set once a race's ratings and histories are counted
    bk:ratings:{C}             zset    account id -> shown rating, for the top list
    bk:ratings:{C}:versions    hash    account id -> version of the rating the top list shows

A session is found by the hash of its id, so a leaked store leaks no
cookie; deleting an account deletes its record, which ends its sessions
(their account is gone) without listing them; a password change moves the
account's epoch on, which ends the sessions opened under the old one. The
sign-in counts are the store's :class:`~.contracts.Limits`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..race.accounts import Account, Ceremony, RaceResult, Rating, RatingPoint
from .contracts import KeyValue


def _load(text: str | None) -> Any:
    """A stored JSON value (None for no value): the stored form of a record."""
    return None if text is None else json.loads(text)


def _rating(text: str | None) -> Rating | None:
    found = _load(text)
    return None if found is None else Rating.from_dict(found)


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class AccountStore:
    """Accounts, sessions, ceremonies, sign-in counters, histories and ratings."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    # accounts
    async def claim_name(self, key: str, account_id: str, ttl_s: float | None = None) -> bool:
        """Reserve a name; with ``ttl_s``, only for that long unless :meth:`keep_name`."""
        return await self.kv.set_nx(f"bk:name:{{{key}}}", account_id, ttl_s)

    async def keep_name(self, key: str, account_id: str) -> None:
        """A reserved name is kept for good, once its account is saved."""
        await self.kv.set(f"bk:name:{{{key}}}", account_id)

    async def release_name(self, key: str) -> None:
        await self.kv.delete(f"bk:name:{{{key}}}")

    async def name_taken(self, key: str) -> bool:
        """Whether an account holds (or a sign-up is reserving) the name of look-alike key ``key``."""
        return await self.kv.get(f"bk:name:{{{key}}}") is not None

    async def account_by_name(self, key: str) -> Account | None:
        account_id = await self.kv.get(f"bk:name:{{{key}}}")
        return None if account_id is None else await self.account(account_id)

    async def account(self, account_id: str) -> Account | None:
        found = _load(await self.kv.get(f"bk:acct:{{{account_id}}}"))
        return None if found is None else Account.from_dict(found)

    async def exists(self, account_id: str) -> bool:
        """Whether the account is there (False once deleted)."""
        return await self.kv.get(f"bk:acct:{{{account_id}}}") is not None

    async def save(self, account: Account) -> None:
        await self.kv.set(f"bk:acct:{{{account.id}}}", _dump(account.to_dict()))

    async def delete(self, account: Account, name_keys: list[str], cells: list[int]) -> None:
        """The account's personal data goes; results kept elsewhere stay, nameless."""
        account_id = account.id
        await self.kv.delete(f"bk:acct:{{{account_id}}}")
        await self.kv.delete(f"bk:acct:{{{account_id}}}:history")
        for count in cells:
            await self.kv.delete(f"bk:acct:{{{account_id}}}:rating:{count}")
            await self.kv.delete(f"bk:acct:{{{account_id}}}:ratings:{count}")
            await self.kv.zrem(f"bk:ratings:{{{count}}}", account_id)
        for passkey in account.passkeys:
            await self.kv.delete(f"bk:cred:{{{passkey.id}}}")
        for key in name_keys:  # each of the name's keys that is this account's
            if await self.kv.get(f"bk:name:{{{key}}}") == account_id:
                await self.kv.delete(f"bk:name:{{{key}}}")

    async def claim_credential(
        self, credential_id: str, account_id: str, ttl_s: float | None = None
    ) -> bool:
        return await self.kv.set_nx(f"bk:cred:{{{credential_id}}}", account_id, ttl_s)

    async def keep_credential(self, credential_id: str, account_id: str) -> None:
        await self.kv.set(f"bk:cred:{{{credential_id}}}", account_id)

    async def account_by_credential(self, credential_id: str) -> Account | None:
        account_id = await self.kv.get(f"bk:cred:{{{credential_id}}}")
        return None if account_id is None else await self.account(account_id)

    async def claim_guest_key(self, key_hash: str, account_id: str) -> bool:
        """A guest's player key goes to one account, once."""
        return await self.kv.set_nx(f"bk:claim:{{{key_hash}}}", account_id)

    # sessions and ceremonies
    async def open_session(
        self, session_hash: str, account_id: str, ttl_s: float, epoch: int = 0
    ) -> None:
        await self.kv.set(f"bk:sess:{{{session_hash}}}", f"{account_id} {epoch}", ttl_s)

    async def session_of(self, session_hash: str) -> tuple[str, int] | None:
        """The session's account id and the account epoch it was opened under."""
        found = await self.kv.get(f"bk:sess:{{{session_hash}}}")
        if found is None:
            return None
        account_id, _, epoch = found.partition(" ")
        return account_id, int(epoch or 0)  # a session stored before epochs: epoch 0

    async def session(self, session_hash: str) -> str | None:
        """The session's account id."""
        found = await self.session_of(session_hash)
        return None if found is None else found[0]

    async def note_device(self, device_hash: str, account_id: str, ttl_s: float) -> None:
        """A device (its cookie's hash) signed in to the account."""
        await self.kv.set(f"bk:dev:{{{device_hash}}}", account_id, ttl_s)

    async def device(self, device_hash: str) -> str | None:
        """The account a device last signed in to, if any."""
        return await self.kv.get(f"bk:dev:{{{device_hash}}}")

    async def close_session(self, session_hash: str) -> None:
        await self.kv.delete(f"bk:sess:{{{session_hash}}}")

    async def put_ceremony(self, ceremony_hash: str, ceremony: Ceremony, ttl_s: float) -> None:
        await self.kv.set(f"bk:chal:{{{ceremony_hash}}}", _dump(ceremony.to_dict()), ttl_s)

    async def take_ceremony(self, ceremony_hash: str, ttl_s: float) -> Ceremony | None:
        """A ceremony, usable once: of requests taking it at once, in any processes,
        one gets it (its ``:used`` mark is set once, atomically), the others None."""
        key = f"bk:chal:{{{ceremony_hash}}}"
        found = _load(await self.kv.get(key))
        if found is None or not await self.kv.set_nx(f"{key}:used", "1", ttl_s):
            return None
        await self.kv.delete(key)
        return Ceremony.from_dict(found)

    # races, histories, ratings
    async def note_player(self, race_id: str, player_id: str, account_id: str) -> None:
        # Kept as long as a race's log is (a day): long enough for its end to be counted.
        await self.kv.set(f"bk:race:{{{race_id}}}:accounts:{player_id}", account_id, 2 * 86400)

    async def player_account(self, race_id: str, player_id: str) -> str | None:
        return await self.kv.get(f"bk:race:{{{race_id}}}:accounts:{player_id}")

    async def mark_counted(self, race_id: str) -> bool:
        """True the first time only: a race's end is counted once, whichever process sees it."""
        return await self.kv.set_nx(f"bk:rated:{{{race_id}}}", "1", 2 * 86400)

    async def add_result(self, account_id: str, result: RaceResult, cap: int) -> None:
        await self.kv.push(f"bk:acct:{{{account_id}}}:history", _dump(result.to_dict()), cap)

    async def history(self, account_id: str, limit: int) -> list[RaceResult]:
        texts = await self.kv.items(f"bk:acct:{{{account_id}}}:history", limit)
        return [RaceResult.from_dict(json.loads(text)) for text in texts]

    async def rating(self, account_id: str, cells: int) -> Rating | None:
        return _rating(await self.kv.get(f"bk:acct:{{{account_id}}}:rating:{cells}"))

    async def set_rating(self, account_id: str, cells: int, rating: Rating) -> None:
        await self.kv.set(f"bk:acct:{{{account_id}}}:rating:{cells}", _dump(rating.to_dict()))
        # Each counted race adds one to the version, in the same write as the rating.
        await self.kv.zset(f"bk:ratings:{{{cells}}}", account_id, rating.shown, rating.races)

    async def update_rating(
        self, account_id: str, cells: int, change: Callable[[Rating | None], Rating]
    ) -> Rating:
        """Change a rating from its current value atomically, so two races ending at
        once both count; then the top list shows it. The top list is another key
        (on a cluster, another shard), so its entry carries the rating's race
        count: a race that wrote first but reaches the list last cannot put an
        older rating back over a newer one."""
        text = await self.kv.update(
            f"bk:acct:{{{account_id}}}:rating:{cells}",
            lambda found: _dump(change(_rating(found)).to_dict()),
        )
        rating = Rating.from_dict(json.loads(text))
        await self.kv.zset(f"bk:ratings:{{{cells}}}", account_id, rating.shown, rating.races)
        return rating

    async def add_rating_point(
        self, account_id: str, cells: int, point: RatingPoint, cap: int
    ) -> None:
        """A point of the rating's history for ``cells`` cells (the oldest go past ``cap``)."""
        await self.kv.push(f"bk:acct:{{{account_id}}}:ratings:{cells}", _dump(point), cap)

    async def rating_history(self, account_id: str, cells: int, limit: int) -> list[RatingPoint]:
        """The rating's history for ``cells`` cells, newest first."""
        texts = await self.kv.items(f"bk:acct:{{{account_id}}}:ratings:{cells}", limit)
        return [json.loads(text) for text in texts]

    async def top(self, cells: int, limit: int) -> list[tuple[str, float]]:
        return await self.kv.ztop(f"bk:ratings:{{{cells}}}", limit)
