"""What an account is made of, as the store keeps it and the service decides on it.

Every secret a client may present (device token, link code, recovery code,
friend link) is random, at least 128 bits, and stored only as its SHA-256: a
dump of the store signs nobody in. The hash is of the canonical form (upper
case, separators dropped for the codes people type), so a code typed in lower
case or with its dashes still matches.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "RESERVED_HANDLES",
    "Account",
    "DealEntry",
    "Device",
    "FriendState",
    "Friendship",
    "LinkCode",
    "Passkey",
    "RoundEntry",
    "handle_key",
    "new_code",
    "new_device_token",
    "secret_hash",
]

# Handles that would mislead: the product's own words and the staff's.
RESERVED_HANDLES = frozenset(
    {
        "admin",
        "administrator",
        "host",
        "klondike",
        "klondike-race",
        "moderator",
        "root",
        "server",
        "spectator",
        "staff",
        "support",
        "system",
        "you",
        "guest",
        "bot",
        "deleted",
        "a-deleted-player",
        "anonymous",
        "everyone",
        "nobody",
    }
)


def handle_key(handle: str) -> str:
    """The form two handles are compared in: NFC, then case-folded, so "Ann",
    "ANN" and "ann" are one handle (taken once), whichever its owner shows."""
    return unicodedata.normalize("NFC", handle).casefold()


def secret_hash(secret: str) -> str:
    """How a secret is stored: SHA-256 of its canonical form (codes typed by
    people are compared without case, spaces or dashes)."""
    canonical = secret.strip()
    if "." not in canonical and "_" not in canonical:
        canonical = canonical.replace("-", "").replace(" ", "").upper()
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def new_device_token() -> str:
    """A device token: 256 random bits, URL-safe, never typed by anyone."""
    return "d." + secrets.token_urlsafe(32)


def new_code() -> str:
    """A code a person may type or scan (link code, recovery code): 130 random
    bits as 26 base32 letters and digits, in groups of five for reading aloud."""
    raw = base64.b32encode(secrets.token_bytes(17)).decode("ascii")[:26]
    return "-".join(raw[i : i + 5] for i in range(0, 26, 5))


@dataclass(frozen=True, slots=True)
class Account:
    account: str  # "a" + id; internal, never shown as a name
    player: str  # the public player id it plays under (rooms, sheets, history)
    handle: str  # as its owner spells it
    created: float  # unix seconds
    handle_changed: float  # when the handle was last taken or changed
    shows_record: bool = True  # others may see the record on /p/HANDLE and the profile
    shows_online: bool = True  # friends may see online status and room
    room_code: str | None = None  # the room its player sits in (every device resumes it)


@dataclass(frozen=True, slots=True)
class Device:
    device: str  # public id, to list and sign out one device
    account: str
    label: str  # what the device called itself ("Firefox on Linux", "cli")
    created: float
    last_used: float


@dataclass(frozen=True, slots=True)
class LinkCode:
    account: str
    expires: float


@dataclass(frozen=True, slots=True)
class Passkey:
    credential_id: bytes
    account: str
    public_key: bytes
    sign_count: int
    label: str
    created: float
    last_used: float | None = None


class FriendState(StrEnum):
    ASKED = "asked"  # ``a`` asked ``b``, who has not answered
    FRIENDS = "friends"


@dataclass(frozen=True, slots=True)
class Friendship:
    a: str  # account ids; for ASKED, ``a`` is the one who asked
    b: str
    state: FriendState
    since: float


@dataclass(frozen=True, slots=True)
class DealEntry:
    """One deal a player played, kept on their account once it is over for
    everyone. ``key`` names it uniquely (room, round, deal), so writing the
    same entry again (a restart folding the room again) changes nothing."""

    key: str
    t: float  # when the deal ended
    room: str
    round: int
    deal: int
    ladder: str  # the rule set that changes the game (draw, variant, double)
    rules: dict[str, object] = field(default_factory=dict)  # the settings in force
    scoring: str = "standard"
    placing: int = 0
    tied: bool = False
    score: int = 0
    bonus: int = 0
    seconds: float | None = None  # to the finish; None when it did not finish
    moves: int = 0
    result: str = ""  # won, resigned, timed out, unfinished
    players: int = 1


@dataclass(frozen=True, slots=True)
class RoundEntry:
    key: str  # room and round
    t: float
    room: str
    round: int
    deals: int
    total: int
    placing: int
    tied: bool
    players: list[str] = field(default_factory=list)  # player ids raced against
