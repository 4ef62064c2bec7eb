"""The account requests (protocol/account_requests.py): ask :class:`Accounts`,
change the session to match, reply.

They are answered by the node the client is connected to, never relayed to the
node of its room (server/cluster/): an account is not a room's business, and the
session that a handle changes is the one this node holds for the connection.
Signing in is ``hello``'s (server/service/dispatch.py); a passkey's sign-in
options are asked for here, before that hello, on the connection that will say it.
"""

from __future__ import annotations

import logging
from typing import Protocol

from protocol import messages as M
from protocol.account_requests import (
    AddPasskey,
    Devices,
    LinkCodeRequest,
    PasskeyOptions,
    PasskeyPurpose,
    Passkeys,
    RecoveryCodes,
    RemovePasskey,
    SignOut,
    TakeHandle,
)
from protocol.messages import CloseCode, ErrorCode
from protocol.request_fields import Request

from ..core.values import RoomError
from ..net.allowances import Quota
from ..net.http import qr_svg
from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from ..store.base import StoreUnavailable
from .passkeys import passkey_view
from .service import Accounts, account_view, device_view

__all__ = ["ACCOUNT_HANDLERS", "AccountDesk", "close_signed_out"]

log = logging.getLogger("klondike_race.accounts")


class AccountDesk(Front, Protocol):
    """What the account handlers need of the service (server/service/): the room
    handlers' :class:`~server.rooms.handlers.Front`, the accounts, and this node's
    connections (to close those of a device signed out)."""

    account_service: Accounts
    connections: set[Peer]


def close_signed_out(desk: AccountDesk, devices: list[str]) -> None:
    """Close this node's connections of the devices just signed out (4011)."""
    gone = set(devices)
    for peer in list(desk.connections):
        session = peer.session
        if session is not None and session.peer is peer and session.device in gone:
            peer.close(CloseCode.SIGNED_OUT, "this device was signed out")


async def _take_handle(desk: AccountDesk, conn: Peer, req: TakeHandle) -> None:
    session = desk.session_of(conn)
    if session.account is not None:
        raise RoomError(ErrorCode.ALREADY_SIGNED_IN, "this session has an account already")
    desk.allowances.admit(Quota.SIGN_UPS, conn)
    made, codes = await desk.account_service.take_handle(
        session.player, req.handle, req.label, session.room_code
    )
    guest_token = session.token
    session.token, session.name = made.token, made.account.handle
    session.account, session.device = made.account.account, made.device.device
    try:  # the guest token resumes nothing from now on: only device tokens sign in
        await desk.store.delete_session(guest_token)
    except StoreUnavailable:
        log.warning("could not forget the guest session of %s", session.player)
    conn.send(
        M.account_made(
            req.id,
            account=account_view(made.account),
            device_token=made.token,
            recovery_codes=codes,
        )
    )


async def _link_code(desk: AccountDesk, conn: Peer, req: LinkCodeRequest) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    code, expires = await accounts.link_code(account)
    url = f"{conn.link_base or ''}/#link={code}"
    qr = qr_svg(url, "Sign in to your account on another device")
    conn.send(M.link_code(req.id, code=code, expires=expires, url=url, qr=qr))


async def _devices(desk: AccountDesk, conn: Peer, req: Devices) -> None:
    session = desk.session_of(conn)
    accounts = desk.account_service
    listed = await accounts.devices(await accounts.account(session.account))
    conn.send(M.devices(req.id, devices=[device_view(d, session.device) for d in listed]))


async def _sign_out(desk: AccountDesk, conn: Peer, req: SignOut) -> None:
    session = desk.session_of(conn)
    accounts = desk.account_service
    account = await accounts.account(session.account)
    if req.all:
        which = [d.device for d in await accounts.devices(account)]
    else:
        which = [req.device or session.device or ""]
    removed = await accounts.sign_out(account, which)
    conn.send(M.signed_out(req.id, count=len(removed)))  # before this one's own close
    close_signed_out(desk, removed)


async def _recovery_codes(desk: AccountDesk, conn: Peer, req: RecoveryCodes) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    conn.send(M.recovery_codes(req.id, codes=await accounts.new_recovery_codes(account)))


async def _passkey_options(desk: AccountDesk, conn: Peer, req: PasskeyOptions) -> None:
    accounts = desk.account_service
    now = desk.clock.now()
    if req.purpose is PasskeyPurpose.SIGN_IN:
        options = accounts.passkeys.sign_in_options(conn, now)
    else:
        account = await accounts.account(desk.session_of(conn).account)
        options = await accounts.passkeys.registration_options(conn, account, now)
    conn.send(M.passkey_options(req.id, options=options))


async def _add_passkey(desk: AccountDesk, conn: Peer, req: AddPasskey) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    passkey = await accounts.passkeys.register(
        conn, account, req.credential, req.label or "", desk.clock.now()
    )
    conn.send(M.passkey_added(req.id, passkey=passkey_view(passkey)))


async def _passkeys(desk: AccountDesk, conn: Peer, req: Passkeys) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    conn.send(M.passkeys(req.id, passkeys=await accounts.passkeys.listed(account)))


async def _remove_passkey(desk: AccountDesk, conn: Peer, req: RemovePasskey) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    await accounts.passkeys.remove(account, req.passkey)
    conn.send(M.passkey_removed(req.id, passkey=req.passkey))


ACCOUNT_HANDLERS: dict[type[Request], Handler[AccountDesk]] = dict(
    [
        on(TakeHandle, _take_handle),
        on(LinkCodeRequest, _link_code),
        on(Devices, _devices),
        on(SignOut, _sign_out),
        on(RecoveryCodes, _recovery_codes),
        on(PasskeyOptions, _passkey_options),
        on(AddPasskey, _add_passkey),
        on(Passkeys, _passkeys),
        on(RemovePasskey, _remove_passkey),
    ]
)
