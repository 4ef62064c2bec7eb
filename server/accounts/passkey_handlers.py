"""The passkey requests (docs/protocol.md, "Passkeys"): options for a ceremony,
adding, listing and removing the account's passkeys. Signing in with one is
``hello``'s ``passkey`` (server/accounts/service.py), which verifies through the
same :class:`~server.accounts.passkeys.Ceremonies`.

Every request here but the sign-in options needs a signed-in session: the
account is the one whose player the connection's session plays as."""

from __future__ import annotations

from typing import Protocol

from protocol import messages as M
from protocol.messages import ErrorCode
from protocol.requests import (
    AddPasskey,
    PasskeyOptions,
    PasskeyPurpose,
    Passkeys,
    RemovePasskey,
    Request,
)

from ..core.values import RoomError
from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from .model import Account
from .passkeys import Ceremonies, passkey_view
from .store import AccountStore

__all__ = ["PASSKEY_HANDLERS", "PasskeyDesk"]


class PasskeyDesk(Front, Protocol):
    """What the passkey handlers need of the service."""

    accounts: AccountStore
    passkeys: Ceremonies


async def own_account(desk: PasskeyDesk, conn: Peer) -> Account:
    """The account the connection is signed in to; ``not_signed_in`` for a guest."""
    session = conn.session
    account = await desk.accounts.account_by_player(session.player) if session else None
    if account is None:
        raise RoomError(ErrorCode.NOT_SIGNED_IN, "sign in (or keep your name) first")
    return account


async def _options(desk: PasskeyDesk, conn: Peer, req: PasskeyOptions) -> None:
    now = desk.clock.now()
    if req.purpose is PasskeyPurpose.SIGN_IN:
        options = desk.passkeys.sign_in_options(conn, now)
    else:
        account = await own_account(desk, conn)
        options = await desk.passkeys.registration_options(conn, account, now)
    conn.send(M.passkey_options(req.id, options=options))


async def _add(desk: PasskeyDesk, conn: Peer, req: AddPasskey) -> None:
    account = await own_account(desk, conn)
    passkey = await desk.passkeys.register(
        conn, account, req.credential, req.label or "", desk.clock.now()
    )
    conn.send(M.passkey_added(req.id, passkey=passkey_view(passkey)))


async def _list(desk: PasskeyDesk, conn: Peer, req: Passkeys) -> None:
    account = await own_account(desk, conn)
    conn.send(M.passkeys(req.id, passkeys=await desk.passkeys.listed(account)))


async def _remove(desk: PasskeyDesk, conn: Peer, req: RemovePasskey) -> None:
    account = await own_account(desk, conn)
    await desk.passkeys.remove(account, req.passkey)
    conn.send(M.passkey_removed(req.id, passkey=req.passkey))


PASSKEY_HANDLERS: dict[type[Request], Handler[PasskeyDesk]] = dict(
    [
        on(PasskeyOptions, _options),
        on(AddPasskey, _add),
        on(Passkeys, _list),
        on(RemovePasskey, _remove),
    ]
)
