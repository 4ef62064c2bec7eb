"""The account requests (docs/protocol.md, "Accounts"), in the one table of the
codec (protocol/requests.py ``REQUESTS``). Signing in is ``hello``'s; these are
what a session does with its account once it is in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, opt_str, req_str
from .wire import WireError

__all__ = [
    "ACCOUNT_REQUESTS",
    "MAX_LABEL",
    "Devices",
    "LinkCodeRequest",
    "RecoveryCodes",
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


ACCOUNT_REQUESTS: tuple[type[Request], ...] = (
    TakeHandle,
    LinkCodeRequest,
    Devices,
    SignOut,
    RecoveryCodes,
)
"""Handled by the node the client is connected to, never relayed to its room's."""
