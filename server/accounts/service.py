"""What accounts may do, decided: handles, devices, one-time codes.

:class:`Accounts` holds the account store and the server's clock and nothing
else; the request handlers (``handlers``) and the sessions
(server/service/sessions.py) ask it, and it answers with values or refuses with
a :class:`~server.core.values.RoomError`. Every secret it hands out is drawn
here (model.py) and reaches the store only hashed.

Wrong codes get one answer, ``bad_code``, whether unknown, used or expired: an
answer that told them apart would tell a guesser which codes exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from protocol import names
from protocol.messages import ErrorCode

from .. import ids
from ..core.values import RoomError
from ..net.clock import Clock
from ..peer import Peer
from ..store.base import StoreUnavailable, unavailable
from .model import (
    RESERVED_HANDLES,
    Account,
    Device,
    LinkCode,
    handle_key,
    new_code,
    new_device_token,
    secret_hash,
)
from .passkeys import Ceremonies
from .store import AccountStore

__all__ = [
    "HANDLE_CHANGE_SECONDS",
    "LINK_CODE_SECONDS",
    "MIN_HANDLE",
    "RECOVERY_CODES",
    "Accounts",
    "NewDevice",
]

LINK_CODE_SECONDS = 600.0  # a link code signs a device in within ten minutes, once
HANDLE_CHANGE_SECONDS = 30 * 86_400.0
"""A handle is kept at least this long once taken or changed: a player who is
known by one name today is not someone else's tomorrow, and a handle freed by a
change cannot be bounced between accounts to impersonate."""
RECOVERY_CODES = 10
MIN_HANDLE = 2


@dataclass(frozen=True, slots=True)
class NewDevice:
    """A device just signed in, and its token: shown once, to that device alone."""

    account: Account
    device: Device
    token: str


def bad_code() -> RoomError:
    return RoomError(ErrorCode.BAD_CODE, "that code is not valid (wrong, used, or expired)")


def not_signed_in() -> RoomError:
    return RoomError(ErrorCode.NOT_SIGNED_IN, "sign in first: this session has no account")


def check_handle(raw: str) -> str:
    """The handle as it will be shown, or ``bad_handle``: a name by the name rules,
    2 to 24 characters, not one of the reserved words (in any case)."""
    try:
        handle = names.normalise(raw)
    except names.NameError_ as exc:
        raise RoomError(ErrorCode.BAD_HANDLE, str(exc)) from None
    if len(names.graphemes(handle)) < MIN_HANDLE:
        raise RoomError(ErrorCode.BAD_HANDLE, f"a handle is at least {MIN_HANDLE} characters")
    if handle_key(handle) in RESERVED_HANDLES:
        raise RoomError(ErrorCode.BAD_HANDLE, f"{handle!r} is reserved: choose another handle")
    return handle


def account_view(account: Account) -> dict[str, Any]:
    """The own-account view (docs/protocol.md, "Accounts"): only ever sent to the
    account's own sessions."""
    return {
        "handle": account.handle,
        "player": account.player,
        "since": account.created,
        "shows_record": account.shows_record,
        "shows_online": account.shows_online,
        "handle_changed": account.handle_changed,
    }


def device_view(device: Device, current: str | None) -> Mapping[str, Any]:
    return {
        "device": device.device,
        "label": device.label,
        "created": device.created,
        "last_used": device.last_used,
        "current": device.device == current,
    }


