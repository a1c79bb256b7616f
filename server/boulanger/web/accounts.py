"""Accounts in one server process: sessions, passwords, sign-ups, sign-in limits.

See docs/protocol.md, "Accounts". The rules are :mod:`boulanger.race.accounts`'s,
the storage :mod:`boulanger.broker.accounts`'s, the HTTP routes
:mod:`.accounts_http`'s and :mod:`.passkeys`'s; this module is the service
between them: cookies, ``Origin`` checks and argon2id.

- A session is a random id in the ``bk_session`` cookie (``HttpOnly``,
  ``SameSite=Lax``, ``Secure`` when ``cookie_secure`` is set), kept in the
  store by its hash, for :data:`~boulanger.race.accounts.SESSION_DAYS` days.
- Every state-changing request of the accounts' routes must come with an
  ``Origin`` that is the server's own (a form or a script on another site
  cannot sign anyone in or out, or delete anything).
- Sign-in attempts, right or wrong, are counted in the store (atomically,
  across processes) before any password work: per account name (whether it
  exists or not) and per address; past a limit, sign-in answers 429 for the
  rest of the window, the same for a name that exists and one that does not.
  A browser that signed in to an account before carries a *device cookie*
  (``bk_device``): its attempts at that account are counted per device
  instead, so strangers' guesses cannot lock the owner out. A wrong name and
  a wrong password get the same answer, after the same work (a password is
  checked against a dummy hash when the name is unknown). The work runs on
  :mod:`.passwords`' bounded pool.
- What takes an account over (deleting it, adding a passkey, changing the
  password) needs the current password or a passkey assertion in the
  request (:meth:`Accounts.reauthenticate`), counted as a sign-in attempt;
  a password change ends every other session of the account.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from webauthn import verify_authentication_response
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.exceptions import WebAuthnException

from ..broker import DailyStore
from ..broker.accounts import AccountStore
from ..broker.desk import DeskStore
from ..broker.memory import MemoryLimits
from ..race import accounts as a
from ..race import daily as d
from ..race.errors import Refused
from ..race.ids import secret_hash
from ..race.names import clean_name, look_alike, name_key
from .clock import now_ms
from .limits import AddressLimits
from .passwords import PasswordWork
from .settings import Settings

log = logging.getLogger(__name__)

COOKIE = "bk_session"
DEVICE_COOKIE = "bk_device"
REFUSED = {
    "too_many_attempts": "too many attempts; try again later",
    "too_many_accounts": "too many accounts made from this address; try again later",
}
CEREMONY_S = 300.0  # a passkey ceremony's challenge lives this long
CELLS = (4, 2, 1)


def new_account_id() -> str:
    """A new account's id: 96 random bits."""
    return secrets.token_hex(12)


def host_of(origin: str) -> str:
    """The host name of an origin: a passkey's relying party id."""
    return urlsplit(origin).hostname or ""


