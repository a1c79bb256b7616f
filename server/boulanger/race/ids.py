"""Unguessable identifiers and secrets."""

from __future__ import annotations

import hashlib
import hmac
import secrets


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
