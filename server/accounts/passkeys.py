"""Passkeys: signing in with WebAuthn, through the maintained ``webauthn`` package.

Two ceremonies, each in two steps over the connection's socket: the server
hands out options with a fresh challenge (``passkey_options``), the browser has
an authenticator sign them, and the server verifies what comes back
(``add_passkey`` registers a credential on the signed-in account; ``hello``'s
``passkey`` signs in as a new device of the credential's account).

What makes a signature worth anything here:

- **Challenges** are 32 random bytes, kept in this node's memory beside the
  connection that asked (a weak map: a closed connection's go with it), one per
  purpose, for :data:`CHALLENGE_MS`. Verifying takes out first the connection's
  own challenge and the one the answer names (its client data's, whichever
  connection was given it), so whatever the outcome neither is accepted again:
  an assertion replayed on the same or another socket, a challenge asked for on
  one connection and answered on another (after which it is spent there too),
  and a stale one are all refused alike.
- **RP ID and origin** are the connection's :class:`~server.peer.Site` (the
  Host it reached and ``serve --rp-id``/``--origin``, server/net/http.py
  ``site_of``), fixed when the challenge was given.
- **The signature counter** moves on in the store atomically
  (``AccountStore.use_passkey``), so two nodes verifying copies of one assertion
  cannot both win, and a cloned authenticator's older count is refused.
- **User verification** is required: a passkey is the whole sign-in, so the
  authenticator must have checked its owner (PIN, fingerprint, face).

Every failure is one answer, ``bad_passkey``, whatever the cause: nobody
probing learns whether a credential exists or whose it is.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import secrets
import weakref
from dataclasses import dataclass
from typing import Any, Protocol

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from protocol.account_requests import MAX_LABEL, PasskeyPurpose
from protocol.messages import ErrorCode

from ..core.values import RoomError
from ..peer import Peer, Site
from .model import Account, Passkey
from .store import AccountStore

__all__ = [
    "CHALLENGE_MS",
    "RP_NAME",
    "Ceremonies",
    "credential_key",
    "passkey_view",
]

CHALLENGE_MS = 120_000  # long enough to find a phone and touch it; no longer
RP_NAME = "Klondike race"
_BAD = "that passkey did not sign in here"


@dataclass(frozen=True, slots=True)
class _Challenge:
    value: bytes
    site: Site
    expires: int  # the server clock's milliseconds
    account: str | None  # REGISTER: the account it was given to


def credential_key(credential_id: bytes) -> str:
    """A credential id as the browser spells it (``PublicKeyCredential.id``):
    base64url without padding; also the id the account screen lists."""
    return base64.urlsafe_b64encode(credential_id).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _named_challenge(credential: dict[str, Any]) -> bytes | None:
    """The challenge an answer says it signs (its client data's), unverified:
    enough to spend it, never to accept anything."""
    response = credential.get("response")
    data = response.get("clientDataJSON") if isinstance(response, dict) else None
    raw = _unb64url(data) if isinstance(data, str) else None
    try:
        named = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):  # not JSON, not text, or nested past reason
        return None
    challenge = named.get("challenge") if isinstance(named, dict) else None
    return _unb64url(challenge) if isinstance(challenge, str) else None


def passkey_view(passkey: Passkey) -> dict[str, Any]:
    """A passkey as its own account's screen lists it: no key material."""
    return {
        "id": credential_key(passkey.credential_id),
        "label": passkey.label,
        "created": passkey.created,
        "last_used": passkey.last_used,
    }


def _user_id(account: Account) -> bytes:
    """The WebAuthn user handle: the internal account id, which names no person
    and never changes with the handle."""
    return account.account.encode("ascii")


def _refused(why: str = _BAD) -> RoomError:
    return RoomError(ErrorCode.BAD_PASSKEY, why)


def _as_json(options: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(options_to_json(options))
    return parsed


class Keeper(Protocol):
    """Where the credentials are kept (the account service, whose store may be
    connected after it is made: server/app.py)."""

    store: AccountStore


class Ceremonies:
    """The passkey ceremonies of one node: challenges given and not yet used."""

    def __init__(self, keeper: Keeper) -> None:
        self._keeper = keeper
        self._pending: weakref.WeakKeyDictionary[Peer, dict[PasskeyPurpose, _Challenge]] = (
            weakref.WeakKeyDictionary()
        )
        # Who was given each challenge pending, so an answer said elsewhere spends it.
        self._given: weakref.WeakValueDictionary[bytes, Peer] = weakref.WeakValueDictionary()

    @property
    def store(self) -> AccountStore:
        return self._keeper.store

    def _give(
        self, conn: Peer, purpose: PasskeyPurpose, now: int, account: str | None
    ) -> _Challenge:
        site = conn.site
        if site is None:
            raise _refused("passkeys need the page's own address: connect from the page")
        if _is_address(site.rp_id):
            raise _refused(
                "passkeys need a name, not an address: open the page at localhost or by "
                "the server's name"
            )
        challenge = _Challenge(secrets.token_bytes(32), site, now + CHALLENGE_MS, account)
        pending = self._pending.setdefault(conn, {})
        replaced = pending.get(purpose)
        if replaced is not None:
            self._given.pop(replaced.value, None)
        pending[purpose] = challenge
        self._given[challenge.value] = conn
        return challenge

    def _take(
        self, conn: Peer, purpose: PasskeyPurpose, credential: dict[str, Any], now: int
    ) -> _Challenge:
        """The connection's challenge for ``purpose``, gone from now on whatever
        the verification says, and with it the challenge ``credential`` names,
        whoever was given it; stale ones are refused."""
        challenge = self._pending.get(conn, {}).pop(purpose, None)
        if challenge is not None:
            self._given.pop(challenge.value, None)
        named = _named_challenge(credential)
        owner = self._given.pop(named, None) if named is not None else None
        if owner is not None:  # another connection's, or this one's for another purpose
            given = self._pending.get(owner, {})
            for kind in [k for k, c in given.items() if c.value == named]:
                del given[kind]
        if challenge is None or now > challenge.expires:
            raise _refused()
        return challenge

    # -- registration (signed in) ----------------------------------------------

    async def registration_options(self, conn: Peer, account: Account, now: int) -> dict[str, Any]:
        """Options for ``navigator.credentials.create``: a discoverable credential
        (so signing in needs no handle typed), verified user, none of the
        account's passkeys made again on the same authenticator."""
        challenge = self._give(conn, PasskeyPurpose.REGISTER, now, account.account)
        existing = await self.store.passkeys(account.account)
        options = generate_registration_options(
            rp_id=challenge.site.rp_id,
            rp_name=RP_NAME,
            user_id=_user_id(account),
            user_name=account.handle,
            user_display_name=account.handle,
            challenge=challenge.value,
            timeout=CHALLENGE_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[
                PublicKeyCredentialDescriptor(id=p.credential_id) for p in existing
            ],
        )
        return _as_json(options)

    async def register(
        self, conn: Peer, account: Account, credential: dict[str, Any], label: str, now: int
    ) -> Passkey:
        """Verify ``navigator.credentials.create``'s answer and keep the credential
        on ``account``; a credential registered already (to anyone) is refused."""
        challenge = self._take(conn, PasskeyPurpose.REGISTER, credential, now)
        if challenge.account != account.account:
            raise _refused()
        try:
            verified = verify_registration_response(
                credential=credential,
                expected_challenge=challenge.value,
                expected_rp_id=challenge.site.rp_id,
                expected_origin=list(challenge.site.origins),
                require_user_verification=True,
            )
        except (WebAuthnException, ValueError, KeyError, TypeError, AttributeError):
            raise _refused() from None  # whatever a client sent: malformed is refused
        passkey = Passkey(
            credential_id=verified.credential_id,
            account=account.account,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            label=label.strip()[:MAX_LABEL] or "passkey",
            created=now / 1000,
        )
        if not await self.store.add_passkey(passkey):
            raise _refused()
        return passkey

    # -- signing in (before hello) ---------------------------------------------

    def sign_in_options(self, conn: Peer, now: int) -> dict[str, Any]:
        """Options for ``navigator.credentials.get``: no credentials listed (the
        browser offers the passkeys it has for this site: discoverable ones), a
        verified user."""
        challenge = self._give(conn, PasskeyPurpose.SIGN_IN, now, None)
        options = generate_authentication_options(
            rp_id=challenge.site.rp_id,
            challenge=challenge.value,
            timeout=CHALLENGE_MS,
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        return _as_json(options)

    async def sign_in(self, conn: Peer, credential: dict[str, Any], now: int) -> Passkey:
        """Verify ``navigator.credentials.get``'s answer: the passkey it proves,
        its counter moved on in the store. The account to sign in to is the
        credential's; a user handle naming another account is refused."""
        challenge = self._take(conn, PasskeyPurpose.SIGN_IN, credential, now)
        key = credential.get("rawId")
        raw_id = _unb64url(key) if isinstance(key, str) else None
        passkey = await self.store.passkey(raw_id) if raw_id else None
        if passkey is None:
            raise _refused()
        response = credential.get("response")
        handle = response.get("userHandle") if isinstance(response, dict) else None
        account = await self.store.account(passkey.account)
        if account is None:
            raise _refused()
        if handle is not None and handle != credential_key(_user_id(account)):
            raise _refused()
        try:
            verified = verify_authentication_response(
                credential=credential,
                expected_challenge=challenge.value,
                expected_rp_id=challenge.site.rp_id,
                expected_origin=list(challenge.site.origins),
                credential_public_key=passkey.public_key,
                credential_current_sign_count=passkey.sign_count,
                require_user_verification=True,
            )
        except (WebAuthnException, ValueError, KeyError, TypeError, AttributeError):
            raise _refused() from None
        if not await self.store.use_passkey(
            passkey.credential_id, verified.new_sign_count, now / 1000
        ):
            raise _refused()  # a copy of this assertion, or a clone, got here first
        return passkey

    # -- the account screen -----------------------------------------------------

    async def listed(self, account: Account) -> list[dict[str, Any]]:
        return [passkey_view(p) for p in await self.store.passkeys(account.account)]

    async def remove(self, account: Account, key: str) -> None:
        """Forget one of the account's passkeys; another account's is refused as
        an unknown one is."""
        raw_id = _unb64url(key)
        passkey = await self.store.passkey(raw_id) if raw_id else None
        if passkey is None or passkey.account != account.account:
            raise _refused("no passkey of yours has that id")
        await self.store.remove_passkey(passkey.credential_id)


def _is_address(name: str) -> bool:
    """An IP address, which WebAuthn does not accept as an RP ID."""
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True
