"""A challenge and its takes. Pure.

A challenge is made of a past deal of the challenger's: the seed it was dealt
from and the challenger's timed moves are copied into it when it is made, so
that it lives on when the deal's replay expires (server/accounts/history.py
``REPLAY_DAYS``) and the daily's result store is never read for it again. The
seed is kept server-side only: the link holds a code of 130 random bits
(``new_code``), and the store knows the challenge by ``secret_hash`` of it,
so neither the link nor a stored challenge's id tells the deal.

The challenger's run is kept as a daily run is (server/daily/results.py
``RunResult``, and its line packed as a daily run's is), so the ghost of a
daily serves it as it is (server/daily/ghosts.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocol.moves import Move, Status
from protocol.settings import DealRules

from ..accounts.model import new_code, secret_hash
from ..daily.ghosts import frames
from ..daily.results import (
    Finished,
    RunResult,
    TimedEntry,
    homes_of_line,
    pack_line,
    unpack_line,
)

__all__ = ["Challenge", "Take", "challenge_id", "new_challenge_code", "run_from_replay"]


def new_challenge_code() -> str:
    """A challenge's code: what its link holds, shown to its challenger only."""
    return new_code().replace("-", "")


def challenge_id(code: str) -> str:
    """How the store knows a challenge: the code, hashed."""
    return secret_hash(code)


@dataclass(frozen=True, slots=True)
class Challenge:
    id: str  # challenge_id of its code
    challenger: str  # their player id
    source: str  # the key it was made from (a history deal's, or daily/DATE/LADDER)
    seed: str  # never sent to a taker
    rules: dict[str, Any]  # DealRules.to_wire() of the deal
    run: RunResult  # the challenger's run of it
    line: tuple[TimedEntry, ...]  # and its timed moves: what its ghost replays
    created: float  # unix seconds

    @property
    def deal_rules(self) -> DealRules:
        return DealRules.from_wire(self.rules)

    def to_json(self) -> dict[str, Any]:
        out = {**dataclasses.asdict(self), "run": self.run.to_json()}
        out["line"] = pack_line(self.line)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Challenge:
        run = RunResult.from_json(dict(data["run"]))
        if "line" in data:
            line = tuple(unpack_line(data["line"]))
        else:  # kept before lines were packed apart: the text inside its run
            line = tuple(_line_of_text(data["run"].get("line", "")))
        if "home" not in data["run"]:  # kept before its cards home were: its line tells them
            run = run.with_line(line)
        return cls(**{**data, "run": run, "line": line})


def _line_of_text(text: str) -> list[TimedEntry]:
    """A line as challenges kept it inside their run before lines were packed:
    ``t,kind,from,to,count`` a move, ``;`` between."""
    out: list[TimedEntry] = []
    for entry in text.split(";") if text else ():
        t, kind, src, dst, count = entry.split(",")
        out.append((int(t), kind, int(src), int(dst), int(count)))
    return out


@dataclass(frozen=True, slots=True)
class Take:
    """One player's take of a challenge: the room of their run, and its result
    once it is over (a take with a result is over: no second one)."""

    challenge: str  # the challenge's id
    player: str
    code: str  # the run's room
    created: float
    result: RunResult | None = None

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["result"] = None if self.result is None else self.result.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Take:
        result = data.get("result")
        return cls(
            **{**data, "result": None if result is None else RunResult.from_json(dict(result))}
        )


_RESULT = {Status.WON.value: "won", Status.RESIGNED.value: "resigned", Status.DEAD.value: "dead"}


def run_from_replay(replay: Mapping[str, Any], player: str) -> Finished:
    """The player's run of a room's past deal (a ``past_deal`` map), as a daily
    run's result is kept: timed from its first move, ``stopped`` if the deal
    ended before they did, scored as a take is (Standard, no race bonus,
    whatever the room's scoring was), so the two results compare."""
    summary = replay["summary"][player]
    logged = replay["logs"][player]
    moves = []
    for entry in logged:
        move = Move.from_wire(entry["move"])
        moves.append((int(entry["t"]), move.kind.value, move.src, move.dst, move.count))
    first = moves[0][0] if moves else 0
    last = moves[-1][0] if moves else 0
    rules = DealRules.from_wire(replay["rules"])
    line = [(t - first, kind, a, b, n) for t, kind, a, b, n in moves]
    home, home_ms = homes_of_line(line, rules.variant.cards)
    run = RunResult(
        date="",
        ladder=rules.ladder,
        player=player,
        name=str(replay.get("names", {}).get(player, "")),
        result=_RESULT.get(summary["status"], "stopped"),
        ms=max(0, last - first),
        moves=int(summary["moves"]),
        score=0,
        home=home,
        home_ms=home_ms,
        ended=float(replay["t"]),
        code=str(replay["room"]),
    )
    seen = frames(str(replay["seed"]), rules, run, line)
    return dataclasses.replace(run, score=seen[-1].progress["score"] if seen else 0), line
