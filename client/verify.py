"""``klondike-race verify``: check a revealed seed against its commitment.

At the start of a deal the room gets ``commitment = sha256(prefix + seed)``; at its
end, the seed. Anyone can then check that the seed was fixed before play (it hashes
to the commitment) and see the very layout it deals, card by card, so a player who
suspects a rigged deal needs nothing but this command and docs/rules.md §2.
"""

from __future__ import annotations

from protocol.cards import card_str
from protocol.deal import commitment, deal_layout, verify_commitment
from protocol.settings import Variant

__all__ = ["format_layout", "verify"]


def format_layout(seed: str, variant: Variant = Variant.CLASSIC) -> str:
    """The layout ``seed`` deals, as text: piles bottom first, then the stock.

    Face-down cards are in brackets (none in Thoughtful, dealt face up).
    """
    piles, stock = deal_layout(seed, variant)
    lines = [f"Layout of seed {seed!r} ({variant.value}, {variant.cards} cards)", ""]
    lines.append("Tableau, each pile bottom first ([..] = dealt face down):")
    for p, pile in enumerate(piles):
        up = 0 if variant is Variant.THOUGHTFUL else len(pile) - 1
        shown = [card_str(c) if i >= up else f"[{card_str(c)}]" for i, c in enumerate(pile)]
        lines.append(f"  pile {p + 1}: {' '.join(shown)}")
    lines.append("")
    lines.append(f"Stock, {len(stock)} cards, first drawn first:")
    for start in range(0, len(stock), 12):
        lines.append("  " + " ".join(card_str(c) for c in stock[start : start + 12]))
    return "\n".join(lines)


def verify(seed: str, digest: str, variant: Variant = Variant.CLASSIC) -> tuple[bool, str]:
    """Whether ``seed`` matches ``digest``, and the report to print."""
    if not verify_commitment(seed, digest):
        return False, (
            "MISMATCH: this seed does not hash to the commitment\n"
            f"  commitment given:   {digest.strip().lower()}\n"
            f"  hash of this seed:  {commitment(seed)}"
        )
    return True, f"OK: the seed matches the commitment {commitment(seed)}\n\n" + format_layout(
        seed, variant
    )
