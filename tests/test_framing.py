"""The frames the server builds itself (server/net/framing.py) are byte for byte
the ones websockets serializes for a server, at every length encoding."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from server.net.framing import Framer, frame


@pytest.mark.parametrize("n", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_binary_frames_match_websockets(n: int) -> None:
    data = bytes(range(256)) * (n // 256) + bytes(n % 256)
    expected = Frame(Opcode.BINARY, data).serialize(mask=False, extensions=[])
    assert frame(data) == expected


@pytest.mark.parametrize("text", ["", "{}", "é" * 100, "x" * 200, "ü" * 40000])
def test_text_frames_match_websockets(text: str) -> None:
    expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
    assert frame(text) == expected


def test_a_framer_builds_each_payload_once() -> None:
    framer = Framer()
    event = b"\x81\xa1t\xa5moved"
    first = framer(event)
    assert framer(event) is first  # the same bytes object for every recipient
    assert framer(b"other") == frame(b"other")
