"""The run requests: ``daily_start`` (a run of today's daily, begun or resumed)
and ``daily_board`` (a leaderboard page, everyone's or one's friends').

One attempt, decided in the store: a run's room is made (durable: created,
seated and dealt in one append, server/core/decide.py ``decide_daily``) and
only then claimed for the player, atomically (server/daily/results.py). Of two
attempts racing (two devices, two nodes), the one whose claim is kept is the
run; the other's room closes at once and counts for nothing (a result counts
only from the room its claim names). A run is over once its room says so,
whether or not its result is written yet (a crash may come between): a new
attempt is refused, ``daily_played``, on every store and after every fault.
While the run is going, ``daily_start`` seats the player in it again (a second
device, say); a drop or a reload needs no request at all: the session resumes
its room like any other.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Protocol

from protocol import messages as M
from protocol.daily_requests import BOARD_PAGE, DailyBoard, DailyCompare, DailyLine, DailyStart
from protocol.messages import ErrorCode
from protocol.placings import run_key, run_places
from protocol.requests import Request

from ..accounts.store import AccountStore
from ..core import decide as D
from ..core.values import RoomError
from ..core.views import room_view
from ..peer import Peer, SessionState
from ..rooms.handlers import Front, Handler, on, open_room
from ..rooms.runner import Release, RoomRunner
from ..service.adoption import Adoption
from ..service.presence import presence
from ..store.base import StoreUnavailable, unavailable
from .ghost_race import Ghosts, friends_of, names_now
from .ghosts import comparison, frames, line_replay
from .publisher import DailyDeals
from .results import RankedRun, ResultStore, RunClaim, RunResult
from .runs import RunKeeper, result_of, run_settings
from .schedule import LADDERS

__all__ = ["RUN_HANDLERS", "RunDesk", "seat_run"]


class RunDesk(Front, Protocol):
    """What the run requests need of the service."""

    daily: DailyDeals
    daily_results: ResultStore
    runs: RunKeeper
    accounts: AccountStore
    adoption: Adoption
    ghosts: Ghosts


def _ladder(name: str) -> str:
    if name not in LADDERS:
        known = " or ".join(LADDERS)
        raise RoomError(ErrorCode.BAD_REQUEST, f"no daily ladder is named {name!r:.40}: {known}")
    return name


async def _store(what: Any) -> Any:
    try:
        return await what
    except StoreUnavailable as exc:
        raise unavailable(f"the daily runs cannot be reached: {exc}") from None


async def _daily_start(desk: RunDesk, conn: Peer, req: DailyStart) -> None:
    session = desk.session_of(conn)
    ladder = _ladder(req.ladder)
    today = desk.daily.today()
    date = today.isoformat()
    results = desk.daily_results
    claim: RunClaim | None = await _store(results.claimed(date, ladder, session.player))
    if claim is None:
        claim = await _begin(desk, session, date, ladder)
    played = RoomError(ErrorCode.DAILY_PLAYED, f"you have played the {ladder} daily of {date}")
    if claim.over:
        raise played
    await seat_run(desk, conn, req, session, claim.code, played)


async def _begin(desk: RunDesk, session: SessionState, date: str, ladder: str) -> RunClaim:
    """Make a run's room, then claim it: the claim kept is the run."""
    if session.room_code is not None:
        raise RoomError(ErrorCode.ALREADY_IN_ROOM, "leave your room first")
    deal = await _store(desk.daily.deal(desk.daily.today(), ladder))
    if deal is None:
        raise unavailable("today's daily deal is not published yet")
    player = session.player
    settings = run_settings(ladder)

    async def make(runner: RoomRunner) -> RoomRunner:
        await runner.run(
            lambda r, c: D.decide_daily(
                r, player, session.name, (date, ladder), settings, (deal.seed, deal.line), c
            )
        )
        return runner

    runner = await open_room(desk, make)
    code = runner.code
    claim: RunClaim = await _store(desk.daily_results.claim(date, ladder, player, code))
    if claim.code != code:  # another attempt claimed first: this room was for nothing
        await runner.run(lambda r, c: D.decide_close(r, player, c))
    return claim


async def seat_run(
    desk: RunDesk, conn: Peer, req: Request, session: SessionState, code: str, played: RoomError
) -> None:
    """Seat the player in their run's room (the view, as a ``joined`` reply), or
    refuse with ``played`` if the room shows the run over.

    The result of a run is written after the record that ends it, by the node
    that ran it or, after a crash, by the room's rebuild (server/daily/runs.py):
    a request may come between, on this node or on another one that rebuilds the
    room just now. The room's log is the truth, so a run over is refused alike
    whether its result is written yet or not."""
    if session.room_code not in (None, code):
        raise RoomError(ErrorCode.ALREADY_IN_ROOM, "leave your room first")
    runner = desk.rooms.get(code)
    if runner is None and await desk.adoption.adopt(code):
        runner = desk.rooms.get(code)
    if runner is None:
        raise unavailable("your run of this daily cannot be reached now; try again soon")
    if await _run_over(runner):
        raise played

    def reply(_d: Any) -> Release:
        now = desk.clock.now()
        view = room_view(runner.room, session.player, now, None, revealed=runner.memo.revealed)
        msg = M.joined(req.id, room=view)

        def send() -> None:
            session.room_code = code
            conn.send(msg)

        return send

    if session.room_code is None:  # seated by the run's room: linked before it is told
        await desk.link_session(session, code)
    await runner.run(presence(session.player, True), reply)
    await desk.ghosts.seated(runner, session.player)


