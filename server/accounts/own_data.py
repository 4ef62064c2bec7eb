"""A player's control over their data: all of it handed over, or all of it gone.

**Export** reads everything the store keeps about an account, and nothing that
is a secret: devices without their token hashes, passkeys with their public
keys and counters (the private half never reached the server), recovery codes
by how many are left.

**Deletion** forgets the account in one store step (``delete_account``:
devices, passkeys, codes, friendships, history), and before that withdraws the
challenges it made (server/challenges/store.py ``withdraw``) and takes its
name out of what other players keep: the replays of the deals it played. The
rename happens where a name is *kept*, not where it is sent. The server sends a
player's name from many places (a room's views and events to each member, its
sheets, the replays of past deals, the friends lists), most of them pure code
with no store to ask whether a player is gone; a name rewritten once where it
is kept is right in every one of them, now and after a restart, and the old
handle is no longer in the store at all. So there are exactly two places a
name is kept that outlive the account: a room still open (the handlers write a
``renamed`` record to it, server/core/records.py) and the kept replays (here).
A friends list needs nothing: the friendships are gone with the account.
"""

from __future__ import annotations

import base64
import dataclasses
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]

from protocol.names import DELETED_PLAYER

from ..ratings.model import every_ladder
from .history import REPLAY_DAYS, read_replay
from .model import Account, DealEntry, FriendState, RoundEntry
from .service import account_view
from .store import AccountStore

__all__ = ["every_deal", "every_round", "export", "forget"]

_PAGE = 500

_E = TypeVar("_E", DealEntry, RoundEntry)


async def _every(read: Callable[[float | None, int], Awaitable[list[_E]]]) -> list[_E]:
    """Every entry, newest first. Pages are read by time, strictly before the
    last one seen; entries at the same moment as a page's last are read again
    (a page starts just after it) and kept once, by key."""
    found: dict[str, _E] = {}
    before: float | None = None
    while True:
        page = await read(before, _PAGE)
        new = [e for e in page if e.key not in found]
        found.update((e.key, e) for e in new)
        if len(page) < _PAGE or not new:
            break
        before = math.nextafter(page[-1].t, math.inf)
    return sorted(found.values(), key=lambda e: (e.t, e.key), reverse=True)


async def every_deal(store: AccountStore, player: str) -> list[DealEntry]:
    return await _every(lambda before, limit: store.deal_history(player, before, limit))


async def every_round(store: AccountStore, player: str) -> list[RoundEntry]:
    return await _every(lambda before, limit: store.round_history(player, before, limit))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _plain(entry: DealEntry | RoundEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in entry.__dataclass_fields__}


async def export(store: AccountStore, account: Account, now: float) -> dict[str, Any]:
    """Everything kept about ``account``, as JSON-able data."""
    devices = await store.devices(account.account)
    passkeys = await store.passkeys(account.account)
    friends: list[dict[str, Any]] = []
    for friendship in await store.friendships(account.account):
        other_id = friendship.b if friendship.a == account.account else friendship.a
        other = await store.account(other_id)
        if other is None:
            continue
        if friendship.state == FriendState.FRIENDS:
            state = "friends"
        else:
            state = "asked" if friendship.a == account.account else "asking"
        friends.append({"handle": other.handle, "state": state, "since": friendship.since})
    totals = await store.totals(account.player)
    return {
        "exported": now,
        "account": account_view(account) | {"room": account.room_code},
        "devices": [
            {"device": d.device, "label": d.label, "created": d.created, "last_used": d.last_used}
            for d in devices
        ],
        "passkeys": [
            {
                "id": _b64(p.credential_id),
                "label": p.label,
                "created": p.created,
                "last_used": p.last_used,
                "public_key": _b64(p.public_key),
                "sign_count": p.sign_count,
            }
            for p in passkeys
        ],
        "recovery_codes_left": await store.recovery_codes_left(account.account),
        "friends": friends,
        "totals": [
            {
                "ladder": t.ladder,
                "deals": t.deals,
                "wins": t.wins,
                "best_seconds": t.best_seconds,
                "moves": t.moves,
                "score": t.score,
            }
            for t in totals
        ],
        "deals": [_plain(e) for e in await every_deal(store, account.player)],
        "rounds": [_plain(e) for e in await every_round(store, account.player)],
        "ratings": await _ratings(store, account.player),
    }


async def _ratings(store: AccountStore, player: str) -> list[dict[str, Any]]:
    """Per ladder rated on: the model's numbers as kept, and the chart."""
    out = []
    for ladder in every_ladder():
        rating = (await store.ratings(ladder, [player])).get(player)
        if rating is not None:
            chart = [p.to_wire() for p in await store.rating_chart(ladder, player)]
            out.append({"ladder": ladder, **dataclasses.asdict(rating), "chart": chart})
    return out


async def _unname_replays(store: AccountStore, player: str, deals: Sequence[DealEntry]) -> None:
    """The kept replays of ``deals`` name ``player`` as a deleted player; each
    kept as long as it was to be kept (its deal's end and the replay days)."""
    for entry in deals:
        data = await store.replay(entry.key)
        if data is None:
            continue
        replay = read_replay(data)
        names = replay.get("names")
        if not isinstance(names, dict) or player not in names:
            continue
        names[player] = DELETED_PLAYER
        packed: bytes = msgpack.packb(replay, use_bin_type=True)
        await store.put_replay(entry.key, packed, entry.t + REPLAY_DAYS * 86_400)


async def forget(store: AccountStore, account: Account) -> None:
    """The account gone: its name out of the replays others keep, then every
    record of it in one store step."""
    await _unname_replays(store, account.player, await every_deal(store, account.player))
    await store.delete_account(account.account)
