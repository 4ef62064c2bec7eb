"""The shared Klondike engine and wire format: pure, no I/O, no clock.

The server validates with it, the clients render and pre-check with it, and every
score is computed by it from the logs.
"""

from .board import MAX_MOVES, Board
from .cards import card_from_str, card_str
from .deal import commitment, deal_layout, verify_commitment
from .moves import Event, IllegalMove, Move, MoveKind, Outcome, Reason, Status
from .scoring import DealReplay, TimedMove, deal_score, replay, replay_outcomes
from .settings import DealRules, Scoring, Settings, SettingsError, Variant
from .sheet import DealEntry, Sheet, build_sheet
from .views import hidden_cards, outcome_view, player_view, progress, revealed_view

__all__ = [
    "MAX_MOVES",
    "Board",
    "DealEntry",
    "DealReplay",
    "DealRules",
    "Event",
    "IllegalMove",
    "Move",
    "MoveKind",
    "Outcome",
    "Reason",
    "Scoring",
    "Settings",
    "SettingsError",
    "Sheet",
    "Status",
    "TimedMove",
    "Variant",
    "build_sheet",
    "card_from_str",
    "card_str",
    "commitment",
    "deal_layout",
    "deal_score",
    "hidden_cards",
    "outcome_view",
    "player_view",
    "progress",
    "replay",
    "replay_outcomes",
    "revealed_view",
    "verify_commitment",
]
