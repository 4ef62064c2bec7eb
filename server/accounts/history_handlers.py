"""The record requests: ``profile``, ``history``, ``past_deal``.

Anyone who said hello has a record of their own, guests too (it is kept by
public player id). Another's is seen by their handle, and only as its owner
lets others see it (``Account.shows_record``). A past deal is shown to the
players who played it, and to anyone when one of them shows their record; it
is in no history before it is over for everyone, so nothing hidden can be had
from it. A deal a challenge was made of is shown to no one else until their
take of it is over (server/challenges/handlers.py ``spoils``): its replay is
the deal the challenge deals. One refusal, ``no_such_deal``, for a key unknown, expired or not
shown: it tells nothing of which.
"""

from __future__ import annotations

from typing import Protocol

from protocol import messages as M
from protocol.history_requests import History, PastDeal, Profile
from protocol.messages import ErrorCode
from protocol.requests import Request

from ..challenges.handlers import challenge_views, spoils
from ..challenges.store import ChallengeStore
from ..core.values import RoomError
from ..daily.publisher import DailyDeals
from ..daily.results import ResultStore, day_number, streaks_view
from ..daily.runs import RunKeeper
from ..peer import Peer
from ..ratings.model import every_ladder
from ..rooms.handlers import Front, Handler, on
from .history import read_replay
from .keeping import HistoryKeeper
from .model import Account, handle_key
from .profile import CHART_DEALS, deal_view, first_chart_week, profile_view
from .store import AccountStore

__all__ = ["HISTORY_HANDLERS", "Records"]


class Records(Front, Protocol):
    """What the record requests need of the service: where accounts live, the
    history writes under way, and the daily runs (for the streaks)."""

    accounts: AccountStore
    history: HistoryKeeper
    daily: DailyDeals
    daily_results: ResultStore
    runs: RunKeeper
    challenges: ChallengeStore


async def _whose(desk: Records, conn: Peer, handle: str | None) -> tuple[str, Account | None]:
    """The player whose record is asked for, and their account (None: a guest),
    or the refusal: ``unknown_handle``, ``record_private``."""
    session = desk.session_of(conn)
    accounts = desk.accounts
    if handle is None:
        return session.player, await accounts.account_by_player(session.player)
    account = await accounts.account_by_handle(handle_key(handle))
    if account is None:
        raise RoomError(ErrorCode.UNKNOWN_HANDLE, "nobody has that handle")
    if account.player != session.player and not account.shows_record:
        raise RoomError(ErrorCode.RECORD_PRIVATE, "its owner keeps this record private")
    return account.player, account


async def _profile(desk: Records, conn: Peer, req: Profile) -> None:
    player, account = await _whose(desk, conn, req.handle)
    await desk.history.settled(player)
    await desk.runs.settled_player(player)
    accounts = desk.accounts
    now = desk.clock.now() / 1000
    totals = await accounts.totals(player)
    rounds = await accounts.round_history(player, None, 5)
    deals = await accounts.deal_history(player, None, CHART_DEALS)
    weeks = await accounts.weeks(player, first_chart_week(now))
    streaks = await desk.daily_results.streaks(player)
    today = day_number(desk.daily.today().isoformat())
    view = profile_view(account, totals, rounds, deals, weeks, now, streaks_view(streaks, today))
    view["ratings"] = await _ratings(accounts, player)
    if player == desk.session_of(conn).player:  # another's would show results a taker may not see
        view["challenges"] = await challenge_views(desk.challenges, accounts, player)
    conn.send(M.profile(req.id, profile=view))


async def _ratings(accounts: AccountStore, player: str) -> list[dict[str, object]]:
    """The player's rating on each ladder they are rated on, with its chart."""
    out: list[dict[str, object]] = []
    for ladder in every_ladder():
        rating = (await accounts.ratings(ladder, [player])).get(player)
        if rating is not None:
            chart = await accounts.rating_chart(ladder, player)
            out.append(
                {"ladder": ladder, **rating.to_wire(), "chart": [[p.t, p.rating] for p in chart]}
            )
    return out


async def _history(desk: Records, conn: Peer, req: History) -> None:
    player, _ = await _whose(desk, conn, req.handle)
    await desk.history.settled(player)
    # One more than asked: whether a page follows.
    deals = await desk.accounts.deal_history(player, req.before, req.limit + 1)
    page = deals[: req.limit]
    more = len(deals) > req.limit
    conn.send(
        M.history(req.id, deals=[deal_view(d) for d in page], next=page[-1].t if more else None)
    )


async def _past_deal(desk: Records, conn: Peer, req: PastDeal) -> None:
    session = desk.session_of(conn)
    await desk.history.settled(session.player)
    accounts = desk.accounts
    data = await accounts.replay(req.key)
    refused = RoomError(ErrorCode.NO_SUCH_DEAL, "no such deal in a record you may see")
    if data is None:
        raise refused
    deal = read_replay(data)
    players = list(deal.get("boards", {}))
    if session.player not in players:
        shown = False
        for p in players:
            account = await accounts.account_by_player(p)
            if account is not None and account.shows_record:
                shown = True
                break
        if not shown or await spoils(desk.challenges, req.key, session.player):
            raise refused
    conn.send(M.past_deal(req.id, deal=deal))


HISTORY_HANDLERS: dict[type[Request], Handler[Records]] = dict(
    [on(Profile, _profile), on(History, _history), on(PastDeal, _past_deal)]
)
