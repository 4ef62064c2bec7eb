"""Names as people see them: normalised, visibly non-empty, counted in grapheme
clusters, emoji sequences welcome, and unique within a room."""

from __future__ import annotations

import unicodedata

import pytest

from protocol.names import MAX_GRAPHEMES, NameError_, graphemes, normalise, unique_in
from tests.support.inprocess import running_server
from tests.support.raw_client import Client, player
from tests.support.reference_race import beside_a_race

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 👩‍👩‍👧‍👦
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def test_nfc_and_spaces() -> None:
    assert normalise("  A\u030angstr\u00f6m \t  Ann ") == "\u00c5ngstr\u00f6m Ann"
    assert unicodedata.is_normalized("NFC", normalise("e\u0301"))


@pytest.mark.parametrize(
    "name", [FAMILY, SCOTLAND, "\U0001f44d\U0001f3fd", "\U0001f1e9\U0001f1f0", "Åse 🂡"]
)
def test_emoji_sequences_are_one_character_each(name: str) -> None:
    assert normalise(name) == name
    assert len(graphemes(FAMILY * MAX_GRAPHEMES)) == MAX_GRAPHEMES
    assert normalise(FAMILY * MAX_GRAPHEMES) == FAMILY * MAX_GRAPHEMES


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "\u3164",  # HANGUL FILLER: a letter to Unicode, blank on screen
        "\u2800\u2800",  # BRAILLE PATTERN BLANK
        "\u200b",  # ZERO WIDTH SPACE
        "\u200d",  # a joiner alone
        "\u115f\u1160",
    ],
)
def test_a_name_needs_something_visible(name: str) -> None:
    with pytest.raises(NameError_):
        normalise(name)


@pytest.mark.parametrize("name", ["Ann\u202eevil", "A\u0000B", "soft\u00adhyphen", "a\u2066b"])
def test_controls_and_bidi_overrides_are_refused(name: str) -> None:
    with pytest.raises(NameError_, match="control or invisible"):
        normalise(name)


def test_length_is_what_a_person_counts() -> None:
    assert normalise("x" * MAX_GRAPHEMES) == "x" * MAX_GRAPHEMES
    with pytest.raises(NameError_, match="at most"):
        normalise("x" * (MAX_GRAPHEMES + 1))
    with pytest.raises(NameError_):
        normalise("e\u0301" * 1000)  # bounded work on long input


def test_unique_in_a_room() -> None:
    assert unique_in("Ann", ["Bob"]) == "Ann"
    assert unique_in("Ann", ["ann", "Bob"]) == "Ann (2)"
    assert unique_in("Ann", ["Ann", "Ann (2)"]) == "Ann (3)"


async def test_over_the_wire_names_are_checked_and_made_unique() -> None:
    async with running_server() as server, beside_a_race(server):
        ann = await player(server, "Ann")
        twin = await player(server, "ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        joined = await twin.ok("join_room", code=code, role="player")
        assert [p["name"] for p in joined["room"]["players"]] == ["Ann", "ann (2)"]
        fam = await player(server, FAMILY)
        await fam.ok("join_room", code=code, role="spectator")
        members = await ann.event("members")
        while not members["spectators"]:  # the events of the earlier joins first
            members = await ann.event("members")
        assert members["spectators"][0]["name"] == FAMILY
        blank = await Client.open(server.url)
        refused = await blank.request("hello", version=2, name="\u3164")
        assert refused["code"] == "bad_name"
        assert refused["message"] == "a name needs at least one visible character"
