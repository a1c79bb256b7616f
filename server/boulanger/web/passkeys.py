"""Passkeys (WebAuthn, with the ``webauthn`` library): sign up, sign in, add one.

Each ceremony is two requests: ``.../options`` answers ``{"ceremony", "options"}``
(the options as ``PublicKeyCredential*Options`` JSON), and the second request
sends ``{"ceremony", "credential"}`` (the browser's credential as JSON). The
challenge is kept in the store by the ceremony id's hash for five minutes and
used once (atomically: of a ceremony's second requests sent at once, one is
taken), so any replica can finish what another began. Each ceremony begun is
counted per address. Passkeys are discoverable: signing in asks for no name.
Adding a passkey needs the current password or an assertion by a passkey
the account has (:meth:`.accounts.Accounts.reauthenticate`).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialCreationOptions,
    PublicKeyCredentialDescriptor,
    PublicKeyCredentialRequestOptions,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ..race import accounts as a
from ..race.errors import Refused
from ..race.ids import secret_hash
from .accounts import CEREMONY_S, Accounts, host_of, new_account_id
from .accounts_http import (
    accounts_of,
    address_of,
    body,
    guarded,
    optional_player_key,
    signed_in,
)

RP_NAME = "Boulanger"


Options = PublicKeyCredentialCreationOptions | PublicKeyCredentialRequestOptions


async def _begin(
    request: Request, accounts: Accounts, kind: str, options: Options, **fields: str | None
) -> Response:
    await accounts.count_ceremony(address_of(request))  # each keeps a challenge a while
    ceremony = secrets.token_urlsafe(24)
    challenge = bytes_to_base64url(options.challenge)
    kept = a.Ceremony(kind, challenge, **fields)
    await accounts.store.put_ceremony(secret_hash(ceremony), kept, CEREMONY_S)
    return JSONResponse({"ceremony": ceremony, "options": json.loads(options_to_json(options))})


async def _finish(request: Request, kind: str) -> tuple[Accounts, a.Ceremony, dict[str, Any]]:
    accounts = accounts_of(request)
    data = await body(request, {"ceremony", "credential"})
    ceremony, credential = data.get("ceremony"), data.get("credential")
    if not isinstance(ceremony, str) or len(ceremony) > 100 or not isinstance(credential, dict):
        raise Refused("bad_message", "send the ceremony and the credential")
    found = await accounts.store.take_ceremony(secret_hash(ceremony), CEREMONY_S)
    if found is None or found.kind != kind:
        raise Refused("bad_ceremony", "that passkey request is unknown or over; start again")
    return accounts, found, credential


def _registration(
    accounts: Accounts, request: Request, name: str, user_id: str, exclude: list[str]
) -> PublicKeyCredentialCreationOptions:
    origin = accounts.origin_of(request)
    return generate_registration_options(
        rp_id=host_of(origin),
        rp_name=RP_NAME,
        user_name=name,
        user_id=user_id.encode(),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in exclude
        ],
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
    )


def _verified_passkey(
    accounts: Accounts, request: Request, found: a.Ceremony, credential: dict[str, Any]
) -> a.Passkey:
    origin = accounts.origin_of(request)
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=base64url_to_bytes(found.challenge),
            expected_rp_id=host_of(origin),
            expected_origin=origin,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as error:
        raise Refused("bad_passkey", f"the passkey was not accepted: {error}") from None
    return a.Passkey(
        bytes_to_base64url(verified.credential_id),
        bytes_to_base64url(verified.credential_public_key),
        verified.sign_count,
    )


async def signup_options(request: Request) -> Response:
    """``POST /api/accounts/passkey/options``: ``{"name", "player_key"?}``."""
    accounts = accounts_of(request)
    data = await body(request, {"name", "player_key"})
    name = a.account_name(data.get("name"))
    player_key = optional_player_key(data.get("player_key"))
    if any([await accounts.store.name_taken(key) for key in a.account_keys(name)]):
        raise Refused("name_taken", f"{name!r} is taken (or looks like a name taken)")
    account_id = new_account_id()
    options = _registration(accounts, request, name, account_id, [])
    key_hash = None if player_key is None else secret_hash(player_key)
    return await _begin(
        request, accounts, "signup", options, name=name, account_id=account_id, key_hash=key_hash
    )


async def signup(request: Request) -> Response:
    """``POST /api/accounts/passkey``: the new passkey; the account is made and signed in."""
    accounts, found, credential = await _finish(request, "signup")
    passkey = _verified_passkey(accounts, request, found, credential)
    await accounts.count_signup(address_of(request))
    if found.name is None or found.account_id is None:
        raise Refused("bad_ceremony", "that passkey request is unknown or over; start again")
    account = await accounts.create(
        found.name,
        password=None,
        key_hash=found.key_hash,
        account_id=found.account_id,
        passkey=passkey,
    )
    response = JSONResponse(a.me(account), status_code=201)
    await accounts.open_session(response, account)
    return response


async def signin_options(request: Request) -> Response:
    """``POST /api/session/passkey/options``: a challenge for any of this site's passkeys."""
    accounts = accounts_of(request)
    await body(request, set())
    origin = accounts.origin_of(request)
    options = generate_authentication_options(
        rp_id=host_of(origin), user_verification=UserVerificationRequirement.PREFERRED
    )
    return await _begin(request, accounts, "signin", options)


