"""Card encoding, the seeded dealing algorithm and the seed commitment.

The golden vectors below pin the mapping from seed to layout for ever (docs/rules.md §2):
they were computed once and pasted in as literals. If one of these tests fails, the
deal has changed and every revealed seed of every past room would check out wrong;
do not "update" the literals, fix the code.
"""

from __future__ import annotations

import hashlib
import struct
from collections import Counter

import pytest

from protocol import Board, DealRules, Settings, Variant, card_from_str, card_str
from protocol.cards import RANKS, SUITS, Suit, card, is_red, rank_of, suit_of
from protocol.deal import (
    COMMITMENT_PREFIX,
    commitment,
    deal_layout,
    shuffled_pack,
    verify_commitment,
)

# ---------------------------------------------------------------- card encoding


def test_card_numbering_is_suit_times_13_plus_rank_minus_one() -> None:
    assert card(1, Suit.CLUBS) == 0
    assert card(13, Suit.CLUBS) == 12
    assert card(1, Suit.DIAMONDS) == 13
    assert card(1, Suit.HEARTS) == 26
    assert card(13, Suit.SPADES) == 51
    for c in range(52):
        assert card(rank_of(c), suit_of(c)) == c
        assert 1 <= rank_of(c) <= 13
        assert 0 <= suit_of(c) <= 3


def test_suit_order_is_clubs_diamonds_hearts_spades() -> None:
    assert [s.name for s in Suit] == ["CLUBS", "DIAMONDS", "HEARTS", "SPADES"]
    assert SUITS == "CDHS"
    assert RANKS == "A23456789TJQK"


def test_colours() -> None:
    reds = {c for c in range(52) if is_red(c)}
    assert reds == {card(r, s) for r in range(1, 14) for s in (Suit.DIAMONDS, Suit.HEARTS)}
    assert not is_red(card_from_str("AS"))
    assert not is_red(card_from_str("KC"))
    assert is_red(card_from_str("QH"))
    assert is_red(card_from_str("TD"))


@pytest.mark.parametrize(
    ("text", "value"),
    [("AC", 0), ("TC", 9), ("KC", 12), ("AD", 13), ("TD", 22), ("QH", 37), ("AS", 39), ("KS", 51)],
)
def test_wire_form(text: str, value: int) -> None:
    assert card_from_str(text) == value
    assert card_str(value) == text


def test_wire_form_round_trips_every_card() -> None:
    strings = [card_str(c) for c in range(52)]
    assert len(set(strings)) == 52
    assert all(len(s) == 2 for s in strings)
    assert [card_from_str(s) for s in strings] == list(range(52))


