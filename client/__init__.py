"""The Python client of klondike-race: sessions, bots, and the client commands.

``from client import connect`` is the entry point; docs/client.md has an example.
"""

from .errors import (
    ClientError,
    ConnectionLost,
    NotRated,
    RequestTimeout,
    ServerError,
    SessionClosed,
)
from .room import RoomEvent, RoomView
from .session import Session, SessionStats, connect
from .session_api import Moved

__all__ = [
    "ClientError",
    "ConnectionLost",
    "Moved",
    "NotRated",
    "RequestTimeout",
    "RoomEvent",
    "RoomView",
    "ServerError",
    "Session",
    "SessionClosed",
    "SessionStats",
    "connect",
]