async def _run_over(runner: RoomRunner) -> bool:
    """Whether the run is over as the room's durable records say (not a record
    still on its way to the store, which may yet be rolled back)."""
    seen: list[bool] = []

    def make() -> Release:
        over = result_of(runner.room) is not None
        return lambda: seen.append(over)

    await runner.read(make)
    return seen[-1]


async def _daily_board(desk: RunDesk, conn: Peer, req: DailyBoard) -> None:
    session = desk.session_of(conn)
    ladder = _ladder(req.ladder)
    date = req.date or desk.daily.today().isoformat()
    player = session.player
    await desk.runs.settled_player(player)  # one's own run, just over, is on the board
    results = desk.daily_results
    you: RankedRun | None
    if req.friends:
        players = [player, *await _store(friends_of(desk.accounts, player))]
        runs: list[RunResult] = await _store(results.results_of(date, ladder, players))
        places = run_places({r.player: r.finish for r in runs})
        runs.sort(key=lambda r: (run_key(r.finish), r.player))
        board = [(places[r.player], r) for r in runs]
        you = next(((rank, r) for rank, r in board if r.player == player), None)
        page, count = board[req.before : req.before + BOARD_PAGE + 1], len(board)
    else:
        you = await _store(results.rank(date, ladder, player))
        page = await _store(results.board(date, ladder, req.before, BOARD_PAGE + 1))
        count = await _store(results.count(date, ladder))
    more = len(page) > BOARD_PAGE
    page = page[:BOARD_PAGE]
    shown = [r for _, r in page] + ([] if you is None else [you[1]])
    names = await _store(names_now(desk.accounts, shown))

    def view(rank: int, run: RunResult) -> dict[str, Any]:
        return {**run.view(rank), "name": names.get(run.player, run.name)}

    conn.send(
        M.daily_board(
            req.id,
            date=date,
            ladder=ladder,
            friends=req.friends,
            runs=[view(rank, r) for rank, r in page],
            you=None if you is None else view(*you),
            count=count,
            next=req.before + BOARD_PAGE if more else None,
        )
    )


async def _daily_compare(desk: RunDesk, conn: Peer, req: DailyCompare) -> None:
    """One's run over against the day's leader's: timings only, never a card
    or a move of the leader's (the day's deal is everyone's to play until the
    day ends)."""
    session = desk.session_of(conn)
    ladder = _ladder(req.ladder)
    date = req.date or desk.daily.today().isoformat()
    player = session.player
    await desk.runs.settled_player(player)
    results = desk.daily_results
    mine: list[RunResult] = await _store(results.results_of(date, ladder, [player]))
    if not mine:
        raise RoomError(
            ErrorCode.DAILY_NOT_OVER, f"your run of the {ladder} daily of {date} is not over"
        )
    top = await _store(results.board(date, ladder, 0, 1))
    leader = top[0][1] if top else mine[0]
    deal = await _store(desk.daily.deal(dt.date.fromisoformat(date), ladder))
    if deal is None:
        raise unavailable("that day's deal cannot be read now")
    names = await _store(names_now(desk.accounts, [mine[0], leader]))
    lines = await _store(results.lines(date, ladder, [player, leader.player]))
    you = dataclasses.replace(mine[0], name=names.get(player, mine[0].name))
    them = dataclasses.replace(leader, name=names.get(leader.player, leader.name))
    compare = comparison(
        you,
        frames(deal.seed, deal.rules, you, lines.get(player, [])),
        them,
        frames(deal.seed, deal.rules, them, lines.get(leader.player, [])),
    )
    conn.send(M.daily_compare(req.id, date=date, ladder=ladder, compare=compare))


async def _daily_line(desk: RunDesk, conn: Peer, req: DailyLine) -> None:
    """The day's leader's run, move by move, once the day is over: its seed is
    public then (``daily``), and so is how the deal was won. Before, refused,
    ``day_not_over``: the moves would tell the cards of a deal still played."""
    ladder = _ladder(req.ladder)
    day = dt.date.fromisoformat(req.date)
    if day >= desk.daily.today():
        raise RoomError(
            ErrorCode.DAY_NOT_OVER,
            f"the {ladder} daily of {req.date} is not over: its leader's line is shown after",
        )
    results = desk.daily_results
    top = await _store(results.board(req.date, ladder, 0, 1))
    deal = await _store(desk.daily.deal(day, ladder)) if top else None
    if not top or deal is None:
        raise RoomError(ErrorCode.NO_SUCH_DEAL, f"no run of the {ladder} daily of {req.date}")
    leader = top[0][1]
    line = (await _store(results.lines(req.date, ladder, [leader.player]))).get(leader.player)
    if line is None:
        raise unavailable("that run's line cannot be read now")
    names = await _store(names_now(desk.accounts, [leader]))
    shown = line_replay(deal, leader, line, names.get(leader.player, leader.name))
    conn.send(M.daily_line(req.id, date=req.date, ladder=ladder, deal=shown))


RUN_HANDLERS: dict[type[Request], Handler[RunDesk]] = dict(
    [
        on(DailyStart, _daily_start),
        on(DailyBoard, _daily_board),
        on(DailyCompare, _daily_compare),
        on(DailyLine, _daily_line),
    ]
)
