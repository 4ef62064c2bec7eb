"""A room's series: every round it has finished, kept across rematches. Pure.

A rematch drops the last round's deals (their move logs are what makes a round
big), yet a race night is a series of rounds, and who won each, by how much, is
what the room talks about. So the round's end keeps a small result of it — its
totals, winners and placings, the scoring it was scored by, and each deal's seed
and scores — and the series adds up match wins from those results.

The series is derived, not decided: the fold (server/core/room.py) adds a round's
result when it folds the ``round_over`` record, from the sheet as it stands at that
record's time, so replaying a log rebuilds it exactly. The ``snapshot`` record
carries it whole (:meth:`Series.to_wire`), because a compacted log no longer holds
the rounds before its snapshot. A result is frozen when its round ends: changing
the scoring afterwards rescores the round's sheet, not its place in the series.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.settings import Scoring
from protocol.sheet import Sheet

__all__ = ["RoundResult", "Series", "places", "round_result"]


def places(players: Sequence[str], totals: Mapping[str, int]) -> dict[str, int]:
    """Each player's placing, 1 for the best total; equal totals share a place and
    the places after them are skipped (two tied first, then third), as on a podium."""
    ranked = sorted(totals.get(p, 0) for p in players)
    ranked.reverse()
    return {p: ranked.index(totals.get(p, 0)) + 1 for p in players}


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One finished round. ``deals`` are the wire maps of its deals' summaries:
    ``number``, ``seed``, ``first`` and ``cells`` ({player: score, status, moves,
    home}), the sheet's rows with the seed they were dealt from."""

    number: int
    ended_at: int
    scoring: Scoring
    race_bonus: int
    players: tuple[str, ...]
    totals: dict[str, int]
    winners: tuple[str, ...]
    deals: tuple[dict[str, Any], ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "round": self.number,
            "ended_at": self.ended_at,
            "scoring": self.scoring.value,
            "race_bonus": self.race_bonus,
            "players": list(self.players),
            "totals": dict(self.totals),
            "places": places(self.players, self.totals),
            "winners": list(self.winners),
            "deals": [dict(d) for d in self.deals],
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> RoundResult:
        return cls(
            number=data["round"],
            ended_at=data["ended_at"],
            scoring=Scoring(data["scoring"]),
            race_bonus=data["race_bonus"],
            players=tuple(data["players"]),
            totals=dict(data["totals"]),
            winners=tuple(data["winners"]),
            deals=tuple(dict(d) for d in data["deals"]),
        )


def round_result(
    number: int,
    at: int,
    sheet: Sheet,
    scoring: Scoring,
    race_bonus: int,
    seeds: Sequence[str],
) -> RoundResult:
    """Round ``number``'s result from its sheet at its end; ``seeds`` are its deals'
    seeds in order (all revealed by then: every deal of the round is over)."""
    deals = tuple(
        {
            "number": i + 1,
            "seed": seeds[i] if i < len(seeds) else None,
            "first": row.first,
            "cells": {
                p: {"score": c.score, "status": c.status.value, "moves": c.moves, "home": c.home}
                for p, c in row.cells.items()
            },
        }
        for i, row in enumerate(sheet.rows)
    )
    return RoundResult(
        number=number,
        ended_at=at,
        scoring=scoring,
        race_bonus=race_bonus,
        players=tuple(sheet.players),
        totals={p: sheet.totals.get(p, 0) for p in sheet.players},
        winners=tuple(sheet.winners),
        deals=deals,
    )


@dataclass(slots=True)
class Series:
    """The room's finished rounds in order, and the name of everyone who played in
    one (a player who left keeps their rows, under the name they had)."""

    rounds: list[RoundResult] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)

    def add(self, result: RoundResult, names: Mapping[str, str]) -> None:
        """Keep a round's result (a round that had nobody left in it is no result)."""
        if not result.players:
            return
        self.rounds = [r for r in self.rounds if r.number != result.number] + [result]
        for p in result.players:
            self.names[p] = names.get(p, self.names.get(p, p))

    def wins(self) -> dict[str, int]:
        """Rounds won per player, a shared win counting for each of its winners;
        everyone who played a round is listed, with 0 if they won none."""
        wins = dict.fromkeys(self.names, 0)
        for r in self.rounds:
            for p in r.winners:
                wins[p] = wins.get(p, 0) + 1
        return wins

    def to_wire(self) -> dict[str, Any]:
        """The series as the snapshot, ``round_over`` and the ``snapshot`` record carry
        it (``places`` and ``wins`` are derived, and ignored when it is read back)."""
        return {
            "rounds": [r.to_wire() for r in self.rounds],
            "wins": self.wins(),
            "names": dict(self.names),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | None) -> Series:
        """A series written by :meth:`to_wire`; none (a snapshot record written before
        rooms kept a series) is an empty one."""
        if not data:
            return cls()
        return cls([RoundResult.from_wire(r) for r in data["rounds"]], dict(data["names"]))