@pytest.mark.parametrize("bad", ["", "A", "1S", "10H", "AX", "as", "qh", "ZZ", "AS ", " AS", "SA"])
def test_wire_form_rejects_anything_else(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        card_from_str(bad)


# ---------------------------------------------------------------- golden vectors


def _cards(text: str) -> list[int]:
    return [card_from_str(s) for s in text.split()] if text else []


# seed -> (tableau piles bottom first, stock first-drawn first). Classic and
# Thoughtful share the layout (they differ in what is face up, not in the deal).
GOLDEN_SINGLE: dict[str, tuple[list[str], str]] = {
    "0": (
        [
            "QS",
            "AH 8C",
            "5D 2C 3D",
            "9H 6S KH 5C",
            "6H JH 8D 4C 6C",
            "3H 9D 7C AS 8S 2H",
            "4H QH QD JD 9C 3S 6D",
        ],
        "TD 7H KD JS 7D 4D QC 5S 4S 3C 5H TC AC 8H AD 9S 2D KS KC 2S JC TS TH 7S",
    ),
    "golden-1": (
        [
            "6H",
            "AH JD",
            "AD 8H 4C",
            "8D TC 3H AC",
            "TS 7S KH KD 2D",
            "8S 7C 9D 8C 6C QH",
            "2S QD 7H 3S AS 5H 3C",
        ],
        "TD JH QC KC 9H 4H 9S 5D JC TH 9C 4D 2H 3D 6D 7D KS 4S JS 5S 5C 6S QS 2C",
    ),
    "klondike race": (
        [
            "6H",
            "5H 3C",
            "QC 9H 2H",
            "3S TH JH 7C",
            "3D AC TD 2C 4C",
            "TC AH AD 6D 7D 8C",
            "KS AS QS KD QH 8D 7H",
        ],
        "KC 5D 5S JC 3H 4D QD 4S 9D 9C TS JS 6S 8H 6C 2S JD 7S 8S 2D 9S 5C KH 4H",
    ),
    # A seed is hashed as UTF-8, so non-ASCII seeds are pinned too.
    "Þórsmörk-ævintýri": (
        [
            "8C",
            "QD AC",
            "8H KH 6C",
            "TC 6D AS 5D",
            "3H QS 7C 3D 7D",
            "TS TH 4C 7S 8S 4H",
            "6S AH 2S 9C 3S KS 5S",
        ],
        "KD 8D QH 9D JC 9S QC JD 2H 6H 2C KC 4S 9H AD 5H JH 2D JS TD 5C 7H 3C 4D",
    ),
}

GOLDEN_DOUBLE: dict[str, tuple[list[str], str]] = {
    "0": (
        [
            "4C",
            "4H 8C",
            "6H KS KH",
            "QH 6C JH 8H",
            "AS 6H 9C 7C 7H",
            "6C 8D QS KS 3D TH",
            "4H AD AC QS 8H 9S 5H",
            "TH 9S 3H QD 7H 2H JH 4D",
            "5S 3C JS 5C JS 2D 8D JD 4S",
        ],
        "9H 4D QC 2S QC 7S 2H AS 5D TC 8S 8S 3D KD JD AD 3H 8C AH 3S 2C 9C 2C KC 9H 2S 7D"
        " QD TD 3C 5C 6D 6S 5S TD KH 3S 9D QH TS JC 4S AC KC 7C 5D KD 5H 9D 2D 6S AH TC 6D"
        " TS 4C JC 7D 7S",
    ),
    "golden-1": (
        [
            "AD",
            "7C QD",
            "JH 8H 8D",
            "TS 9D 9H 5S",
            "3S 3H 3C KH 2H",
            "6D KC AS 2S QC 9H",
            "TD 5C KD 4S QC 7S TH",
            "4C 4D 7D 9C AC KD 2D 7C",
            "TS 8S JD 8H 8S 6H AH JH 6S",
        ],
        "3S 3D JD 9S 8C 4S 5H TD 5D 3C 2C 6H 3H 3D 6C 6D TC 6S QS 9S KH 5H AC QS 2S 4D QH"
        " AH AD JC JS TC 5D 6C JS 7D JC KS 7H AS 4H QH 4H 9C 8C 9D QD 7S 5S 4C 2H 5C 8D 7H"
        " KS KC 2D TH 2C",
    ),
    "klondike race": (
        [
            "JD",
            "9S KD",
            "6D KH QS",
            "9C KS QD 4D",
            "7S 2D QH JC 6S",
            "7H 4C AS AC QS 5D",
            "KC TH TS AC 3C QC 3S",
            "6D QD TC 7C JS 8C 3H 7D",
            "2D 2S 5C 6H 8H 9D 5D 2H 3H",
        ],
        "8S AH 9H 6H JC 4H 4S 7D KC KD 3D 9D KS TC JH 6S 6C 8D KH 5S 8D AD AS 8S QH 3C 6C"
        " 2C AD TH 3S TD 8C AH 5S 7H JD 5H 7S 2C 9H 2H JS 4D 4S TS JH 4C 3D QC 5C 9C 8H 5H"
        " TD 2S 7C 9S 4H",
    ),
    "Þórsmörk-ævintýri": (
        [
            "8H",
            "QH 8S",
            "9S 6S 6C",
            "3H 5C TD TS",
            "TC KS QC 2D 9D",
            "6D JC 2C AC AS AH",
            "8D 4H 4D 6H 7C 5H 7C",
            "7H TH 6S 3S QH 3D 7S 6H",
            "JH 7D KH 9S 8C 3D KD 9D QS",
        ],
        "5D TH 5C AD 2H KD QD 3H 5H KH QS AS QD JH 2S 8C 5D 6C 6D 2D 4H 4C 5S 9H AH 3C 4C"
        " 4S 7S TD JC KS 8H 7D 2C KC 9C JD 7H JS 8D AC QC TC 3S 2H 4S JS 9H 9C 8S AD 2S KC"
        " 3C JD TS 5S 4D",
    ),
}


def _as_strings(tableau: list[list[int]], stock: list[int]) -> tuple[list[str], str]:
    return [" ".join(card_str(c) for c in pile) for pile in tableau], " ".join(
        card_str(c) for c in stock
    )


@pytest.mark.parametrize("variant", [Variant.CLASSIC, Variant.THOUGHTFUL])
@pytest.mark.parametrize("seed", sorted(GOLDEN_SINGLE))
def test_golden_single_pack(seed: str, variant: Variant) -> None:
    assert _as_strings(*deal_layout(seed, variant)) == GOLDEN_SINGLE[seed]


@pytest.mark.parametrize("seed", sorted(GOLDEN_DOUBLE))
def test_golden_double(seed: str) -> None:
    assert _as_strings(*deal_layout(seed, Variant.DOUBLE)) == GOLDEN_DOUBLE[seed]


def test_golden_first_cards_of_the_shuffle() -> None:
    # The worked example of docs/rules.md §2.1: the pack after the shuffle, first ten.
    assert [card_str(c) for c in shuffled_pack("0")[:10]] == (
        ["QS", "AH", "5D", "9H", "6H", "3H", "4H", "8C", "2C", "6S"]
    )


def test_board_deal_puts_the_golden_layout_on_the_board() -> None:
    piles, stock = GOLDEN_SINGLE["golden-1"]
    board = Board.deal("golden-1", DealRules())
    assert [list(p) for p in board.tableau] == [_cards(p) for p in piles]
    # The board keeps its stock top last: the first card drawn is the last.
    assert list(board.stock[::-1]) == _cards(stock)
    assert list(board.down) == [0, 1, 2, 3, 4, 5, 6]
    assert list(board.waste) == []
    assert list(board.foundations) == [0, 0, 0, 0]


# ---------------------------------------------------------------- layout shape


@pytest.mark.parametrize("seed", ["a", "b", "seed-3", "", "x" * 500, "🂡🂢🂣"])
@pytest.mark.parametrize("variant", list(Variant))
def test_layout_shape(seed: str, variant: Variant) -> None:
    tableau, stock = deal_layout(seed, variant)
    packs = 2 if variant is Variant.DOUBLE else 1
    piles = 9 if variant is Variant.DOUBLE else 7
    assert (variant.packs, variant.piles, variant.cards) == (packs, piles, 52 * packs)
    assert [len(p) for p in tableau] == list(range(1, piles + 1))
    on_table = piles * (piles + 1) // 2
    assert on_table == (45 if packs == 2 else 28)
    assert len(stock) == 52 * packs - on_table == (59 if packs == 2 else 24)
    everything = Counter(c for pile in tableau for c in pile) + Counter(stock)
    assert everything == Counter({c: packs for c in range(52)})


def test_deal_face_up_and_face_down() -> None:
    classic = Board.deal("shape", DealRules(variant=Variant.CLASSIC))
    assert list(classic.down) == list(range(7))  # 21 face down, top of each pile up
    assert sum(classic.down) == 21
    double = Board.deal("shape", DealRules(variant=Variant.DOUBLE))
    assert list(double.down) == list(range(9))
    assert len(double.foundations) == 8
    thoughtful = Board.deal("shape", DealRules(variant=Variant.THOUGHTFUL))
    assert list(thoughtful.down) == [0] * 7
    assert thoughtful.tableau == classic.tableau


def test_seeds_deal_different_layouts() -> None:
    layouts = {tuple(shuffled_pack(f"s{i}")) for i in range(200)}
    assert len(layouts) == 200


def test_deal_is_a_pure_function_of_the_seed() -> None:
    assert deal_layout("same", Variant.CLASSIC) == deal_layout("same", Variant.CLASSIC)
    assert Board.deal("same", Settings().deal_rules()).fingerprint() == (
        Board.deal("same", Settings().deal_rules()).fingerprint()
    )


# ---------------------------------------------------------------- independent re-implementation


def _reference_pack(seed: str, packs: int) -> list[int]:
    """The algorithm of docs/rules.md §2, written again from its text with plain loops."""
    words: list[int] = []
    block = 0

    def next_word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(seed.encode("utf-8") + struct.pack(">Q", block)).digest()
            block += 1
            words.extend(struct.unpack(">4Q", digest))
        return words.pop(0)

    pack = []
    for _ in range(packs):
        for suit in "CDHS":
            for rank in "A23456789TJQK":
                pack.append(card_from_str(rank + suit))
    for i in range(len(pack) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        w = next_word()
        while w >= limit:
            w = next_word()
        j = w % n
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def _reference_layout(seed: str, packs: int, piles: int) -> tuple[list[list[int]], list[int]]:
    pack = _reference_pack(seed, packs)
    tableau: list[list[int]] = [[] for _ in range(piles)]
    k = 0
    for row in range(piles):
        for p in range(row, piles):
            tableau[p].append(pack[k])
            k += 1
    return tableau, pack[k:]


@pytest.mark.parametrize("packs", [1, 2])
def test_reference_implementation_matches(packs: int) -> None:
    for i in range(300):
        seed = f"ref-{i}-{'é' * (i % 3)}"
        assert shuffled_pack(seed, packs) == _reference_pack(seed, packs), seed


@pytest.mark.parametrize("variant", list(Variant))
def test_reference_layout_matches(variant: Variant) -> None:
    for i in range(100):
        seed = f"layout {i}"
        assert deal_layout(seed, variant) == _reference_layout(
            seed, variant.packs, variant.piles
        ), seed


def test_rejection_sampling_skips_words_at_or_above_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A word at or above ``2**64 - 2**64 % (i + 1)`` is skipped, not reduced.

    Such words are astronomically rare from SHA-256, so forge the word stream: the
    first draw has bound 52, whose limit is 2**64 - 16.
    """
    import protocol.deal as deal

    assert 2**64 % 52 == 16

    def forged(first: list[int]) -> list[int]:
        stream = [*first, 5] + [7] * 200
        monkeypatch.setattr(deal, "_words", lambda seed: iter(stream))
        return deal.shuffled_pack("ignored")

    plain = forged([])
    assert plain[51] == 5  # i = 51 swapped with j = 5; position 51 is then final
    assert forged([2**64 - 1]) == plain  # rejected
    assert forged([2**64 - 16]) == plain  # exactly the limit: rejected
    assert forged([2**64 - 1, 2**64 - 16]) == plain  # several in a row
    kept = forged([2**64 - 17])  # just below: kept, j = (2**64 - 17) % 52 = 51
    assert kept[51] == 51 and kept != plain


# ---------------------------------------------------------------- commitment


def test_commitment_is_prefixed_sha256() -> None:
    seed = "9f86d081884c7d65"
    expected = hashlib.sha256(b"klondike-race/seed/v1:" + seed.encode()).hexdigest()
    assert COMMITMENT_PREFIX == "klondike-race/seed/v1:"
    assert commitment(seed) == expected
    assert len(commitment(seed)) == 64
    assert commitment(seed) != hashlib.sha256(seed.encode()).hexdigest()


def test_commitment_golden() -> None:
    assert commitment("golden-1") == (
        "edac43152c7c3a044ded856fac21063b20444dce8821beb1a60951274e95648b"
    )
    assert commitment("0") == "4f43a7aab062ec69e8f181224b48a6e2a680968021632680ea6dd0978c909b57"


def test_verify_commitment() -> None:
    seed = "a3f1c2d4e5b6a7980112233445566778"
    digest = commitment(seed)
    assert verify_commitment(seed, digest)
    assert verify_commitment(seed, digest.upper())
    assert verify_commitment(seed, f"  {digest}\n")


@pytest.mark.parametrize(
    "tampered",
    [
        "a3f1c2d4e5b6a7980112233445566779",  # last digit changed
        "a3f1c2d4e5b6a798011223344556677",  # one digit dropped
        "A3F1C2D4E5B6A7980112233445566778",  # case matters in a seed
        "a3f1c2d4e5b6a7980112233445566778 ",  # so does whitespace
        "",
    ],
)
def test_verify_commitment_rejects_a_tampered_seed(tampered: str) -> None:
    digest = commitment("a3f1c2d4e5b6a7980112233445566778")
    assert not verify_commitment(tampered, digest)


def test_verify_commitment_rejects_a_tampered_digest() -> None:
    digest = commitment("seed")
    flipped = ("0" if digest[0] != "0" else "1") + digest[1:]
    assert not verify_commitment("seed", flipped)
    assert not verify_commitment("seed", digest[:-1])
    assert not verify_commitment("seed", "")