async def signin(request: Request) -> Response:
    """``POST /api/session/passkey``: the signed challenge; the account is signed in."""
    accounts, found, credential = await _finish(request, "signin")
    credential_id = credential.get("id")
    key = secret_hash(str(credential_id))[:32]
    account = None
    if isinstance(credential_id, str) and len(credential_id) <= 1024:
        account = await accounts.store.account_by_credential(credential_id)
    await accounts.count_signin(
        request, key, None if account is None else account.id, address_of(request)
    )
    if account is None:
        raise Refused("bad_credentials", "that passkey was not accepted")
    accounts.check_assertion(request, found.challenge, credential, account)
    await accounts.store.save(account)
    response = JSONResponse(a.me(account))
    await accounts.open_session(response, account)
    return response


async def add_options(request: Request) -> Response:
    """``POST /api/me/passkeys/options``: ``{"current"}`` (the password) or ``{"passkey":
    {"ceremony", "credential"}}`` (an assertion); a challenge to add a passkey."""
    accounts = accounts_of(request)
    account = await signed_in(request)
    data = await body(request, {"current", "passkey"})
    await accounts.reauthenticate(request, account, data, address_of(request))
    exclude = [p.id for p in account.passkeys]
    options = _registration(accounts, request, account.name, account.id, exclude)
    return await _begin(request, accounts, "add", options, account_id=account.id)


async def add(request: Request) -> Response:
    """``POST /api/me/passkeys``: the new passkey joins the signed-in account."""
    account = await signed_in(request)
    accounts, found, credential = await _finish(request, "add")
    if found.account_id != account.id:
        raise Refused("bad_ceremony", "that passkey request is another account's")
    passkey = _verified_passkey(accounts, request, found, credential)
    if not await accounts.store.claim_credential(passkey.id, account.id):
        raise Refused("passkey_taken", "that passkey belongs to an account already")
    account.passkeys.append(passkey)
    await accounts.store.save(account)
    return JSONResponse(a.me(account))


def routes() -> list[BaseRoute]:
    """The passkey routes: all POST, all state-changing (``Origin`` checked)."""
    return [
        Route(path, guarded(handler), methods=["POST"])
        for path, handler in (
            ("/api/accounts/passkey/options", signup_options),
            ("/api/accounts/passkey", signup),
            ("/api/session/passkey/options", signin_options),
            ("/api/session/passkey", signin),
            ("/api/me/passkeys/options", add_options),
            ("/api/me/passkeys", add),
        )
    ]
