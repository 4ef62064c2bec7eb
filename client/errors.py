"""What can go wrong on the client side, as exceptions a caller can switch on.

The server answers a refused request with ``{"type": "error", "code", "message"}``
(docs/protocol.md "Errors"); :class:`ServerError` carries exactly that, so callers
branch on ``err.code`` (a stable string) and show ``err.message`` (for people).
Everything that is the connection's fault rather than the server's verdict is a
:class:`ClientError`: a request in flight when the socket dropped may or may not have
been applied, which is why it is a different type from a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ClientError",
    "ConnectionLost",
    "NotRated",
    "RequestTimeout",
    "ServerError",
    "SessionClosed",
]


class ClientError(Exception):
    """The connection, not the server's rules, stopped a request."""


class ConnectionLost(ClientError):
    """The socket dropped while the request was in flight; it may have been applied.

    ``close_code`` is the WebSocket close code when one was received (e.g. 4001 when
    the session was resumed elsewhere), else ``None``.
    """

    def __init__(self, message: str, close_code: int | None = None) -> None:
        super().__init__(message)
        self.close_code = close_code


class SessionClosed(ClientError):
    """The session is closed for good (closed by us, or could not resume)."""


class RequestTimeout(ClientError):
    """No reply came in time. The request may still be applied later."""


class NotRated(Exception):
    """A bot asked to play a rated room: bots are never rated (the server's
    ``not_ratable`` refusal of its seat, said as what it means for a bot)."""


class ServerError(Exception):
    """A request the server refused: ``code`` is stable, ``message`` is for people.

    ``field`` names the bad setting for ``bad_setting``; ``frame`` is the whole error
    frame (e.g. ``supported`` for ``unsupported_version``).
    """

    def __init__(
        self,
        code: str,
        message: str = "",
        field: str | None = None,
        frame: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.field = field
        self.frame: dict[str, Any] = dict(frame or {})

    @classmethod
    def from_frame(cls, frame: Mapping[str, Any]) -> ServerError:
        field = frame.get("field")
        return cls(
            str(frame.get("code", "internal_error")),
            str(frame.get("message", "")),
            field if isinstance(field, str) else None,
            frame,
        )
