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
    AccountSettings,
    AddPasskey,
    ChangeHandle,
    DeleteAccount,
    Devices,
    ExportAccount,
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
from protocol.names import DELETED_PLAYER
from protocol.request_fields import Request

from .. import ids
from ..challenges.handlers import export_challenges
from ..challenges.store import ChallengeStore
from ..core import decide as D
from ..core.values import RoomError
from ..daily.results import ResultStore
from ..daily.runs import RunKeeper, export_runs
from ..net.allowances import Quota
from ..net.http import qr_svg
from ..peer import Peer, SessionState
from ..rooms.handlers import Front, Handler, on
from ..store.base import StoreUnavailable, unavailable
from .keeping import HistoryKeeper
from .model import handle_key
from .own_data import export, forget
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
    history: HistoryKeeper
    daily_results: ResultStore
    runs: RunKeeper
    challenges: ChallengeStore


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


def _sessions_of(desk: AccountDesk, account: str) -> list[SessionState]:
    """This node's sessions of the account (one at most: a player is one session)."""
    found = {id(p.session): p.session for p in desk.connections if p.session is not None}
    return [s for s in found.values() if s.account == account]


async def _change_handle(desk: AccountDesk, conn: Peer, req: ChangeHandle) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    changed = await accounts.change_handle(account, req.handle)
    for session in _sessions_of(desk, account.account):
        session.name = changed.handle  # what this session says hello as from now on
    conn.send(M.account(req.id, account=account_view(changed)))


async def _account_settings(desk: AccountDesk, conn: Peer, req: AccountSettings) -> None:
    accounts = desk.account_service
    account = await accounts.account(desk.session_of(conn).account)
    changed = await accounts.choose_shown(account, req.shows_record, req.shows_online)
    conn.send(M.account(req.id, account=account_view(changed)))


async def _export_account(desk: AccountDesk, conn: Peer, req: ExportAccount) -> None:
    session = desk.session_of(conn)
    accounts = desk.account_service
    account = await accounts.account(session.account)
    await desk.history.settled(session.player)  # a deal just over is in it
    await desk.runs.settled_player(session.player)  # and a daily run just over
    try:
        data = await export(accounts.store, account, accounts.now())
        data["daily"] = await export_runs(desk.daily_results, session.player)
        data["challenges"] = await export_challenges(desk.challenges, session.player)
    except StoreUnavailable:
        raise unavailable() from None
    conn.send(M.account_export(req.id, data=data))


async def _delete_account(desk: AccountDesk, conn: Peer, req: DeleteAccount) -> None:
    """Everything of the account gone, its devices signed out, its name out of
    what others keep (server/accounts/own_data.py says where, and why there)."""
    session = desk.session_of(conn)
    accounts = desk.account_service
    account = await accounts.account(session.account)
    if handle_key(req.handle.strip()) != handle_key(account.handle):
        raise RoomError(ErrorCode.WRONG_HANDLE, "type this account's handle to delete it")
    await desk.history.settled(account.player)  # no entry of it written after
    code = session.room_code or account.room_code
    runner = desk.rooms.get(code) if code else None
    if runner is not None:
        player = account.player
        await runner.run(lambda room, _ctx: D.decide_rename(room, player, DELETED_PLAYER))
    try:
        # Its challenges first: once the account is gone, nothing would withdraw them.
        await desk.challenges.withdraw(account.player)
        devices = [d.device for d in await accounts.store.devices(account.account)]
        await forget(accounts.store, account)
    except StoreUnavailable:
        raise unavailable() from None
    conn.send(M.account_deleted(req.id))  # before this one's own close
    mine = _sessions_of(desk, account.account)
    close_signed_out(desk, devices)
    for gone in mine:  # what stays of it here (its seat) is nobody's
        gone.account = gone.device = None
        gone.name = DELETED_PLAYER
        # A session of no account is saved as a guest's, under its token: a token
        # nobody holds, so the device's own answers ``unknown_token`` for good.
        gone.token = ids.new_token()


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
        on(ChangeHandle, _change_handle),
        on(AccountSettings, _account_settings),
        on(ExportAccount, _export_account),
        on(DeleteAccount, _delete_account),
    ]
)
