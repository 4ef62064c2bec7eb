"""What an address may create, or try, so many times a minute.

Sessions, rooms, wrong join codes (a code guessed at 12,000 a second finds a
room in minutes; at 20 a minute, in years), reactions, handles taken, failed
sign-ins and wrong link or recovery codes are each capped per
client address, in buckets the :class:`~server.net.ratelimit.Limiter` keeps by
address: a client that reconnects, or opens another session, finds its
allowance as it left it. Each kind is a :class:`Quota`, so a misspelt one is a
type error rather than a bucket of its own; its value is what the
``limit_reached`` refusal names in its ``limit`` field (docs/protocol.md).
"""

from __future__ import annotations

import time
from enum import StrEnum

from protocol.messages import ErrorCode

from ..core.values import RoomError
from ..peer import Peer
from .connection import Limits
from .ratelimit import Allowance, Limiter

__all__ = ["Allowances", "Quota"]


class Quota(StrEnum):
    """One thing an address may do so many times a minute."""

    SESSIONS = "sessions"
    ROOMS = "rooms"
    JOIN_CODES = "join_codes"
    REACTIONS = "reactions"
    SIGN_UPS = "sign_ups"  # handles taken
    SIGN_INS = "sign_ins"  # failed sign-ins with a device token or a passkey
    LINK_CODES = "link_codes"  # wrong link, recovery and challenge codes: guesses
    FRIEND_ASKS = "friend_asks"


_WHAT = {
    Quota.SESSIONS: "new sessions",
    Quota.ROOMS: "new rooms",
    Quota.JOIN_CODES: "wrong join codes",
    Quota.REACTIONS: "reactions",
    Quota.SIGN_UPS: "handles taken",
    Quota.SIGN_INS: "failed sign-ins",
    Quota.LINK_CODES: "wrong link, recovery or challenge codes",
    Quota.FRIEND_ASKS: "friend requests and invitations",
}


class Allowances:
    """Every address's allowances, spent and checked by :meth:`admit`."""

    def __init__(self, limiter: Limiter, limits: Limits) -> None:
        self._limiter = limiter
        self._per_minute = {
            Quota.SESSIONS: Allowance(limits.sessions_per_minute),
            Quota.ROOMS: Allowance(limits.rooms_per_minute),
            Quota.JOIN_CODES: Allowance(limits.wrong_codes_per_minute),
            Quota.REACTIONS: Allowance(limits.reactions_per_minute),
            Quota.SIGN_UPS: Allowance(limits.sign_ups_per_minute),
            Quota.SIGN_INS: Allowance(limits.sign_ins_per_minute),
            Quota.LINK_CODES: Allowance(limits.wrong_link_codes_per_minute),
            Quota.FRIEND_ASKS: Allowance(limits.friend_asks_per_minute),
        }

    def admit(self, quota: Quota, peer: Peer, *, spend: bool = True) -> None:
        """``limit_reached`` when ``peer``'s address has used up its ``quota`` for
        this minute. ``spend`` false: only check that one is left (a join code is
        paid for only when it is wrong, but once none is left no code is answered)."""
        allowance = self._per_minute[quota]
        now = time.monotonic()
        if spend:
            ok = self._limiter.allow(quota.value, peer.address, allowance, now)
        else:
            ok = self._limiter.left(quota.value, peer.address, allowance, now)
        if not ok:
            raise RoomError(
                ErrorCode.LIMIT_REACHED,
                f"too many {_WHAT[quota]} from your address: at most "
                f"{allowance.per_minute} a minute; wait a little",
                limit=quota.value,
            )
