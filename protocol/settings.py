"""House rules (docs/rules.md §6) and the rules a single deal is played under.

A room's :class:`Settings` may change at any time; a deal's :class:`DealRules` are
frozen when the deal is dealt. The split is docs/rules.md §6: settings that change
what is *legal* (draw, stock passes, variant, undo, foundation to tableau) apply from
the next deal, while settings that only change *points* (scoring, race bonus) rescore
every deal at once, because scores are recomputed from the logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any

__all__ = [
    "DealRules",
    "Deals",
    "Scoring",
    "Settings",
    "SettingsError",
    "Spectators",
    "Variant",
]


class Scoring(StrEnum):
    STANDARD = "standard"
    VEGAS = "vegas"
    CUMULATIVE_VEGAS = "cumulative_vegas"
    TIMED = "timed"

    @property
    def is_vegas(self) -> bool:
        return self in (Scoring.VEGAS, Scoring.CUMULATIVE_VEGAS)


class Variant(StrEnum):
    CLASSIC = "classic"
    THOUGHTFUL = "thoughtful"
    DOUBLE = "double"

    @property
    def packs(self) -> int:
        return 2 if self is Variant.DOUBLE else 1

    @property
    def piles(self) -> int:
        return 9 if self is Variant.DOUBLE else 7

    @property
    def cards(self) -> int:
        return 52 * self.packs


class Spectators(StrEnum):
    """What spectators see while a deal runs (fair play: the layouts are
    identical, so with live boards a player could watch their own race — every
    rival's face-up cards are their own face-down ones — from a second device)."""

    LIVE = "live"  # every board, live
    AFTER_DEAL = "after_deal"  # progress only; the boards open when the deal is over
    NONE = "none"  # no spectators at all

    @property
    def see_boards(self) -> bool:
        return self is Spectators.LIVE


class Deals(StrEnum):
    """Which layouts a room deals (docs/rules.md §9)."""

    RANDOM = "random"  # any layout the seed deals
    WINNABLE = "winnable"  # only layouts a solver has won and the engine replayed


class SettingsError(ValueError):
    """A setting out of range. ``field`` names it so a client can point at it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# field -> (minimum, maximum, step) for the integer settings of docs/rules.md §6.
RANGES: dict[str, tuple[int, int, int]] = {
    "draw": (1, 3, 2),
    "deals_per_round": (1, 20, 1),
    "stock_passes": (0, 10, 1),
    "time_limit_minutes": (0, 120, 5),
    "race_bonus": (0, 1000, 5),
    "break_seconds": (0, 60, 1),
}


@dataclass(frozen=True, slots=True)
class Settings:
    """A room's house rules, with the defaults of docs/rules.md §6."""

    scoring: Scoring = Scoring.STANDARD
    draw: int = 1
    deals_per_round: int = 3
    stock_passes: int = 0
    time_limit_minutes: int = 0
    race_bonus: int = 100
    variant: Variant = Variant.CLASSIC
    undo: bool = False
    foundation_to_tableau: bool = True
    spectators: Spectators = Spectators.LIVE
    deals: Deals = Deals.RANDOM
    # The pause between two deals of a round, when the room sees the deal's
    # results; it applies at once (a break running ends when the new length says).
    break_seconds: int = 10
    # A rated room's rounds change its players' ratings (docs/rules.md §11):
    # every player signed in, no bot seated, the rules locked while a round runs.
    rated: bool = False

    def to_wire(self) -> dict[str, Any]:
        d = asdict(self)
        d["scoring"] = self.scoring.value
        d["variant"] = self.variant.value
        d["spectators"] = self.spectators.value
        d["deals"] = self.deals.value
        return d

    def updated(self, changes: Mapping[str, Any]) -> Settings:
        """These settings with ``changes`` applied, every field validated.

        Raises :class:`SettingsError` naming the first bad field and its range,
        or, for settings that are fine alone but not together, the field changed.
        """
        if not isinstance(changes, Mapping):
            raise SettingsError("settings", "settings must be a map of field to value")
        values: dict[str, Any] = {}
        for name, value in changes.items():
            values[name] = _validate(name, value)
        new = replace(self, **values)
        if new.deals is Deals.WINNABLE and new.variant is Variant.DOUBLE:
            field = "deals" if "deals" in values and "variant" not in values else "variant"
            raise SettingsError(
                field,
                "winnable deals are not available in double klondike: no solver proves"
                " two-pack layouts; choose classic or thoughtful, or random deals",
            )
        return new

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Settings:
        return cls().updated(data)

    def deal_rules(self) -> DealRules:
        """The rules a deal dealt now is played under."""
        if self.stock_passes:
            limit = self.stock_passes
        elif self.scoring.is_vegas:
            limit = 1 if self.draw == 1 else 3
        else:
            limit = 0
        return DealRules(
            variant=self.variant,
            draw=self.draw,
            pass_limit=limit,
            undo=self.undo,
            foundation_to_tableau=self.foundation_to_tableau,
        )


def _validate(name: str, value: Any) -> Any:
    if name == "scoring":
        return _enum(name, Scoring, value)
    if name == "variant":
        return _enum(name, Variant, value)
    if name == "spectators":
        return _enum(name, Spectators, value)
    if name == "deals":
        return _enum(name, Deals, value)
    if name in ("undo", "foundation_to_tableau", "rated"):
        if not isinstance(value, bool):
            raise SettingsError(name, f"{name} must be true or false")
        return value
    if name in RANGES:
        lo, hi, step = RANGES[name]
        allowed = "1 or 3" if name == "draw" else f"{lo} … {hi} in steps of {step}"
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not lo <= value <= hi
            or (value - lo) % step
        ):
            raise SettingsError(name, f"{name} must be {allowed}, not {value!r}")
        return value
    raise SettingsError(name, f"unknown setting {name!r}")


def _enum(
    name: str,
    kind: type[Scoring] | type[Variant] | type[Spectators] | type[Deals],
    value: Any,
) -> Any:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise SettingsError(name, f"{name} must be one of {allowed}, not {value!r}") from None


@dataclass(frozen=True, slots=True)
class DealRules:
    """What is legal in one deal, fixed when it is dealt.

    ``pass_limit`` is the number of passes through the stock allowed, 0 for no limit.
    It is resolved from the settings at deal time: the house rule when set, else
    Vegas's own limit (1 with draw one, 3 with draw three) under Vegas scoring.
    """

    variant: Variant = Variant.CLASSIC
    draw: int = 1
    pass_limit: int = 0
    undo: bool = False
    foundation_to_tableau: bool = True

    def to_wire(self) -> dict[str, Any]:
        d = asdict(self)
        d["variant"] = self.variant.value
        return d

    @property
    def ladder(self) -> str:
        """The rule set a deal counts toward, in history and in ratings: what
        changes the game itself (the variant, draw one or three), not what
        changes its scoring."""
        return f"{self.variant.value}-draw{self.draw}"

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> DealRules:
        return cls(
            variant=Variant(data["variant"]),
            draw=int(data["draw"]),
            pass_limit=int(data["pass_limit"]),
            undo=bool(data["undo"]),
            foundation_to_tableau=bool(data["foundation_to_tableau"]),
        )
