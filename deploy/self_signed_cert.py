"""Make a self-signed TLS certificate for the proxy, unless one is there.

    python deploy/self_signed_cert.py DIR

Writes ``DIR/cert.pem`` and ``DIR/key.pem`` (an ECDSA P-256 key, valid for
397 days) when ``DIR/cert.pem`` is missing, and does nothing otherwise: a
certificate of your own, mounted there, is kept. The names it is valid for
come from ``BOULANGER_TLS_NAMES`` (by comma; default ``localhost,127.0.0.1``).
docker-compose.yml runs it once before nginx starts; browsers warn about a
self-signed certificate, so put a real one in its place for a public site.
It needs only ``cryptography``, which the server's image has (webauthn's).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VALID_DAYS = 397


def make(folder: Path, names: list[str]) -> bool:
    """Write the certificate and key into ``folder`` unless a certificate is there."""
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    if cert_path.exists():
        return False
    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = []
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt.append(x509.DNSName(name))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.chmod(key_path, 0o600)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return True


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    names = [
        n.strip() for n in os.environ.get("BOULANGER_TLS_NAMES", "localhost,127.0.0.1").split(",")
    ]
    folder = Path(sys.argv[1])
    made = make(folder, [n for n in names if n])
    print(f"{folder / 'cert.pem'}: {'made (self-signed)' if made else 'kept'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
