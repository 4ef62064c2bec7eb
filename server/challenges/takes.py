"""Taking a challenge: ``challenge_info`` (what its link shows) and
``challenge_start`` (one's run of it, begun once or resumed).

A take is a run as a daily run is (server/daily/runs.py): a room of one made by
the server, created, seated and dealt from the challenge's seed in one append,
so everything a daily run promises holds (the clock from the first move, a
resume after a drop, nothing hidden sent, the seed withheld even after the run:
others may still take it). Only then is it claimed, atomically, in the
challenge store: of two attempts racing, the claim kept is the take, and the
other room closes at once. A take with a result is over; another is refused,
``challenge_taken``. Its ghost is the challenger's run (server/daily/ghost_race.py).
The link of a challenge withdrawn (its challenger's account deleted) is
refused, ``challenge_withdrawn``: a right code, so no guess is counted.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from protocol import messages as M
from protocol.challenge_requests import ChallengeInfo, ChallengeStart
from protocol.messages import ErrorCode
from protocol.placings import run_places
from protocol.settings import DealRules, Deals, Scoring, Settings, Spectators

from ..core import decide as D
from ..core.values import RoomError
from ..daily.ghost_race import names_now
from ..daily.run_handlers import seat_run
from ..net.allowances import Quota
from ..peer import Peer, SessionState
from ..rooms.handlers import open_room
from ..rooms.runner import RoomRunner
from .handlers import ChallengeDesk, result_view, stored
from .model import Challenge, Take, challenge_id

__all__ = ["challenge_info", "challenge_start", "take_settings"]


def take_settings(rules: DealRules) -> Settings:
    """A take's room: the deal's rules, Standard scoring, one deal, no race
    bonus, no break, nobody watching (the seed is given: nothing to prove)."""
    return Settings(
        scoring=Scoring.STANDARD,
        draw=rules.draw,
        deals_per_round=1,
        stock_passes=rules.pass_limit,
        race_bonus=0,
        variant=rules.variant,
        undo=rules.undo,
        foundation_to_tableau=rules.foundation_to_tableau,
        spectators=Spectators.NONE,
        deals=Deals.RANDOM,
        break_seconds=0,
    )


async def _challenge(desk: ChallengeDesk, conn: Peer, code: str) -> Challenge:
    """The challenge of a link's code; a wrong code is a guess, counted as a
    wrong link code is (``link_codes``: once they are used up, no answers)."""
    desk.allowances.admit(Quota.LINK_CODES, conn, spend=False)
    found: Challenge | None = await stored(desk.challenges.get(challenge_id(code)))
    if found is None:
        if await stored(desk.challenges.withdrawn(challenge_id(code))):
            raise RoomError(
                ErrorCode.CHALLENGE_WITHDRAWN,
                "this challenge was withdrawn: its challenger is gone",
            )
        desk.allowances.admit(Quota.LINK_CODES, conn)
        raise RoomError(ErrorCode.BAD_CODE, "no such challenge")
    return found


async def _take_of(desk: ChallengeDesk, challenge: Challenge, player: str) -> Take | None:
    takes: list[Take] = await stored(desk.challenges.taken_by(player))
    return next((t for t in takes if t.challenge == challenge.id), None)


async def challenge_info(desk: ChallengeDesk, conn: Peer, req: ChallengeInfo) -> None:
    session = desk.session_of(conn)
    challenge = await _challenge(desk, conn, req.code)
    player = session.player
    await desk.runs.settled_player(player)
    take = await _take_of(desk, challenge, player)
    mine = challenge.challenger == player
    over = mine or (take is not None and take.result is not None)
    run = challenge.run
    result = None if take is None else take.result
    shown = [run] + ([result] if result is not None else [])
    names = await stored(names_now(desk.accounts, shown))
    name = names.get(run.player, run.name)
    # Both results placed by the rule of runs (docs/rules.md §7.1), once both are in.
    places = run_places({"challenger": run.finish, "taker": result.finish}) if result else {}
    view: dict[str, Any] = {
        "challenger": name,
        "ladder": run.ladder,
        "rules": challenge.rules,
        "made": challenge.created,
        "yours": mine,
        "taken": take is not None,
        "over": over,
        "challenger_result": {**result_view(run, name), "place": places.get("challenger")}
        if over
        else None,
        "result": None
        if result is None
        else {**result_view(result, names.get(player, result.name)), "place": places["taker"]},
    }
    conn.send(M.challenge_info(req.id, challenge=view))


async def challenge_start(desk: ChallengeDesk, conn: Peer, req: ChallengeStart) -> None:
    session = desk.session_of(conn)
    challenge = await _challenge(desk, conn, req.code)
    if challenge.challenger == session.player:
        raise RoomError(ErrorCode.BAD_REQUEST, "this is your own challenge")
    await desk.runs.settled_player(session.player)
    take = await _take_of(desk, challenge, session.player)
    if take is None:
        await _daily_played(desk, challenge, session.player)
        take = await _begin(desk, session, challenge)
    played = RoomError(ErrorCode.CHALLENGE_TAKEN, "you have played this challenge")
    if take.result is not None:
        raise played
    await seat_run(desk, conn, req, session, take.code, played)


async def _daily_played(desk: ChallengeDesk, challenge: Challenge, player: str) -> None:
    """A challenge of a daily whose day runs is taken only by one whose own run
    of that daily is over: else the take would be a practice run of the day's
    deal before the run that counts."""
    if not challenge.source.startswith("daily/"):
        return
    _, date, ladder = challenge.source.split("/")
    if date < desk.daily.today().isoformat():
        return
    claim = await stored(desk.daily_results.claimed(date, ladder, player))
    if claim is None or not claim.over:
        raise RoomError(
            ErrorCode.DAILY_NOT_OVER,
            f"play your own run of the {ladder} daily of {date} first, or take this after the day",
        )


async def _begin(desk: ChallengeDesk, session: SessionState, challenge: Challenge) -> Take:
    """Make the take's room, then claim it: the claim kept is the take."""
    if session.room_code is not None:
        raise RoomError(ErrorCode.ALREADY_IN_ROOM, "leave your room first")
    player = session.player
    settings = take_settings(challenge.deal_rules)
    now = desk.clock.now()
    date = dt.datetime.fromtimestamp(now / 1000, dt.UTC).date().isoformat()
    run = (date, challenge.run.ladder)

    async def make(runner: RoomRunner) -> RoomRunner:
        await runner.run(
            lambda r, c: D.decide_daily(
                r, player, session.name, run, settings, (challenge.seed, None), c, challenge.id
            )
        )
        return runner

    runner = await open_room(desk, make)
    code = runner.code
    take: Take = await stored(desk.challenges.take(challenge.id, player, code, now / 1000))
    if take.code != code:  # another attempt took it first: this room was for nothing
        await runner.run(lambda r, c: D.decide_close(r, player, c))
    return take
