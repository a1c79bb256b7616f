"""Sign-up's two writes (the name, then the account): a crash between them frees the name."""

from __future__ import annotations

import asyncio

import pytest

from boulanger.broker import open_store
from boulanger.broker.accounts import AccountStore
from boulanger.broker.desk import DeskStore
from boulanger.race import accounts as a
from boulanger.web.accounts import Accounts
from boulanger.web.settings import Settings


class Crash(Exception):
    pass


async def test_a_crash_between_name_and_account_does_not_hold_the_name() -> None:
    store = open_store("memory://")
    await store.start()
    try:
        settings = Settings.from_env(argon2_time_cost=1, argon2_memory_kib=1024)
        accounts = Accounts(AccountStore(store.kv), settings, store.daily, DeskStore(store.kv))
        accounts.pending_s = 0.05
        saved = accounts.store.save

        async def crash(account: a.Account) -> None:
            raise Crash

        accounts.store.save = crash  # type: ignore[method-assign]
        accounts.pending_s = 60  # still held when looked at, however slow the machine
        with pytest.raises(Crash):
            await accounts.create("Baker", password="long enough", key_hash=None)
        # Held while the sign-up may still finish...
        assert not await accounts.store.claim_name(a.account_key("Baker"), "someone", 60)
        await accounts.store.release_name(a.account_key("Baker"))
        accounts.pending_s = 0.05
        with pytest.raises(Crash):
            await accounts.create("Baker", password="long enough", key_hash=None)
        async with asyncio.timeout(10):  # the reservation's own expiry
            while await accounts.store.name_taken(a.account_key("Baker")):
                await asyncio.sleep(0.01)
        # ...then free again, and a sign-up that completes keeps it for good.
        accounts.store.save = saved  # type: ignore[method-assign]
        account = await accounts.create("Baker", password="long enough", key_hash=None)
        await asyncio.sleep(0.1)
        found = await accounts.store.account_by_name(a.account_key("Baker"))
        assert found is not None and found.id == account.id
    finally:
        await store.close()
