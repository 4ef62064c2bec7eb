"""A software authenticator: what a browser and a security key do in a WebAuthn
ceremony, written out from the specification so a socket-level test is a real
client of the real server (no browser in the way, every byte under the test's
control: origin, RP ID, counter, challenge).

ES256 (P-256, SHA-256) keys from ``cryptography`` for the credentials it makes,
and EdDSA (Ed25519) for one read out of Chromium's virtual authenticator, which
picks it; ``none`` attestation; the JSON a browser's ``PublicKeyCredential.toJSON()``
gives.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

UP, UV, AT = 0x01, 0x04, 0x40  # authenticatorData flags: user present, verified, attested data


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Credential:
    """One credential the authenticator holds: its key, its RP and user, its counter."""

    credential_id: bytes
    key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
    rp_id: str
    user_handle: bytes
    count: int = 0

    def cose_key(self) -> bytes:
        if isinstance(self.key, ed25519.Ed25519PrivateKey):  # OKP, EdDSA, Ed25519
            raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: raw})
        numbers = self.key.public_key().public_numbers()  # EC2, ES256, P-256
        x, y = numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: x, -3: y})

    def sign(self, data: bytes) -> bytes:
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            return self.key.sign(data)
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))


@dataclass
class SoftAuthenticator:
    """Makes and uses credentials as a platform authenticator with a PIN would:
    user present and verified, a counter that moves on with every signature."""

    origin: str  # the page's origin, which the browser would write into clientDataJSON
    credentials: list[Credential] = field(default_factory=list)
    aaguid: bytes = bytes(16)

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps(
            {"type": kind, "challenge": challenge, "origin": origin or self.origin,
             "crossOrigin": False},
            separators=(",", ":"),
        ).encode()  # fmt: skip

    def create(
        self,
        options: dict[str, Any],
        *,
        rp_id: str | None = None,
        origin: str | None = None,
        reuse: Credential | None = None,
    ) -> dict[str, Any]:
        """``navigator.credentials.create`` with the server's options: a new
        credential, answered as ``toJSON()`` would. ``rp_id``/``origin`` stand in
        for a browser on another site (the options' RP ID otherwise); ``reuse``
        attests an existing credential again (its id and key), as a copy of it would."""
        rp = rp_id or options["rp"]["id"]
        if reuse is not None:
            cred = reuse
        else:
            cred = Credential(
                secrets.token_bytes(32),
                ec.generate_private_key(ec.SECP256R1()),
                rp,
                unb64url(options["user"]["id"]),
            )
            self.credentials.append(cred)
        attested = self.aaguid + struct.pack(">H", len(cred.credential_id)) + cred.credential_id
        auth_data = (
            hashlib.sha256(rp.encode()).digest()
            + bytes([UP | UV | AT])
            + struct.pack(">I", cred.count)
            + attested
            + cred.cose_key()
        )
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        return {
            "id": b64url(cred.credential_id),
            "rawId": b64url(cred.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "attestationObject": b64url(attestation),
                "transports": ["internal"],
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }

    def get(
        self,
        options: dict[str, Any],
        *,
        credential: Credential | None = None,
        rp_id: str | None = None,
        origin: str | None = None,
        user_handle: bytes | None = None,
    ) -> dict[str, Any]:
        """``navigator.credentials.get``: an assertion over the options' challenge
        by ``credential`` (the first one for the RP ID by default), its counter
        moved on."""
        rp = rp_id or options["rpId"]
        cred = credential or next(c for c in self.credentials if c.rp_id == rp)
        cred.count += 1
        auth_data = (
            hashlib.sha256(rp.encode()).digest() + bytes([UP | UV]) + struct.pack(">I", cred.count)
        )
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = cred.sign(signed)
        return {
            "id": b64url(cred.credential_id),
            "rawId": b64url(cred.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
                "userHandle": b64url(user_handle or cred.user_handle),
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }
