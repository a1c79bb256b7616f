"""Unguessable identifiers and secrets."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from .errors import Refused


def new_race_id() -> str:
    """96 random bits, URL-safe: nothing but this id leads to a race."""
    return secrets.token_urlsafe(12)


def new_player_id() -> str:
    """A player's public id: 48 random bits (others see it; it proves nothing)."""
    return "p" + secrets.token_urlsafe(6)


def new_secret() -> str:
    """A reconnect token or host key: 192 random bits."""
    return secrets.token_urlsafe(24)


def secret_hash(secret: str) -> str:
    """Only hashes of secrets are stored, so a leaked race log leaks no token."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, expected_hash: str) -> bool:
    """Whether ``secret`` hashes to ``expected_hash``, in constant time."""
    return hmac.compare_digest(secret_hash(secret), expected_hash)


_PLAYER_KEY = re.compile(r"[A-Za-z0-9._~-]{16,128}", re.ASCII)


def player_key(value: object) -> str:
    """A guest's player key (their browser's secret for the daily challenge and its
    streak); :class:`Refused` ``bad_player_key`` when it is not one."""
    if not isinstance(value, str) or not _PLAYER_KEY.fullmatch(value):
        raise Refused("bad_player_key", "a player key is 16 to 128 characters: A-Z a-z 0-9 . _ ~ -")
    return value
