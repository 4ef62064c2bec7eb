"""``klondike-race verify``: check a revealed seed against its commitment.

At the start of a deal the room gets ``commitment = sha256(prefix + seed)``; at its
end, the seed. Anyone can then check that the seed was fixed before play (it hashes
to the commitment) and see the very layout it deals, card by card, so a player who
suspects a rigged deal needs nothing but this command and docs/rules.md §2.

With ``deals: winnable`` the revealed deal also carries ``proof``, the winning line
the deal was proven with (docs/rules.md §9). Given it (``--solution``) and the
deal's rules, :func:`verify_solution` replays it with the real engine from the
board the seed deals and says whether it wins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocol.cards import card_str
from protocol.deal import commitment, deal_layout, verify_commitment
from protocol.proof import ProofError, proof_from_wire
from protocol.settings import DealRules, Variant

__all__ = ["COMMITMENT_DIGITS", "format_layout", "load_solution", "verify", "verify_solution"]

COMMITMENT_DIGITS = 64  # a SHA-256 digest in hex


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
    """Whether ``seed`` matches ``digest``, and the report to print.

    A commitment copied from a page that shortened it, or with a character
    lost, cannot match: say so, rather than a bare MISMATCH that reads like a
    rigged deal."""
    given = digest.strip().lower()
    if len(given) != COMMITMENT_DIGITS or any(c not in "0123456789abcdef" for c in given):
        bad = sorted({c for c in given if c not in "0123456789abcdef"})
        why = (
            f"that commitment has characters that are not hex digits ({' '.join(bad)})"
            if bad
            else f"that commitment is {len(given)} hex digit{'' if len(given) == 1 else 's'};"
            f" a commitment is {COMMITMENT_DIGITS} (a SHA-256 digest): copy it whole"
        )
        return False, (
            f"MISMATCH: {why}\n"
            f"  commitment given:   {given}\n"
            f"  hash of this seed:  {commitment(seed)}"
        )
    if not verify_commitment(seed, digest):
        return False, (
            "MISMATCH: this seed does not hash to the commitment\n"
            f"  commitment given:   {digest.strip().lower()}\n"
            f"  hash of this seed:  {commitment(seed)}"
        )
    return True, f"OK: the seed matches the commitment {commitment(seed)}\n\n" + format_layout(
        seed, variant
    )


def load_solution(text: str) -> Any:
    """A solution given on the command line: JSON itself (it starts with ``[`` or
    ``{``), else the name of a file holding it (``-``: standard input is the caller's
    business). Raises ``ValueError`` with a plain message."""
    raw = text.strip()
    if not raw.startswith(("[", "{")):
        try:
            raw = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read the solution file {text!r}: {exc.strerror}") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the solution is not JSON: {exc}") from None


def verify_solution(seed: str, digest: str, rules: DealRules, solution: Any) -> tuple[bool, str]:
    """Whether ``solution`` wins the deal ``seed`` deals under ``rules`` (and the
    seed matches ``digest``), and the report to print.

    ``solution`` is what a revealed deal carries: its ``proof`` map (``moves``,
    ``length``, ``passes``, ``difficulty``), the whole revealed deal (its ``proof``
    is taken), or a bare list of move maps.
    """
    ok, text = verify(seed, digest, rules.variant)
    if not ok:
        return False, text
    if isinstance(solution, dict) and "proof" in solution:
        given_seed = solution.get("seed")
        if given_seed is not None and given_seed != seed:
            return False, f"MISMATCH: the solution is for seed {given_seed!r}, not {seed!r}"
        solution = solution["proof"]
    how = (
        f"{rules.variant.value}, draw {rules.draw}, "
        + (f"{rules.pass_limit} passes" if rules.pass_limit else "unlimited passes")
        + ("" if rules.foundation_to_tableau else ", no foundation to tableau")
    )
    try:
        proof = proof_from_wire(seed, rules, solution)
    except ProofError as exc:
        return False, f"{text}\n\nNOT A WIN: the solution does not win this deal ({how}): {exc}"
    claimed = solution.get("length") if isinstance(solution, dict) else None
    if claimed is not None and claimed != len(proof.moves):
        return False, (
            f"{text}\n\nMISMATCH: the solution claims {claimed} moves but holds {len(proof.moves)}"
        )
    return True, (
        f"{text}\n\nWIN: the engine replays the solution's {len(proof.moves)} moves from"
        f" this deal ({how}) to a won board, in {proof.passes} pass(es) through the stock"
        f" (difficulty {proof.difficulty}, docs/rules.md §9.3)"
    )
