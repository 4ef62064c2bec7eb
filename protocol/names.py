"""Display names: what a person sees, counted as a person counts it.

A name is read by people, so it is normalised (NFC, runs of white space to one
space), must show at least one visible character (not only fillers such as
U+3164 HANGUL FILLER or U+2800 BRAILLE PATTERN BLANK, which are letters and
symbols to Unicode but blank on screen), and is at most :data:`MAX_GRAPHEMES`
long in grapheme clusters: an emoji sequence (👩‍👩‍👧 with its zero-width joiners, a
flag, a skin tone) is one character to its reader. Control, bidi-override and
other format characters are refused, except the joiner and tag characters that
emoji sequences are made of. Within a room two members never share a name:
:func:`unique_in` adds a visible suffix. Pure, so the server and any client agree.

The grapheme clusters come from the ``regex`` package's ``\\X`` (Unicode's
extended grapheme clusters, UAX #29), which the standard library does not have.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

import regex

__all__ = ["DELETED_PLAYER", "MAX_GRAPHEMES", "NameError_", "graphemes", "normalise", "unique_in"]

MAX_GRAPHEMES = 24
DELETED_PLAYER = "a deleted player"
"""What a player whose account was deleted is called wherever they were named
(docs/protocol.md, "Accounts"); two of them in one room share it."""
_MAX_CODE_POINTS = 200  # bounds the work on one name whatever its clusters
_ZWJ = 0x200D
_TAGS = range(0xE0020, 0xE0080)  # subdivision flags (🏴 + tags + cancel tag)
_BLANK = frozenset(
    {0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x17B4, 0x17B5, 0x180E, 0x1D159, 0x1D173}
)  # letters, symbols and marks to Unicode that show nothing
_CLUSTER = regex.compile(r"\X")
_SPACES = regex.compile(r"\s+")


class NameError_(ValueError):
    """A name refused; the message says why, in words for the person typing it."""


def graphemes(text: str) -> list[str]:
    """``text`` as the characters a person sees (extended grapheme clusters)."""
    return _CLUSTER.findall(text)


def _visible(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNPS" and ord(ch) not in _BLANK


def normalise(raw: str) -> str:
    """The name as it will be shown, or :class:`NameError_`."""
    if len(raw) > 4 * _MAX_CODE_POINTS:
        raise NameError_(f"a name is at most {MAX_GRAPHEMES} characters")
    name = _SPACES.sub(" ", unicodedata.normalize("NFC", raw)).strip()
    if len(name) > _MAX_CODE_POINTS:
        raise NameError_(f"a name is at most {MAX_GRAPHEMES} characters")
    for ch in name:
        cat = unicodedata.category(ch)
        allowed_format = ord(ch) == _ZWJ or ord(ch) in _TAGS
        if cat in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (cat == "Cf" and not allowed_format):
            raise NameError_("a name may not hold control or invisible formatting characters")
    if not any(_visible(ch) for ch in name):
        raise NameError_("a name needs at least one visible character")
    if len(graphemes(name)) > MAX_GRAPHEMES:
        raise NameError_(f"a name is at most {MAX_GRAPHEMES} characters")
    return name


def unique_in(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``… if another member has it already
    (compared case-insensitively, as people read names)."""
    used = {t.casefold() for t in taken}
    if name.casefold() not in used:
        return name
    n = 2
    while f"{name} ({n})".casefold() in used:
        n += 1
    return f"{name} ({n})"
