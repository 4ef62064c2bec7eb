"""The client's bot: the shared strategy (protocol/strategy.py) under its old name.

The decisions live in protocol/ so that the server's bots (server/rooms/bots.py)
play with exactly the same code as ``klondike-race bot``; this module is what the
client's players (client/players.py) and load driver (client/load.py) import.
"""

from __future__ import annotations

from protocol.strategy import HIDDEN, RESIGN, Bot, Pace, Style, board_from_view

__all__ = ["HIDDEN", "RESIGN", "Bot", "Pace", "Style", "board_from_view"]
