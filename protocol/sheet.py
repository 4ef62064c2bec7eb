"""The score sheet of a round: one row per deal, one column per player.

Built from replays and settings alone, so it is rebuilt whole whenever the host
changes the scoring or the race bonus; no score is ever stored. Each cell reads
its replay's running totals (:meth:`DealReplay.score`), so a rebuild costs the
same however long the logs are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .moves import Status
from .placings import round_places
from .scoring import DealReplay
from .settings import Scoring

__all__ = ["Cell", "DealEntry", "Row", "Sheet", "build_sheet"]


@dataclass(frozen=True, slots=True)
class DealEntry:
    """One deal of a round as the sheet needs it.

    ``results`` maps a player to their replay; ``end_t`` maps a player to the time
    (ms from the deal's start) their deal stopped counting if it did not end by a
    move: the round's time running out, the host moving on, or now.
    """

    results: Mapping[str, DealReplay]
    end_t: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Cell:
    score: int  # the deal's score, race bonus included
    bonus: int  # the race bonus in it
    total: int  # the running total after this deal
    status: Status
    moves: int
    home: int  # cards on the foundations


@dataclass(frozen=True, slots=True)
class Row:
    cells: dict[str, Cell]
    first: str | None  # who took the race bonus
    # Players of the sheet not dealt this deal (they joined the round after it
    # was dealt): no cell, and nothing added to their total.
    absent: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Sheet:
    players: list[str]
    rows: list[Row] = field(default_factory=list)
    carry: dict[str, int] = field(default_factory=dict)  # cumulative Vegas banks brought in
    totals: dict[str, int] = field(default_factory=dict)
    # The round's placings by total (protocol/placings.py); empty, like winners,
    # until the sheet has a row.
    places: dict[str, int] = field(default_factory=dict)
    winners: list[str] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "carry": dict(self.carry),
            "rows": [
                {
                    "first": row.first,
                    "absent": list(row.absent),
                    "cells": {
                        pid: {
                            "score": c.score,
                            "bonus": c.bonus,
                            "total": c.total,
                            "status": c.status.value,
                            "moves": c.moves,
                            "home": c.home,
                        }
                        for pid, c in row.cells.items()
                    },
                }
                for row in self.rows
            ],
            "totals": dict(self.totals),
            "places": dict(self.places),
            "winners": list(self.winners),
        }


def build_sheet(
    players: Sequence[str],
    deals: Sequence[DealEntry],
    scoring: Scoring,
    race_bonus: int,
    carry: Mapping[str, int] | None = None,
) -> Sheet:
    """The sheet for ``players`` over ``deals``.

    ``carry`` is each player's cumulative Vegas bank from earlier rounds; it only
    counts under cumulative Vegas. Once the sheet has a row, its players are placed
    by their totals, and the winners are those placed first (equal totals share
    the win).
    """
    bank = {p: 0 for p in players}
    if scoring is Scoring.CUMULATIVE_VEGAS and carry:
        for p in players:
            bank[p] = carry.get(p, 0)
    sheet = Sheet(list(players), carry=dict(bank))
    for entry in deals:
        first: str | None = None
        first_seq = -1
        for p, result in entry.results.items():
            if result.won_seq is not None and (first is None or result.won_seq < first_seq):
                first, first_seq = p, result.won_seq
        cells: dict[str, Cell] = {}
        absent: list[str] = []
        for p in players:
            played = entry.results.get(p)
            if played is None:
                absent.append(p)
                continue
            score = played.score(scoring, entry.end_t.get(p, 0))
            bonus = race_bonus if p == first else 0
            bank[p] += score + bonus
            board = played.board
            cells[p] = Cell(score + bonus, bonus, bank[p], board.status, board.moves, board.home)
        sheet.rows.append(Row(cells, first, absent))
    sheet.totals = dict(bank)
    if sheet.rows:
        sheet.places = round_places({p: bank[p] for p in players})
        sheet.winners = [p for p in players if sheet.places[p] == 1]
    return sheet
