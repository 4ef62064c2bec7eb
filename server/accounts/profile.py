"""A player's record as the wire shows it: totals, rounds, charts. Pure.

The numbers are the store's (ladder totals counted as entries arrive,
server/accounts/store.py); this only shapes them, and groups the last deals
for the two charts the profile page draws (client/web/charts.js): score over
time and wins by week. Weeks start on Monday, 00:00 UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import Account, DealEntry, RoundEntry
from .store import WEEK, WEEK_S, LadderTotals, week_start

__all__ = [
    "CHART_DEALS",
    "CHART_WEEKS",
    "deal_view",
    "profile_view",
    "round_view",
    "week_start",
]

CHART_DEALS = 200  # deals on the score chart
CHART_WEEKS = 26  # weeks on the wins chart
ROUNDS_SHOWN = 5
NO_STREAKS = {"played": 0, "won": 0, "best_played": 0, "best_won": 0}


def first_chart_week(now: float) -> int:
    """The Monday that starts the wins chart: :data:`CHART_WEEKS` weeks to this one."""
    return week_start(now) - (CHART_WEEKS - 1) * WEEK_S


def deal_view(entry: DealEntry) -> dict[str, Any]:
    return {
        "key": entry.key,
        "t": entry.t,
        "room": entry.room,
        "round": entry.round,
        "deal": entry.deal,
        "ladder": entry.ladder,
        "rules": dict(entry.rules),
        "scoring": entry.scoring,
        "placing": entry.placing,
        "tied": entry.tied,
        "score": entry.score,
        "bonus": entry.bonus,
        "seconds": entry.seconds,
        "moves": entry.moves,
        "result": entry.result,
        "players": entry.players,
    }


def round_view(entry: RoundEntry) -> dict[str, Any]:
    return {
        "key": entry.key,
        "t": entry.t,
        "room": entry.room,
        "round": entry.round,
        "deals": entry.deals,
        "total": entry.total,
        "placing": entry.placing,
        "tied": entry.tied,
        "players": len(entry.players) + 1,
    }


def _totals_view(totals: LadderTotals) -> dict[str, Any]:
    deals = totals.deals
    return {
        "ladder": totals.ladder,
        "deals": deals,
        "wins": totals.wins,
        "win_rate": round(totals.wins / deals, 4) if deals else 0.0,
        "best_seconds": totals.best_seconds,
        "average_moves": round(totals.moves / deals, 1) if deals else 0.0,
    }


def profile_view(
    account: Account | None,
    totals: Sequence[LadderTotals],
    rounds: Sequence[RoundEntry],
    deals: Sequence[DealEntry],
    weeks_kept: Sequence[LadderTotals],
    now: float,
    streaks: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The profile: ``deals`` are the player's latest (the score chart's), newest
    first; ``weeks_kept`` the store's week tallies of the wins chart's weeks."""
    first_week = first_chart_week(now)
    weeks = {first_week + i * WEEK_S: [0, 0] for i in range(CHART_WEEKS)}
    for tally in weeks_kept:
        week = weeks.get(int(tally.ladder[len(WEEK) :]))
        if week is not None:
            week[0] += tally.wins
            week[1] += tally.deals
    scores = [[e.t, e.score] for e in reversed(deals[:CHART_DEALS])]
    since = account.created if account is not None else (deals[-1].t if deals else None)
    return {
        "handle": account.handle if account is not None else None,
        "since": since,
        "totals": [_totals_view(t) for t in totals],
        "rounds": [round_view(r) for r in rounds[:ROUNDS_SHOWN]],
        "scores": scores,
        "weeks": [[start, wins, n] for start, (wins, n) in weeks.items()],
        # Days in a row with a daily played, and won (server/daily/results.py).
        "streaks": dict(streaks) if streaks is not None else dict(NO_STREAKS),
    }
