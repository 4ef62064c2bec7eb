"""Where accounts live: the interface every store implements.

The same promises as the room logs (server/store/base.py): a write is durable
when its coroutine returns, and a store that cannot write raises
:class:`~server.store.base.StoreUnavailable` having written nothing. Three
implementations, beside the room stores they share a process or a server with:
in memory, SQLite (the embedded default), Redis (shared by every node).

Secrets are handed in already hashed (model.py ``secret_hash``): a store never
sees a device token, a link code or a recovery code. Operations that must
happen once happen atomically in the store (a handle taken, a link or recovery
code used, a passkey's signature counter moved on), so two nodes racing on the
same code cannot both win.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..ratings.model import Applied, ChartPoint, RatedRound, Rating, Standing
from .model import Account, DealEntry, Device, Friendship, LinkCode, Passkey, RoundEntry

__all__ = [
    "WEEK",
    "AccountStore",
    "LadderTotals",
    "add_to_totals",
    "ladders_of",
    "tallies",
    "week_start",
    "weeks_of",
]


@dataclass(frozen=True, slots=True)
class LadderTotals:
    """A player's totals on one rule set, kept as entries arrive so a profile of
    10,000 deals is one read."""

    ladder: str
    deals: int = 0
    wins: int = 0
    best_seconds: float | None = None  # fastest won deal
    moves: int = 0  # summed, for the average
    score: int = 0  # summed


WEEK = "week:"  # the tally of a week: ``week:`` and its Monday 00:00 UTC in unix seconds
WEEK_S = 7 * 86_400
_MONDAY = 4 * 86_400  # 1970-01-01 was a Thursday: the first Monday, 00:00 UTC, is day 4


def week_start(t: float) -> int:
    """The Monday 00:00 UTC that starts the week ``t`` is in (unix seconds)."""
    return int((t - _MONDAY) // WEEK_S * WEEK_S + _MONDAY)


def tallies(entry: DealEntry) -> tuple[str, str]:
    """What a deal counts in: its ladder's totals and its week's. Kept by the store
    as entries arrive, so a profile of 10,000 deals reads a few rows, and the
    chart of wins by week is right however many deals a week held."""
    return entry.ladder, f"{WEEK}{week_start(entry.t)}"


def ladders_of(kept: Iterable[LadderTotals]) -> list[LadderTotals]:
    """The ladders' totals among a player's tallies, by ladder name."""
    return sorted((t for t in kept if not t.ladder.startswith(WEEK)), key=lambda t: t.ladder)


def weeks_of(kept: Iterable[LadderTotals], since: float) -> list[LadderTotals]:
    """The weeks' tallies among a player's, from the week of ``since``, oldest first."""
    first = week_start(since)
    weeks = [(int(t.ladder[len(WEEK) :]), t) for t in kept if t.ladder.startswith(WEEK)]
    return [t for start, t in sorted(weeks, key=lambda w: w[0]) if start >= first]


def add_to_totals(totals: LadderTotals | None, entry: DealEntry, tally: str) -> LadderTotals:
    """One deal folded into one of its tallies (every store counts alike)."""
    base = totals or LadderTotals(tally)
    won = entry.result == "won"
    best = base.best_seconds
    if won and entry.seconds is not None and (best is None or entry.seconds < best):
        best = entry.seconds
    return dataclasses.replace(
        base,
        deals=base.deals + 1,
        wins=base.wins + int(won),
        best_seconds=best,
        moves=base.moves + entry.moves,
        score=base.score + entry.score,
    )


class AccountStore(Protocol):
    # -- accounts --------------------------------------------------------------
    async def create_account(self, account: Account) -> bool:
        """Store a new account; False (and nothing written) when its handle
        (compared by ``handle_key``) or its player already has one."""

    async def account(self, account: str) -> Account | None: ...

    async def account_by_handle(self, key: str) -> Account | None:
        """By ``handle_key(handle)``."""

    async def account_by_player(self, player: str) -> Account | None: ...

    async def handles(self, players: Sequence[str]) -> dict[str, str]:
        """The handle of each of ``players`` who has an account, in one read (a
        ladder's table names up to a hundred players)."""

    async def players(self, accounts: Sequence[str]) -> dict[str, str]:
        """The player id of each of ``accounts`` that exists, in one read (a
        friends table starts from its friendships, which name accounts)."""

    async def update_account(self, account: Account) -> bool:
        """Replace the stored account of the same id; when the handle changes,
        the new one is claimed atomically: False (nothing written) if taken."""

    async def set_room(self, account: str, room_code: str | None) -> None:
        """Keep the room the account's player sits in, that field alone: a room
        saved while the owner changes their handle or settings undoes neither."""

    async def delete_account(self, account: str) -> None:
        """Forget the account and everything it holds (devices, passkeys, codes,
        friendships, history, ratings and their charts); its player id is
        remembered as deleted."""

    async def is_deleted(self, player: str) -> bool: ...

    # -- devices (signed-in browsers and clients) --------------------------------
    async def add_device(self, token_hash: str, device: Device) -> None: ...

    async def device_by_token(self, token_hash: str) -> Device | None: ...

    async def devices(self, account: str) -> list[Device]: ...

    async def touch_device(self, device: str, t: float) -> None:
        """Note a sign-in's time as the device's last use."""

    async def remove_device(self, device: str) -> bool:
        """Sign one device out: its token stops working at once."""

    # -- one-time codes --------------------------------------------------------
    async def put_link_code(self, code_hash: str, link: LinkCode) -> None: ...

    async def take_link_code(self, code_hash: str) -> LinkCode | None:
        """The code's link, removed in the same step: a code works once. Whether
        it has expired is the caller's to judge, by the server's clock (a store
        may forget it sooner: Redis drops it at ``expires``, by its own clock)."""

    async def set_recovery_codes(self, account: str, code_hashes: list[str]) -> None:
        """Replace the account's recovery codes."""

    async def take_recovery_code(self, code_hash: str) -> str | None:
        """The account the code belongs to, the code removed in the same step."""

    async def recovery_codes_left(self, account: str) -> int: ...

    # -- passkeys --------------------------------------------------------------
    async def add_passkey(self, passkey: Passkey) -> bool:
        """False when the credential id is registered already (to anyone)."""

    async def passkey(self, credential_id: bytes) -> Passkey | None: ...

    async def passkeys(self, account: str) -> list[Passkey]: ...

    async def use_passkey(self, credential_id: bytes, sign_count: int, t: float) -> bool:
        """Move the signature counter on, atomically: False (nothing written) when
        ``sign_count`` does not exceed the stored one (a cloned or replayed
        authenticator), unless both are 0 (authenticators without a counter)."""

    async def remove_passkey(self, credential_id: bytes) -> bool: ...

    # -- history (by public player id: a guest's results move with it) -------------
    async def add_history(
        self, player: str, deals: list[DealEntry], rounds: list[RoundEntry]
    ) -> None:
        """Keep entries; one already kept under the same ``key`` is left as it is
        (so folding a room again after a restart writes nothing twice), and the
        ladder totals count each entry once. Nothing is kept for the player of a
        deleted account (a room still open, or rebuilt, brings nothing back)."""

    async def deal_history(self, player: str, before: float | None, limit: int) -> list[DealEntry]:
        """Newest first, ended strictly before ``before`` (None: from the newest)."""

    async def round_history(
        self, player: str, before: float | None, limit: int
    ) -> list[RoundEntry]: ...

    async def totals(self, player: str) -> list[LadderTotals]:
        """Per ladder, by ladder name."""

    async def weeks(self, player: str, since: float) -> list[LadderTotals]:
        """Per week from the week of ``since`` on, oldest first; each named by
        ``WEEK`` and its Monday (weeks without a deal are not there)."""

    async def put_replay(self, key: str, replay: bytes, expires: float) -> None:
        """A past deal's revealed boards and move logs, kept until ``expires``."""

    async def replay(self, key: str) -> bytes | None: ...

    # -- friends ---------------------------------------------------------------
    async def set_friendship(self, friendship: Friendship) -> None: ...

    async def remove_friendship(self, a: str, b: str) -> bool: ...

    async def friendships(self, account: str) -> list[Friendship]:
        """Every friendship and open request the account is part of."""

    async def set_friend_link(self, account: str, link_hash: str) -> None:
        """The account's friend link (a new one replaces the old)."""

    async def friend_link(self, link_hash: str) -> str | None:
        """The account a friend link belongs to."""

    # -- ratings (server/ratings/model.py; per ladder and player id) ------------
    async def ratings(self, ladder: str, players: Iterable[str]) -> dict[str, Rating]:
        """The stored ratings of those of ``players`` who have one on ``ladder``."""

    async def apply_rated_round(
        self, rnd: RatedRound, seen: dict[str, int], after: dict[str, Rating]
    ) -> Applied:
        """Log the round on its ladder and write its players' ratings ``after``
        it, in one step and once per ``rnd.key``: ``ALREADY`` (nothing written)
        when the key is logged; ``STALE`` (nothing written) when a player's
        stored count of rated rounds is not the ``seen`` one the ratings were
        computed from (another round rated them meanwhile: read and rate again).
        A deleted account's player is in the log's placings (the others'
        ratings depend on them) but gets no rating nor chart."""

    async def rated_round(self, key: str) -> RatedRound | None: ...

    async def rated_rounds(self, ladder: str) -> list[RatedRound]:
        """The ladder's log, in the order its rounds were applied."""

    async def replace_ladder(
        self, ladder: str, rounds: list[RatedRound], read: Sequence[str]
    ) -> bool:
        """The ladder's log becomes ``rounds`` and its ratings and charts their
        replay (model.py ``replay_with_chart``), in one step: an operator's
        removal of a result. Deleted accounts' players get no rating back.
        Only while the log still holds the round keys ``read``, in that order
        (what the caller replayed): False, nothing written, when a round was
        applied (or removed) since, in the same step as :meth:`apply_rated_round`
        writes its round, so neither undoes the other."""

    async def ladder_table(self, ladder: str, start: int, count: int) -> list[Standing]:
        """Rows ``start`` … ``start + count - 1`` of the table (model.py
        ``table_order``)."""

    async def ladder_position(self, ladder: str, player: str) -> int | None:
        """The player's row in the table (0 is the top), None when unrated."""

    async def rating_chart(self, ladder: str, player: str) -> list[ChartPoint]:
        """The shown rating after each of the player's rated rounds, oldest first."""

    async def close(self) -> None: ...
