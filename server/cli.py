"""``klondike-race serve`` (filled in by the server issue)."""

from __future__ import annotations

from typing import Any


def add_serve(sub: Any) -> None:
    del sub
