"""From a seed to a layout: the dealing algorithm, part of the product's contract.

A seed must deal the same layout forever, on every platform and in every language,
so that anyone can check a revealed seed. Python's ``random`` promises neither, so
the stream of random numbers is SHA-256 in counter mode, and the shuffle is a
Fisher–Yates with rejection sampling (no modulo bias). docs/rules.md restates this
in enough detail to re-implement it; tests/test_engine_deal.py pins golden layouts.

1. ``seed`` is a string; its UTF-8 bytes are ``S``.
2. Block ``i`` (i = 0, 1, 2, …) is ``SHA-256(S || i as 8-byte big-endian)``; each
   block yields four unsigned 64-bit big-endian words, in order.
3. The pack is ordered clubs, diamonds, hearts, spades, each ace to king
   (card ``suit * 13 + rank - 1``); Double repeats it once.
4. For ``i`` from ``n - 1`` down to ``1``: draw words until one is below
   ``2**64 - 2**64 % (i + 1)``, let ``j`` be it modulo ``i + 1``, swap cards i and j.
5. Deal in rows like a person: for row ``r`` = 0…piles-1, for pile ``p`` = r…piles-1,
   the next card goes onto pile ``p``. The last card of each pile is face up.
6. The rest is the stock; the first of them is the first card drawn.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator

from .settings import Variant

__all__ = ["commitment", "deal_layout", "shuffled_pack", "verify_commitment"]

_TWO64 = 1 << 64
_BLOCK = struct.Struct(">4Q")  # a SHA-256 digest as four big-endian 64-bit words
COMMITMENT_PREFIX = "klondike-race/seed/v1:"


def _words(seed: str) -> Iterator[int]:
    data = seed.encode("utf-8")
    counter = 0
    while True:
        yield from _BLOCK.unpack(hashlib.sha256(data + counter.to_bytes(8, "big")).digest())
        counter += 1


def shuffled_pack(seed: str, packs: int = 1) -> list[int]:
    """The pack after the seeded Fisher–Yates shuffle (steps 1–4)."""
    pack = list(range(52)) * packs
    words = _words(seed)
    for i in range(len(pack) - 1, 0, -1):
        bound = i + 1
        limit = _TWO64 - _TWO64 % bound
        while True:
            w = next(words)
            if w < limit:
                break
        j = w % bound
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def deal_layout(seed: str, variant: Variant) -> tuple[list[list[int]], list[int]]:
    """The tableau piles (bottom first) and the stock (first card drawn first)."""
    pack = shuffled_pack(seed, variant.packs)
    n = variant.piles
    piles: list[list[int]] = [[] for _ in range(n)]
    k = 0
    for row in range(n):
        for p in range(row, n):
            piles[p].append(pack[k])
            k += 1
    return piles, pack[k:]


def commitment(seed: str) -> str:
    """The hash the room gets when a deal starts, before its seed is revealed.

    Server seeds carry 128 random bits, so the hash hides them; the prefix keeps the
    hash apart from any other use of SHA-256 of the same string.
    """
    return hashlib.sha256((COMMITMENT_PREFIX + seed).encode("utf-8")).hexdigest()


def verify_commitment(seed: str, digest: str) -> bool:
    return commitment(seed) == digest.strip().lower()