class Accounts:
    """The account rules over one store; see the module docstring."""

    def __init__(self, store: AccountStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self.passkeys = Ceremonies(self)  # this node's WebAuthn challenges

    def now(self) -> float:
        """Unix seconds, from the server's clock (tests move it by hand)."""
        return self.clock.now() / 1000

    # -- handles ---------------------------------------------------------------
    async def take_handle(
        self, player: str, raw: str, label: str | None, room_code: str | None
    ) -> tuple[NewDevice, list[str]]:
        """``player`` (a guest's) takes the handle: a new account keeping that player
        id and its room, this device signed in to it, and its recovery codes."""
        handle = check_handle(raw)
        try:
            if await self.store.account_by_player(player) is not None:
                raise RoomError(ErrorCode.ALREADY_SIGNED_IN, "this player has an account already")
            now = self.now()
            account = Account("a" + ids.new_id(10), player, handle, now, now, room_code=room_code)
            if not await self.store.create_account(account):
                raise RoomError(ErrorCode.HANDLE_IN_USE, f"the handle {handle!r} is taken")
            made = await self._new_device(account, label)
            codes = await self.new_recovery_codes(account)
        except StoreUnavailable:
            raise unavailable() from None
        return made, codes

    async def change_handle(self, account: Account, raw: str) -> Account:
        """The account under a new handle, the old one freed in the same store
        step; ``handle_change_too_soon`` (with ``allowed``, when it may) within
        :data:`HANDLE_CHANGE_SECONDS` of the last. The same handle spelt the same
        is no change; spelt otherwise (``ann`` to ``Ann``) it is one."""
        handle = check_handle(raw)
        if handle == account.handle:
            return account
        allowed = account.handle_changed + HANDLE_CHANGE_SECONDS
        if self.now() < allowed:
            raise RoomError(
                ErrorCode.HANDLE_CHANGE_TOO_SOON,
                "a handle can be changed once in 30 days",
                allowed=allowed,
            )
        changed = replace(account, handle=handle, handle_changed=self.now())
        try:
            if not await self.store.update_account(changed):
                raise RoomError(ErrorCode.HANDLE_IN_USE, f"the handle {handle!r} is taken")
        except StoreUnavailable:
            raise unavailable() from None
        return changed

    async def choose_shown(
        self, account: Account, shows_record: bool | None, shows_online: bool | None
    ) -> Account:
        """What others see of the account; None leaves a setting as it is."""
        changed = replace(
            account,
            shows_record=account.shows_record if shows_record is None else shows_record,
            shows_online=account.shows_online if shows_online is None else shows_online,
        )
        if changed != account:
            try:
                await self.store.update_account(changed)
            except StoreUnavailable:
                raise unavailable() from None
        return changed

    # -- signing in ----------------------------------------------------------------
    async def sign_in_device(self, token: str) -> tuple[Account, Device]:
        """The account and device of a device token (``unknown_token`` once it is
        signed out, or its account deleted); the device's last use is now."""
        try:
            device = await self.store.device_by_token(secret_hash(token))
            account = await self.store.account(device.account) if device else None
            if device is None or account is None:
                raise RoomError(ErrorCode.UNKNOWN_TOKEN, "this server does not know that token")
            await self.store.touch_device(device.device, self.now())
        except StoreUnavailable:
            raise unavailable() from None
        return account, replace(device, last_used=self.now())

    async def sign_in_link(self, code: str, label: str | None) -> NewDevice:
        """A new device, by a link code (used up whatever the outcome)."""
        try:
            link = await self.store.take_link_code(secret_hash(code))
            if link is None or link.expires <= self.now():
                raise bad_code()
            return await self._device_of(link.account, label)
        except StoreUnavailable:
            raise unavailable() from None

    async def sign_in_recovery(self, code: str, label: str | None) -> NewDevice:
        """A new device, by a recovery code (used up)."""
        try:
            account = await self.store.take_recovery_code(secret_hash(code))
            if account is None:
                raise bad_code()
            return await self._device_of(account, label)
        except StoreUnavailable:
            raise unavailable() from None

    async def sign_in_passkey(
        self, conn: Peer, assertion: Mapping[str, Any], label: str | None
    ) -> NewDevice:
        """A new device, by a WebAuthn assertion answering the challenge this
        connection was given (passkeys.py: used up whatever the outcome). Every
        failure is ``bad_passkey``, one answer for all."""
        try:
            passkey = await self.passkeys.sign_in(conn, dict(assertion), self.clock.now())
            account = await self.store.account(passkey.account)
            if account is None:  # deleted meanwhile
                raise RoomError(ErrorCode.BAD_PASSKEY, "that passkey did not sign in here")
            return await self._new_device(account, label)
        except StoreUnavailable:
            raise unavailable() from None

    async def _device_of(self, account_id: str, label: str | None) -> NewDevice:
        account = await self.store.account(account_id)
        if account is None:  # deleted since the code was made
            raise bad_code()
        return await self._new_device(account, label)

    async def _new_device(self, account: Account, label: str | None) -> NewDevice:
        token = new_device_token()
        now = self.now()
        device = Device("d" + ids.new_id(10), account.account, label or "", now, now)
        await self.store.add_device(secret_hash(token), device)
        return NewDevice(account, device, token)

    async def room_of_device(self, token: str) -> str | None:
        """The room a device token's account sits in, without signing in (the
        cluster finds the node to send a sign-in to by it)."""
        try:
            device = await self.store.device_by_token(secret_hash(token))
            account = await self.store.account(device.account) if device else None
        except StoreUnavailable:
            raise unavailable() from None
        return account.room_code if account else None

    # -- what a signed-in session asks for ------------------------------------------
    async def account(self, account_id: str | None) -> Account:
        """The session's account, or ``not_signed_in``."""
        if account_id is None:
            raise not_signed_in()
        try:
            account = await self.store.account(account_id)
        except StoreUnavailable:
            raise unavailable() from None
        if account is None:
            raise not_signed_in()
        return account

    async def link_code(self, account: Account) -> tuple[str, float]:
        code = new_code()
        expires = self.now() + LINK_CODE_SECONDS
        try:
            await self.store.put_link_code(secret_hash(code), LinkCode(account.account, expires))
        except StoreUnavailable:
            raise unavailable() from None
        return code, expires

    async def devices(self, account: Account) -> list[Device]:
        try:
            return await self.store.devices(account.account)
        except StoreUnavailable:
            raise unavailable() from None

    async def sign_out(self, account: Account, which: list[str]) -> list[str]:
        """Remove those of the devices ``which`` that are the account's (another
        account's device id is no more known than a made-up one); the ids removed."""
        try:
            mine = {d.device for d in await self.store.devices(account.account)}
            return [d for d in which if d in mine and await self.store.remove_device(d)]
        except StoreUnavailable:
            raise unavailable() from None

    async def new_recovery_codes(self, account: Account) -> list[str]:
        """A new set of codes, replacing the old; shown once, kept only hashed."""
        codes = [new_code() for _ in range(RECOVERY_CODES)]
        try:
            await self.store.set_recovery_codes(account.account, [secret_hash(c) for c in codes])
        except StoreUnavailable:
            raise unavailable() from None
        return codes

    async def save_room(self, player: str, room_code: str | None) -> bool:
        """Keep ``player``'s room on its account, where every device resumes it;
        False when the player has no account (a guest's room is its session's)."""
        account = await self.store.account_by_player(player)
        if account is None:
            return False
        if account.room_code != room_code:
            await self.store.set_room(account.account, room_code)
        return True
