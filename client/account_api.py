"""The requests of docs/protocol.md "Accounts" as typed methods of a session.

A mixin, as :mod:`client.session_api` is for the room requests. Signing in is
``hello``'s (:func:`client.connect` with ``device``, ``link`` or ``recovery``);
these are what a session does with its account once in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AccountRequests"]


class AccountRequests:
    """Account requests on top of :meth:`request`; :class:`client.session.Session` uses it."""

    token: str | None
    account: dict[str, Any] | None
    device_token: str | None

    async def request(
        self, kind: str, /, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def take_handle(self, handle: str, label: str | None = None) -> list[str]:
        """Take ``handle``: this guest session becomes the account's, signed in on
        this device (its new token is :attr:`device_token`, and the session's
        :attr:`token` from now on). Returns the recovery codes, shown this once."""
        fields: dict[str, Any] = {"handle": handle}
        if label is not None:
            fields["label"] = label
        reply = await self.request("take_handle", **fields)
        self.account = dict(reply["account"])
        self.token = self.device_token = str(reply["device_token"])
        return [str(code) for code in reply["recovery_codes"]]

    async def link_code(self) -> dict[str, Any]:
        """A one-time code that signs another device in within ten minutes: the
        reply's ``code``, ``expires``, ``url`` and ``qr`` (an SVG)."""
        return await self.request("link_code")

    async def devices(self) -> list[dict[str, Any]]:
        """The account's devices, oldest first (``current`` marks this one)."""
        return list((await self.request("devices"))["devices"])

    async def sign_out(self, device: str | None = None, *, every: bool = False) -> int:
        """Sign out ``device`` (None: this one), or every device of the account;
        how many were signed out. This device's connection then closes (4011)."""
        fields: dict[str, Any] = {"all": every}
        if device is not None:
            fields["device"] = device
        return int((await self.request("sign_out", **fields))["count"])

    async def recovery_codes(self) -> list[str]:
        """A new set of recovery codes; the old ones work no more."""
        return [str(code) for code in (await self.request("recovery_codes"))["codes"]]