class Accounts:
    """Accounts in one server process: their store, the password hasher, the days they keep.

    ``daily`` is the daily challenge's store: a profile shows the account's
    streak, and a deleted account's entries are renamed there. ``desk`` keeps
    moderators' decisions: a rated race's results and ratings follow them.
    ``limits`` counts attempts in the store (this process's counters when not given).
    """

    def __init__(
        self,
        store: AccountStore,
        settings: Settings,
        daily: DailyStore,
        desk: DeskStore,
        limits: AddressLimits | None = None,
    ) -> None:
        self.store = store
        self.desk = desk
        self.settings = settings
        self.daily = daily
        self.limits = limits or AddressLimits(MemoryLimits(), 0, 0)
        self.work = PasswordWork(
            settings.argon2_slots, settings.argon2_wait_s, settings.argon2_waiting_max
        )
        self.hasher = PasswordHasher(
            time_cost=settings.argon2_time_cost,
            memory_cost=settings.argon2_memory_kib,
            parallelism=settings.argon2_parallelism,
        )
        # How long a sign-up holds its name before its account is saved.
        self.pending_s: float = a.SIGNUP_PENDING_S
        # Checked when a name is unknown, so that it costs what a known one does.
        self._dummy = self.hasher.hash(secrets.token_hex(16))

    # -- origins and sessions -------------------------------------------------

    def origin_of(self, conn: HTTPConnection) -> str:
        """The server's own origin: the setting, or the request's scheme and host."""
        if self.settings.public_origin:
            return self.settings.public_origin.rstrip("/")
        scheme = "https" if conn.url.scheme in ("https", "wss") else "http"
        return f"{scheme}://{conn.headers.get('host', '')}"

    def same_origin(self, conn: HTTPConnection) -> bool:
        return conn.headers.get("origin") == self.origin_of(conn)

    async def account_of(self, conn: HTTPConnection) -> a.Account | None:
        """The signed-in account of a request or WebSocket, from its session cookie."""
        session = conn.cookies.get(COOKIE)
        if not session or len(session) > 100:
            return None
        found = await self.store.session_of(secret_hash(session))
        if found is None:
            return None
        account = await self.store.account(found[0])  # None once deleted: the session is over
        if account is None or account.epoch != found[1]:
            return None  # opened before the password last changed: over
        return account

    async def open_session(self, response: Response, account: a.Account) -> None:
        session = secrets.token_urlsafe(32)
        ttl = a.SESSION_DAYS * 86400
        await self.store.open_session(secret_hash(session), account.id, ttl, account.epoch)
        # This browser signed in to the account: its own sign-ins are counted apart.
        device = secrets.token_urlsafe(32)
        device_ttl = a.DEVICE_DAYS * 86400
        await self.store.note_device(secret_hash(device), account.id, device_ttl)
        response.set_cookie(
            DEVICE_COOKIE,
            device,
            max_age=device_ttl,
            path="/api/",
            httponly=True,
            samesite="strict",
            secure=self.settings.cookie_secure,
        )
        response.set_cookie(
            COOKIE,
            session,
            max_age=ttl,
            path="/",
            httponly=True,
            samesite="lax",
            secure=self.settings.cookie_secure,
        )

    async def close_session(self, request: Request, response: Response) -> None:
        session = request.cookies.get(COOKIE)
        if session and len(session) <= 100:
            await self.store.close_session(secret_hash(session))
        response.delete_cookie(
            COOKIE, path="/", httponly=True, samesite="lax", secure=self.settings.cookie_secure
        )

    # -- passwords ---------------------------------------------------------

    async def hash_password(self, password: str) -> str:
        # argon2id takes tens of milliseconds of one core: off the event loop, bounded.
        return await self.work.run(lambda: self.hasher.hash(password))

    async def verify_password(self, stored: str | None, password: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(stored or self._dummy, password) and stored is not None
            except (VerificationError, InvalidHashError):
                return False

        return await self.work.run(verify)

    def close(self) -> None:
        """Stop the password threads."""
        self.work.close()

    # -- limits ------------------------------------------------------------

    async def _count(
        self, key: str, limit: int, window_s: float, code: str = "too_many_attempts"
    ) -> None:
        """Count one hit of ``key`` in the store; :class:`Refused` ``code`` when over."""
        if not await self.limits.hit(key, limit, window_s):
            raise Refused(code, REFUSED[code])

    async def trusted_device(self, conn: HTTPConnection, account_id: str | None) -> str | None:
        """The hash of the request's device cookie when that device signed in to
        ``account_id`` before (None otherwise)."""
        device = conn.cookies.get(DEVICE_COOKIE)
        if account_id is None or not device or len(device) > 100:
            return None
        device_hash = secret_hash(device)
        return device_hash if await self.store.device(device_hash) == account_id else None

    async def count_signin(
        self, conn: HTTPConnection, name_key: str, account_id: str | None, address: str
    ) -> None:
        """Count one sign-in attempt, before any work; :class:`Refused`
        ``too_many_attempts`` past a limit (nothing is checked then).

        Per name (``name_key``: the account name's key, or the passkey's) and per
        address; from a device that signed in to the account before, per device
        instead: strangers' failures do not lock the owner out.
        """
        s, window = self.settings, a.SIGNIN_WINDOW_S
        device = await self.trusted_device(conn, account_id)
        if device is not None:
            await self._count(
                f"signin:dev:{{{device}}}",
                s.signin_attempts_per_account,
                window,
            )
            return
        await self._count(f"signin:addr:{{{address}}}", s.signin_attempts_per_address, window)
        await self._count(
            f"signin:name:{{{name_key}}}",
            s.signin_attempts_per_account,
            window,
        )

    async def count_signup(self, address: str) -> None:
        """Count one account made from ``address``; ``too_many_accounts`` past the limit."""
        await self._count(
            f"signup:{{{address}}}",
            self.settings.signups_per_address,
            a.SIGNUP_WINDOW_S,
            "too_many_accounts",
        )

    async def count_ceremony(self, address: str) -> None:
        """Count one passkey ceremony begun from ``address`` (each keeps a challenge)."""
        await self._count(
            f"ceremony:{{{address}}}",
            self.settings.ceremonies_per_address,
            a.SIGNIN_WINDOW_S,
        )

    # -- passkeys and re-authentication ----------------------------------------

    def check_assertion(
        self, conn: HTTPConnection, challenge: str, credential: dict[str, Any], account: a.Account
    ) -> a.Passkey:
        """The account's passkey that signed ``challenge`` in ``credential`` (its sign
        count moved on); :class:`Refused` ``bad_credentials`` otherwise."""
        credential_id = credential.get("id")
        passkey = account.passkey(credential_id) if isinstance(credential_id, str) else None
        origin = self.origin_of(conn)
        try:
            if passkey is None:
                raise ValueError("not this account's passkey")
            verified = verify_authentication_response(
                credential=credential,
                expected_challenge=base64url_to_bytes(challenge),
                expected_rp_id=host_of(origin),
                expected_origin=origin,
                credential_public_key=base64url_to_bytes(passkey.public_key),
                credential_current_sign_count=passkey.sign_count,
            )
        except (WebAuthnException, ValueError, KeyError, TypeError):
            raise Refused("bad_credentials", "that passkey was not accepted") from None
        passkey.sign_count = verified.new_sign_count
        return passkey

    async def reauthenticate(
        self, conn: HTTPConnection, account: a.Account, data: dict[str, Any], address: str
    ) -> None:
        """The request proves, again, that its sender holds the account: ``current`` (its
        password) or ``passkey`` (``{"ceremony", "credential"}``, a sign-in ceremony's
        assertion by one of its passkeys). Counted as a sign-in attempt of the account
        (per account and address, before any work); :class:`Refused`
        ``bad_credentials`` otherwise."""
        s, window = self.settings, a.SIGNIN_WINDOW_S
        await self._count(f"signin:addr:{{{address}}}", s.signin_attempts_per_address, window)
        await self._count(f"reauth:{{{account.id}}}", s.signin_attempts_per_account, window)
        passkey, current = data.get("passkey"), data.get("current")
        if passkey is not None:
            if not isinstance(passkey, dict):
                raise Refused("bad_message", "passkey is {ceremony, credential}")
            ceremony, credential = passkey.get("ceremony"), passkey.get("credential")
            if (
                not isinstance(ceremony, str)
                or len(ceremony) > 100
                or not isinstance(credential, dict)
            ):
                raise Refused("bad_message", "passkey is {ceremony, credential}")
            found = await self.store.take_ceremony(secret_hash(ceremony), CEREMONY_S)
            if found is None or found.kind != "signin":
                raise Refused(
                    "bad_ceremony", "that passkey request is unknown or over; start again"
                )
            self.check_assertion(conn, found.challenge, credential, account)
            await self.store.save(account)
            return
        if account.password is None:
            raise Refused("bad_credentials", "confirm with one of the account's passkeys")
        if not isinstance(current, str) or len(current) > a.PASSWORD_MAX:
            raise Refused("bad_credentials", "confirm with the account's current password")
        if not await self.verify_password(account.password, current):
            raise Refused("bad_credentials", "the current password is wrong")

    # -- accounts ----------------------------------------------------------

    async def create(
        self,
        name: str,
        *,
        password: str | None,
        key_hash: str | None,
        account_id: str | None = None,
        passkey: a.Passkey | None = None,
    ) -> a.Account:
        """A new account named ``name``; :class:`Refused` ``name_taken`` when it looks taken.

        ``key_hash``: the hash of the guest player key this browser held, if any.
        """
        account_id = account_id or new_account_id()
        # Hashed first: a busy pool refuses the sign-up before it holds any name.
        hashed = None if password is None else await self.hash_password(password)
        keys = a.account_keys(name)
        # The name (both its keys) and passkey are reserved for a while, then kept once
        # the account is saved: a crash in between frees them again instead of holding
        # them for ever.
        pending = self.pending_s
        claimed: list[str] = []
        for key in keys:
            if not await self.store.claim_name(key, account_id, pending):
                for done in claimed:
                    await self.store.release_name(done)
                raise Refused("name_taken", f"{name!r} is taken (or looks like a name taken)")
            claimed.append(key)
        if passkey is not None and not await self.store.claim_credential(
            passkey.id, account_id, pending
        ):
            for key in keys:
                await self.store.release_name(key)
            raise Refused("passkey_taken", "that passkey belongs to an account already")
        daily_key = hashlib.sha256(f"account:{account_id}".encode()).hexdigest()
        # A guest's key, claimed once: its dailies and streak become the account's.
        if key_hash is not None and await self.store.claim_guest_key(key_hash, account_id):
            daily_key = key_hash
        account = a.Account(
            id=account_id,
            name=name,
            password=hashed,
            passkeys=[] if passkey is None else [passkey],
            daily_key=daily_key,
            secret=secrets.token_hex(16),
            created=now_ms(),
        )
        await self.store.save(account)
        for key in keys:
            await self.store.keep_name(key, account_id)
        if passkey is not None:
            await self.store.keep_credential(passkey.id, account_id)
        return account

    async def find(self, name: str) -> a.Account | None:
        """The account named ``name`` (cleaned), or by a look-alike key of the same case-
        folded name: an account made before the name key folded case first."""
        account = await self.store.account_by_name(a.account_key(name))
        if account is not None:
            return account
        for key in a.account_keys(name)[1:]:
            found = await self.store.account_by_name(key)
            if found is not None and name_key(found.name) == name_key(name):
                return found
        return None

    async def change_password(self, account: a.Account, password: str) -> None:
        """A new password; every session opened before ends (the account's epoch moves)."""
        account.password = await self.hash_password(password)
        account.epoch += 1
        await self.store.save(account)

    async def delete(self, account: a.Account) -> None:
        """The account goes, with its personal data; its daily entries are renamed."""
        await self.store.delete(account, a.account_keys(account.name), list(CELLS))
        await self.forget_dailies(account)

    async def rating_shown(self, account: a.Account, cells: int) -> int:
        """The account's rating for ``cells`` as shown beside its name."""
        return (await self.store.rating(account.id, cells) or a.Rating()).shown

    async def check_guest_name(self, name: str | None) -> None:
        """Refuse a guest a name an account holds (or "deleted player"), under the
        same normalisation and look-alike key as account names: a guest must not
        pass for a signed-in player in another race."""
        try:
            cleaned = clean_name(name or "")
        except Refused:
            return  # the race refuses it as bad_name
        if a.guest_default(cleaned):
            return  # a name the client gives guests: no account may hold it
        if look_alike(cleaned, a.DELETED) or any(
            [await self.store.name_taken(key) for key in a.account_keys(cleaned)]
        ):
            raise Refused(
                "name_reserved", f"{cleaned!r} is an account's name: sign in to play as it"
            )

    async def forget_dailies(self, account: a.Account) -> None:
        """Show the account's daily entries under "deleted player".

        Rewritten at deletion, not resolved when read: a day's leaderboard is
        kept for weeks (longer than a race's player -> account notes), its
        pages would need a lookup per entry, and the account knows its one
        player key, so its entries are one look-up per kept day.
        """
        today = d.today(now_ms())
        for back in range(self.daily.retention_days + 2):
            await self.daily.rename(today - timedelta(days=back), account.daily_key, a.DELETED)
