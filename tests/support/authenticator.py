"""A software passkey: what a browser's authenticator sends, made in Python for HTTP tests.

It answers the WebAuthn options the server gives with a "none" attestation
(registration) or a P-256 signature (sign-in), as the browser's
``PublicKeyCredential.toJSON()`` would. The browser tests use Chromium's own
virtual authenticator instead.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, encode_cbor


class SoftPasskey:
    """One credential of one authenticator."""

    def __init__(self, origin: str, rp_id: str = "127.0.0.1") -> None:
        self.origin = origin
        self.rp_id = rp_id
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = secrets.token_bytes(16)
        self.count = 0
        self.user_handle: str | None = None

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps(
            {"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}
        ).encode()

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """The registration credential for ``options`` (PublicKeyCredentialCreationOptions)."""
        numbers = self.key.public_key().public_numbers()
        cose = encode_cbor(
            {
                1: 2,
                3: -7,
                -1: 1,
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        )
        auth_data = (
            hashlib.sha256(options["rp"]["id"].encode()).digest()
            + bytes([0x45])  # user present, verified, attested credential data
            + self.count.to_bytes(4, "big")
            + bytes(16)
            + len(self.credential_id).to_bytes(2, "big")
            + self.credential_id
            + cose
        )
        self.user_handle = options["user"]["id"]
        attestation = encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        cid = bytes_to_base64url(self.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(
                    self._client_data("webauthn.create", options["challenge"])
                ),
                "attestationObject": bytes_to_base64url(attestation),
            },
        }

    def get(self, options: dict[str, Any]) -> dict[str, Any]:
        """The authentication credential for ``options`` (PublicKeyCredentialRequestOptions)."""
        self.count += 1
        auth_data = (
            hashlib.sha256(options["rpId"].encode()).digest()
            + bytes([0x05])
            + self.count.to_bytes(4, "big")
        )
        client_data = self._client_data("webauthn.get", options["challenge"])
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        cid = bytes_to_base64url(self.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(client_data),
                "authenticatorData": bytes_to_base64url(auth_data),
                "signature": bytes_to_base64url(signature),
                "userHandle": self.user_handle,
            },
        }


__all__ = ["SoftPasskey", "base64url_to_bytes"]
