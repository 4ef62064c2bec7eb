"""A room's series: every round it has finished, kept across rematches. Pure.

A rematch drops the last round's deals (their move logs are what makes a round
big), yet a race night is a series of rounds, and who won each, by how much, is
what the room talks about. So the round's end keeps a small result of it — its
totals, winners and placings, the scoring it was scored by, and each deal's seed
and scores — and the series adds up match wins from those results.

A series is bounded, however long a room rematches: it lists its last
``ROUNDS_LISTED`` rounds (a round of 8 players and 20 deals is some 40 KiB on the
wire, and every snapshot carries the series), and the rounds before them are kept
only as their count and their wins, so match wins still count every round.

The series is derived, not decided: the fold (server/core/room.py) adds a round's
result when it folds the ``round_over`` record, from the sheet as it stands at that
record's time, so replaying a log rebuilds it exactly. The checkpoint record
carries it whole (:meth:`Series.to_wire`), because a compacted log no longer holds
the rounds before its checkpoint. A result is frozen when its round ends: changing
the scoring afterwards rescores the round's sheet, not its place in the series.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.placings import round_places
from protocol.settings import Scoring
from protocol.sheet import Sheet

__all__ = ["ROUNDS_LISTED", "RoundResult", "Series", "round_result"]

ROUNDS_LISTED = 10  # the last rounds a series lists in full; earlier ones count in wins


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
    ladder: str | None = None  # rated: the ladder the round changed its players' ratings on
    left: tuple[str, ...] = ()  # dealt in, then left mid-way: placed last when rated

    def rated_places(self) -> dict[str, int]:
        """The placings the round is rated by: the round's, and everyone who
        left it mid-way placed last, together."""
        places = round_places({p: self.totals.get(p, 0) for p in self.players})
        last = len(places) + 1
        return {**places, **{p: last for p in self.left if p not in places}}

    def to_wire(self) -> dict[str, Any]:
        rated = {"ladder": self.ladder, "left": list(self.left)} if self.ladder else {}
        return {
            **rated,
            "round": self.number,
            "ended_at": self.ended_at,
            "scoring": self.scoring.value,
            "race_bonus": self.race_bonus,
            "players": list(self.players),
            "totals": dict(self.totals),
            "places": round_places({p: self.totals.get(p, 0) for p in self.players}),
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
            ladder=data.get("ladder"),
            left=tuple(data.get("left", ())),
        )


def round_result(
    number: int,
    at: int,
    sheet: Sheet,
    scoring: Scoring,
    race_bonus: int,
    seeds: Sequence[str],
    ladder: str | None = None,
    left: Sequence[str] = (),
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
        ladder=ladder,
        left=tuple(left),
    )


@dataclass(slots=True)
class Series:
    """The room's last finished rounds in order, the count and wins of those
    before them, and the name of everyone in either (a player who left keeps their
    rows, under the name they had)."""

    rounds: list[RoundResult] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    earlier_rounds: int = 0  # finished before the first of ``rounds``, no longer listed
    earlier_wins: dict[str, int] = field(default_factory=dict)  # those rounds' wins

    def add(self, result: RoundResult, names: Mapping[str, str]) -> None:
        """Keep a round's result (a round that had nobody left in it is no result);
        the oldest listed one then makes way for it, beyond ``ROUNDS_LISTED``."""
        if not result.players:
            return
        self.rounds = [r for r in self.rounds if r.number != result.number] + [result]
        for p in result.players:
            self.names[p] = names.get(p, self.names.get(p, p))
        while len(self.rounds) > ROUNDS_LISTED:
            old = self.rounds.pop(0)
            self.earlier_rounds += 1
            for p in old.winners:
                self.earlier_wins[p] = self.earlier_wins.get(p, 0) + 1
        # A name stays while it has a listed row or an earlier win to go with.
        kept = {p for r in self.rounds for p in r.players} | set(self.earlier_wins)
        self.names = {p: n for p, n in self.names.items() if p in kept}

    def wins(self) -> dict[str, int]:
        """Rounds won per player, every round finished counted, a shared win
        counting for each of its winners; everyone named is listed, with 0 if they
        won none."""
        wins = dict.fromkeys(self.names, 0)
        for p, n in self.earlier_wins.items():
            wins[p] = wins.get(p, 0) + n
        for r in self.rounds:
            for p in r.winners:
                wins[p] = wins.get(p, 0) + 1
        return wins

    def to_wire(self) -> dict[str, Any]:
        """The series as the snapshot reply, ``round_over`` and the checkpoint carry
        it (``places`` and ``wins`` are derived, and ignored when it is read back)."""
        return {
            "rounds": [r.to_wire() for r in self.rounds],
            "wins": self.wins(),
            "names": dict(self.names),
            "earlier_rounds": self.earlier_rounds,
            "earlier_wins": dict(self.earlier_wins),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | None) -> Series:
        """A series written by :meth:`to_wire`; none (a checkpoint written before
        rooms kept a series) is an empty one, and so are earlier rounds a record
        written before series were bounded does not mention."""
        if not data:
            return cls()
        return cls(
            [RoundResult.from_wire(r) for r in data["rounds"]],
            dict(data["names"]),
            data.get("earlier_rounds", 0),
            dict(data.get("earlier_wins", {})),
        )
