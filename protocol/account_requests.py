"""The account requests (docs/protocol.md, "Accounts"), in the one table of the
codec (protocol/requests.py ``REQUESTS``). Signing in is ``hello``'s; these are
what a session does with its account once it is in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import ByHandle, Request, opt_bool, opt_str, req_choice, req_map, req_str
from .wire import WireError

__all__ = [
    "ACCOUNT_REQUESTS",
    "MAX_LABEL",
    "AccountSettings",
    "AddPasskey",
    "ChangeHandle",
    "DeleteAccount",
    "Devices",
    "ExportAccount",
    "LinkCodeRequest",
    "PasskeyOptions",
    "PasskeyPurpose",
    "Passkeys",
    "RecoveryCodes",
    "RemovePasskey",
    "SignOut",
    "TakeHandle",
    "opt_label",
]

MAX_LABEL = 40  # characters a device's label may have


def opt_label(msg: Mapping[str, Any]) -> str | None:
    label = opt_str(msg, "label")
    if label is not None and len(label) > MAX_LABEL:
        raise WireError(ErrorCode.BAD_REQUEST, f"field 'label' is {MAX_LABEL} characters at most")
    return label


@dataclass(frozen=True, slots=True)
class TakeHandle(Request):
    """A guest takes a handle: its session becomes an account's (same player)."""

    TYPE: ClassVar[str] = "take_handle"
    handle: str
    label: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "handle"), opt_label(msg))

    def fields(self) -> dict[str, Any]:
        label = {} if self.label is None else {"label": self.label}
        return {"handle": self.handle} | label


@dataclass(frozen=True, slots=True)
class LinkCodeRequest(Request):
    """A one-time code (and its link and QR) that signs another device in."""

    TYPE: ClassVar[str] = "link_code"


@dataclass(frozen=True, slots=True)
class Devices(Request):
    TYPE: ClassVar[str] = "devices"


@dataclass(frozen=True, slots=True)
class SignOut(Request):
    """``device`` names one of the account's devices; neither it nor ``all``:
    this device."""

    TYPE: ClassVar[str] = "sign_out"
    device: str | None = None
    all: bool = False

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        device = opt_str(msg, "device")
        every = msg.get("all", False)
        if not isinstance(every, bool):
            raise WireError(ErrorCode.BAD_REQUEST, "field 'all' must be true or false")
        if every and device is not None:
            raise WireError(ErrorCode.BAD_REQUEST, "sign_out takes 'device' or 'all', not both")
        return cls(rid, device, every)

    def fields(self) -> dict[str, Any]:
        device = {} if self.device is None else {"device": self.device}
        return device | {"all": self.all}


@dataclass(frozen=True, slots=True)
class RecoveryCodes(Request):
    """A new set of recovery codes, replacing the old."""

    TYPE: ClassVar[str] = "recovery_codes"


class PasskeyPurpose(StrEnum):
    REGISTER = "register"  # add a passkey to the signed-in account
    SIGN_IN = "sign_in"  # sign in with one: asked before hello, on the connection that says it


@dataclass(frozen=True, slots=True)
class PasskeyOptions(Request):
    """The options of a WebAuthn ceremony, with a challenge for this connection
    alone (docs/protocol.md, "Passkeys"). ``sign_in`` is the one request a
    connection may make before its hello, which then carries the answer."""

    TYPE: ClassVar[str] = "passkey_options"
    purpose: PasskeyPurpose

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_choice(msg, "purpose", PasskeyPurpose))

    def fields(self) -> dict[str, Any]:
        return {"purpose": self.purpose.value}


@dataclass(frozen=True, slots=True)
class AddPasskey(Request):
    """``credential``: ``PublicKeyCredential.toJSON()`` of the credential the
    browser made with ``passkey_options {purpose: "register"}``."""

    TYPE: ClassVar[str] = "add_passkey"
    credential: dict[str, Any]
    label: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_map(msg, "credential"), opt_label(msg))

    def fields(self) -> dict[str, Any]:
        label = {} if self.label is None else {"label": self.label}
        return {"credential": self.credential} | label


@dataclass(frozen=True, slots=True)
class Passkeys(Request):
    TYPE: ClassVar[str] = "passkeys"


@dataclass(frozen=True, slots=True)
class RemovePasskey(Request):
    """``passkey``: its id as ``passkeys`` lists it (``id`` is the request's own)."""

    TYPE: ClassVar[str] = "remove_passkey"
    passkey: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "passkey"))

    def fields(self) -> dict[str, Any]:
        return {"passkey": self.passkey}


@dataclass(frozen=True, slots=True)
class ChangeHandle(ByHandle):
    """The account goes by another handle (once in 30 days); the old one is free."""

    TYPE: ClassVar[str] = "change_handle"


@dataclass(frozen=True, slots=True)
class AccountSettings(Request):
    """What others see of the account; a setting left out stays as it is."""

    TYPE: ClassVar[str] = "account_settings"
    shows_record: bool | None = None
    shows_online: bool | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, opt_bool(msg, "shows_record"), opt_bool(msg, "shows_online"))

    def fields(self) -> dict[str, Any]:
        given = {"shows_record": self.shows_record, "shows_online": self.shows_online}
        return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True, slots=True)
class ExportAccount(Request):
    """Everything the server keeps about the account, to take away."""

    TYPE: ClassVar[str] = "export_account"


@dataclass(frozen=True, slots=True)
class DeleteAccount(ByHandle):
    """The account and its data gone for good; ``handle`` is the account's handle
    typed again, so a stray click or a script's mistake deletes nothing."""

    TYPE: ClassVar[str] = "delete_account"


ACCOUNT_REQUESTS: tuple[type[Request], ...] = (
    TakeHandle,
    LinkCodeRequest,
    Devices,
    SignOut,
    RecoveryCodes,
    PasskeyOptions,
    AddPasskey,
    Passkeys,
    RemovePasskey,
    ChangeHandle,
    AccountSettings,
    ExportAccount,
    DeleteAccount,
)
"""Handled by the node the client is connected to, never relayed to its room's."""
