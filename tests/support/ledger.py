"""The test's own record of a race's accepted moves, to recompute every score."""

from __future__ import annotations

import itertools
from typing import Any

from tests.support.raw_client import result_of


class Ledger:
    """The test's own record of every accepted move, in acceptance order, so a
    test can recompute every score with the engine and compare the server's."""

    def __init__(self) -> None:
        self.moves: dict[int, dict[str, list[Any]]] = {}
        self.results: dict[int, dict[str, list[dict[str, Any]]]] = {}  # as ``moved`` said
        self.rules: dict[int, Any] = {}
        self.seeds: dict[int, str] = {}
        self.started_at: dict[int, int] = {}
        self.ended_at: dict[int, int] = {}
        self.order = itertools.count(1)

    def deal_started(self, deal: dict[str, Any], seed: str, players: list[str]) -> None:
        from protocol.settings import DealRules

        n = deal["number"]
        self.rules[n] = DealRules.from_wire(deal["rules"])
        self.seeds[n] = seed
        self.started_at[n] = deal["started_at"]
        self.moves[n] = {p: [] for p in players}
        self.results[n] = {p: [] for p in players}

    def moved(self, player: str, reply: dict[str, Any], move: dict[str, Any]) -> None:
        from protocol.moves import Move
        from protocol.scoring import TimedMove

        self.moves[reply["deal"]][player].append(
            TimedMove(reply["t"], next(self.order), Move.from_wire(move))
        )
        self.results[reply["deal"]][player].append(result_of(reply))

    def sheet(
        self, players: list[str], scoring: Any, bonus: int, now: int, carry: Any = None
    ) -> Any:
        from protocol.scoring import replay
        from protocol.sheet import DealEntry, build_sheet

        entries = []
        for n in sorted(self.moves):
            results = {
                p: replay(self.seeds[n], self.rules[n], ms) for p, ms in self.moves[n].items()
            }
            stop = self.ended_at.get(n, now) - self.started_at[n]
            entries.append(DealEntry(results, {p: stop for p in results}))
        return build_sheet(players, entries, scoring, bonus, carry)

    def logs_wire(self, n: int) -> dict[str, list[dict[str, Any]]]:
        """Deal ``n``'s logs as a revealed deal must carry them: each move with the
        ``result`` its ``moved`` reply carried live."""
        return {
            p: [
                {"t": tm.t, "move": tm.move.to_wire(), "result": result}
                for tm, result in zip(ms, self.results[n][p], strict=True)
            ]
            for p, ms in self.moves[n].items()
        }
