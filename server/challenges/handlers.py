"""The challenge requests: ``challenge`` (a link to one of one's past deals)
and ``challenges`` (those one made and took, with both results).

A challenge is made by a signed-in player of a deal they played: a deal of
their history (its replay, while it is kept) or their run of a daily that is
over. What is read of it to make the challenge (the seed, the timed moves)
stays in the server; the reply holds the code alone. A taker sees the
challenger's result only once their own run is over: until then, the
challenger's numbers would tell them how the deal goes.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from protocol import messages as M
from protocol.challenge_requests import Challenge as ChallengeRequest
from protocol.challenge_requests import Challenges
from protocol.messages import ErrorCode

from ..accounts.history import read_replay
from ..accounts.keeping import HistoryKeeper
from ..accounts.store import AccountStore
from ..core.values import RoomError
from ..daily.ghost_race import names_now
from ..daily.results import RunResult, TimedEntry
from ..daily.run_handlers import RunDesk
from ..peer import Peer
from ..store.base import StoreUnavailable, unavailable
from .model import Challenge, Take, challenge_id, new_challenge_code, run_from_replay
from .store import ChallengeStore

__all__ = [
    "ChallengeDesk",
    "challenge_views",
    "export_challenges",
    "listed",
    "made",
    "result_view",
    "spoils",
    "stored",
]


class ChallengeDesk(RunDesk, Protocol):
    """What the challenge requests need of the service: what a daily run's
    do, history (a room's past deals) and the challenges."""

    history: HistoryKeeper
    challenges: ChallengeStore


async def stored(what: Any) -> Any:
    try:
        return await what
    except StoreUnavailable as exc:
        raise unavailable(f"the challenges cannot be reached: {exc}") from None


_REFUSED = "no such deal of yours to challenge with"


_Source = tuple[str, dict[str, Any], RunResult, list[TimedEntry]]
"""What a challenge is made of: the seed, the rules, the run and its line."""


async def _from_daily(desk: ChallengeDesk, player: str, key: str) -> _Source:
    parts = key.split("/")
    if len(parts) != 3:
        raise RoomError(ErrorCode.NO_SUCH_DEAL, _REFUSED)
    _, date, ladder = parts
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise RoomError(ErrorCode.NO_SUCH_DEAL, _REFUSED) from None
    await desk.runs.settled_player(player)
    runs: list[RunResult] = await stored(desk.daily_results.results_of(date, ladder, [player]))
    deal = await stored(desk.daily.deal(day, ladder)) if runs else None
    if not runs or deal is None:
        raise RoomError(ErrorCode.NO_SUCH_DEAL, _REFUSED)
    lines = await stored(desk.daily_results.lines(date, ladder, [player]))
    return deal.seed, deal.rules.to_wire(), runs[0], lines.get(player, [])


async def _from_history(desk: ChallengeDesk, player: str, key: str) -> _Source:
    await desk.history.settled(player)
    data = await stored(desk.accounts.replay(key))
    replay = None if data is None else read_replay(data)
    if replay is None or player not in replay.get("logs", {}):
        raise RoomError(ErrorCode.NO_SUCH_DEAL, _REFUSED)
    run, line = run_from_replay(replay, player)
    return str(replay["seed"]), dict(replay["rules"]), run, line


async def made(desk: ChallengeDesk, conn: Peer, req: ChallengeRequest) -> None:
    session = desk.session_of(conn)
    if session.account is None:
        raise RoomError(ErrorCode.NOT_SIGNED_IN, "sign in to challenge a friend")
    player = session.player
    if req.key.startswith("daily/"):
        seed, rules, run, line = await _from_daily(desk, player, req.key)
    else:
        seed, rules, run, line = await _from_history(desk, player, req.key)
    code = new_challenge_code()
    now = desk.clock.now() / 1000
    challenge = Challenge(challenge_id(code), player, req.key, seed, rules, run, tuple(line), now)
    await stored(desk.challenges.add(challenge))
    url = f"{conn.link_base or ''}/#challenge={code}"
    conn.send(M.challenge(req.id, code=code, url=url))


def result_view(run: RunResult, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "result": run.result,
        "seconds": round(run.ms / 1000, 3),
        "moves": run.moves,
        "score": run.score,
        "home": run.home,
        "home_seconds": round(run.home_ms / 1000, 3),
    }


async def listed(desk: ChallengeDesk, conn: Peer, req: Challenges) -> None:
    session = desk.session_of(conn)
    conn.send(
        M.challenges(
            req.id, challenges=await challenge_views(desk.challenges, desk.accounts, session.player)
        )
    )


async def challenge_views(
    store: ChallengeStore, accounts: AccountStore, player: str
) -> list[dict[str, Any]]:
    """The challenges the player made and took, newest first (``challenges``,
    and the profile's): the challenger's result hidden from a taker whose run
    is not over."""
    made: list[Challenge] = await stored(store.made_by(player))
    taken: list[Take] = await stored(store.taken_by(player))
    rows: list[tuple[Challenge, list[Take], str]] = []
    for challenge in made:
        rows.append((challenge, await stored(store.takes_of(challenge.id)), "made"))
    for take in taken:
        challenge_ = await stored(store.get(take.challenge))
        if challenge_ is not None and challenge_.challenger != player:
            rows.append((challenge_, [take], "taken"))
    runs = [c.run for c, _, _ in rows] + [t.result for _, ts, _ in rows for t in ts if t.result]
    names = await stored(names_now(accounts, runs))
    for _, takes, _ in rows:  # a take still going has no result to name it yet
        for take in takes:
            if take.player not in names:
                account = await stored(accounts.account_by_player(take.player))
                names[take.player] = "" if account is None else account.handle
    out: list[dict[str, Any]] = []
    for challenge, takes, role in sorted(rows, key=lambda r: -r[0].created):
        run = challenge.run
        mine = takes[0] if role == "taken" else None
        hidden = mine is not None and mine.result is None
        out.append(
            {
                "id": challenge.id[:16],
                "role": role,
                "made": challenge.created,
                "ladder": challenge.run.ladder,
                "challenger": names.get(run.player, run.name),
                "challenger_result": None
                if hidden
                else result_view(run, names.get(run.player, run.name)),
                "takes": [_take_view(t, names) for t in takes],
            }
        )
    return out


async def export_challenges(store: ChallengeStore, player: str) -> dict[str, Any]:
    """The challenges a player made and took, as their data export holds them:
    made ones with their run and its line (``[t, kind, from, to, count]`` a
    move) and how many took them, by the deal's key, not its seed (that of a
    daily is secret until its day ends); taken ones with the take's room and
    result. Oldest first."""
    made: list[Challenge] = await stored(store.made_by(player))
    taken: list[Take] = await stored(store.taken_by(player))
    out_made = []
    for c in sorted(made, key=lambda c: c.created):
        takes: list[Take] = await stored(store.takes_of(c.id))
        out_made.append(
            {
                "source": c.source,
                "made": c.created,
                "rules": c.rules,
                "run": c.run.to_json(),
                "line": [list(move) for move in c.line],
                "takes": len(takes),
            }
        )
    out_taken = []
    for t in sorted(taken, key=lambda t: t.created):
        challenge = await stored(store.get(t.challenge))
        if challenge is not None and challenge.challenger == player:
            continue
        out_taken.append(
            {
                "started": t.created,
                "room": t.code,
                "result": None if t.result is None else t.result.to_json(),
            }
        )
    return {"made": out_made, "taken": out_taken}


def _take_view(take: Take, names: dict[str, str]) -> dict[str, Any]:
    """A take: who, and their result once their run is over (None before)."""
    result = take.result
    name = names.get(take.player, "" if result is None else result.name)
    return {"name": name, "result": None if result is None else result_view(result, name)}


async def spoils(store: ChallengeStore, key: str, player: str) -> bool:
    """Whether the replay of deal ``key`` would show ``player`` a challenge's
    deal before their run of it is over: it is the deal of a challenge, and
    they have no take of one that is over. (They may hold the link without
    having taken it yet, or be sent one later: so a challenged deal is
    replayed to no one but its players until then.)"""
    made: list[Challenge] = await stored(store.made_from(key))
    if not made:
        return False
    ids = {c.id for c in made}
    takes: list[Take] = await stored(store.taken_by(player))
    return not any(t.challenge in ids and t.result is not None for t in takes)
