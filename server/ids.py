"""Secrets and public ids the server draws: session tokens, player ids, join codes,
seeds.

One alphabet for everything a person may read aloud or type (a join code, a
player id): no 0/O, no 1/I/L. Drawn from :mod:`secrets`, so ids are not
guessable from each other. The room core never draws anything itself (it stays
pure): a seed comes in through its context (server/core/decide.py ``Ctx``).
"""

from __future__ import annotations

import secrets

__all__ = ["ALPHABET", "CODE_LENGTH", "new_id", "new_seed", "new_token"]

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6


def new_id(length: int = CODE_LENGTH) -> str:
    """``length`` characters of :data:`ALPHABET`."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_token() -> str:
    """A session token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


def new_seed() -> str:
    """128 random bits per deal: the commitment hash cannot be brute-forced."""
    return secrets.token_hex(16)
