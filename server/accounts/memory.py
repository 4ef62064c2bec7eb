"""Accounts in this process's memory (``serve --memory``): nothing survives a restart.

Every method completes before it returns and nothing awaits in between, so each
one is a single step of the event loop: a code taken here cannot be taken twice,
which is the atomicity the store's interface asks for.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence

from ..ratings.model import (
    Applied,
    ChartPoint,
    RatedRound,
    Rating,
    Standing,
    chart_points,
    replay_with_chart,
    shown,
    table_order,
)
from .model import Account, DealEntry, Device, Friendship, LinkCode, Passkey, RoundEntry, handle_key
from .store import LadderTotals, add_to_totals, ladders_of, tallies, weeks_of

__all__ = ["MemoryAccounts"]


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


class MemoryAccounts:
    """:class:`~server.accounts.store.AccountStore` in dictionaries."""

    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}
        self._by_handle: dict[str, str] = {}  # handle_key -> account id
        self._by_player: dict[str, str] = {}  # player id -> account id
        self._deleted: set[str] = set()  # player ids of deleted accounts
        self._devices: dict[str, tuple[str, Device]] = {}  # device id -> (token hash, device)
        self._by_token: dict[str, str] = {}  # token hash -> device id
        self._links: dict[str, LinkCode] = {}
        self._recovery: dict[str, str] = {}  # code hash -> account id
        self._passkeys: dict[bytes, Passkey] = {}
        self._deals: dict[str, dict[str, DealEntry]] = {}  # player -> key -> entry
        self._rounds: dict[str, dict[str, RoundEntry]] = {}
        self._totals: dict[str, dict[str, LadderTotals]] = {}  # player -> ladder -> totals
        self._replays: dict[str, tuple[bytes, float]] = {}
        self._friendships: dict[tuple[str, str], Friendship] = {}
        self._friend_links: dict[str, str] = {}  # link hash -> account
        self._link_of: dict[str, str] = {}  # account -> its link hash
        self._ratings: dict[str, dict[str, Rating]] = {}  # ladder -> player -> rating
        self._rated: dict[str, list[RatedRound]] = {}  # ladder -> its log
        self._rated_keys: dict[str, RatedRound] = {}
        self._charts: dict[tuple[str, str], list[ChartPoint]] = {}  # (ladder, player)

    # -- accounts --------------------------------------------------------------
    async def create_account(self, account: Account) -> bool:
        key = handle_key(account.handle)
        if (
            key in self._by_handle
            or account.player in self._by_player
            or account.account in self._accounts
        ):
            return False
        self._accounts[account.account] = account
        self._by_handle[key] = account.account
        self._by_player[account.player] = account.account
        return True

    async def account(self, account: str) -> Account | None:
        return self._accounts.get(account)

    async def account_by_handle(self, key: str) -> Account | None:
        found = self._by_handle.get(key)
        return self._accounts.get(found) if found is not None else None

    async def account_by_player(self, player: str) -> Account | None:
        found = self._by_player.get(player)
        return self._accounts.get(found) if found is not None else None

    async def handles(self, players: Sequence[str]) -> dict[str, str]:
        found = {p: self._accounts.get(self._by_player.get(p, "")) for p in players}
        return {p: a.handle for p, a in found.items() if a is not None}

    async def players(self, accounts: Sequence[str]) -> dict[str, str]:
        found = {a: self._accounts.get(a) for a in accounts}
        return {a: acc.player for a, acc in found.items() if acc is not None}

    async def update_account(self, account: Account) -> bool:
        old = self._accounts.get(account.account)
        if old is None:
            return False
        old_key, new_key = handle_key(old.handle), handle_key(account.handle)
        if new_key != old_key:
            if new_key in self._by_handle:
                return False
            del self._by_handle[old_key]
            self._by_handle[new_key] = account.account
        self._accounts[account.account] = account
        return True

    async def set_room(self, account: str, room_code: str | None) -> None:
        found = self._accounts.get(account)
        if found is not None:
            self._accounts[account] = dataclasses.replace(found, room_code=room_code)

    async def delete_account(self, account: str) -> None:
        found = self._accounts.pop(account, None)
        if found is None:
            return
        self._by_handle.pop(handle_key(found.handle), None)
        self._by_player.pop(found.player, None)
        self._deleted.add(found.player)
        for device_id, (token_hash, device) in list(self._devices.items()):
            if device.account == account:
                del self._devices[device_id]
                self._by_token.pop(token_hash, None)
        self._links = {h: link for h, link in self._links.items() if link.account != account}
        self._recovery = {h: a for h, a in self._recovery.items() if a != account}
        self._passkeys = {c: p for c, p in self._passkeys.items() if p.account != account}
        self._friendships = {
            k: f for k, f in self._friendships.items() if account not in (f.a, f.b)
        }
        link = self._link_of.pop(account, None)
        if link is not None:
            self._friend_links.pop(link, None)
        for table in (self._deals, self._rounds, self._totals):
            table.pop(found.player, None)
        for kept in self._ratings.values():
            kept.pop(found.player, None)
        self._charts = {k: v for k, v in self._charts.items() if k[1] != found.player}

    async def is_deleted(self, player: str) -> bool:
        return player in self._deleted

    # -- devices ---------------------------------------------------------------
    async def add_device(self, token_hash: str, device: Device) -> None:
        self._devices[device.device] = (token_hash, device)
        self._by_token[token_hash] = device.device

    async def device_by_token(self, token_hash: str) -> Device | None:
        found = self._by_token.get(token_hash)
        return self._devices[found][1] if found is not None else None

    async def devices(self, account: str) -> list[Device]:
        found = [d for _, d in self._devices.values() if d.account == account]
        return sorted(found, key=lambda d: (d.created, d.device))

    async def touch_device(self, device: str, t: float) -> None:
        found = self._devices.get(device)
        if found is not None:
            self._devices[device] = (found[0], dataclasses.replace(found[1], last_used=t))

    async def remove_device(self, device: str) -> bool:
        found = self._devices.pop(device, None)
        if found is None:
            return False
        self._by_token.pop(found[0], None)
        return True

    # -- one-time codes ----------------------------------------------------------
    async def put_link_code(self, code_hash: str, link: LinkCode) -> None:
        self._links[code_hash] = link

    async def take_link_code(self, code_hash: str) -> LinkCode | None:
        return self._links.pop(code_hash, None)

    async def set_recovery_codes(self, account: str, code_hashes: list[str]) -> None:
        self._recovery = {h: a for h, a in self._recovery.items() if a != account}
        for code_hash in code_hashes:
            self._recovery[code_hash] = account

    async def take_recovery_code(self, code_hash: str) -> str | None:
        return self._recovery.pop(code_hash, None)

    async def recovery_codes_left(self, account: str) -> int:
        return sum(1 for a in self._recovery.values() if a == account)

    # -- passkeys ----------------------------------------------------------------
    async def add_passkey(self, passkey: Passkey) -> bool:
        if passkey.credential_id in self._passkeys:
            return False
        self._passkeys[passkey.credential_id] = passkey
        return True

    async def passkey(self, credential_id: bytes) -> Passkey | None:
        return self._passkeys.get(credential_id)

    async def passkeys(self, account: str) -> list[Passkey]:
        found = [p for p in self._passkeys.values() if p.account == account]
        return sorted(found, key=lambda p: (p.created, p.credential_id))

    async def use_passkey(self, credential_id: bytes, sign_count: int, t: float) -> bool:
        found = self._passkeys.get(credential_id)
        if found is None:
            return False
        if sign_count <= found.sign_count and not (sign_count == 0 and found.sign_count == 0):
            return False
        self._passkeys[credential_id] = dataclasses.replace(
            found, sign_count=sign_count, last_used=t
        )
        return True

    async def remove_passkey(self, credential_id: bytes) -> bool:
        return self._passkeys.pop(credential_id, None) is not None

    # -- history -----------------------------------------------------------------
    async def add_history(
        self, player: str, deals: list[DealEntry], rounds: list[RoundEntry]
    ) -> None:
        if player in self._deleted:
            return  # a room folded after the deletion brings nothing back
        kept = self._deals.setdefault(player, {})
        totals = self._totals.setdefault(player, {})
        for entry in deals:
            if entry.key in kept:
                continue
            kept[entry.key] = entry
            for tally in tallies(entry):
                totals[tally] = add_to_totals(totals.get(tally), entry, tally)
        kept_rounds = self._rounds.setdefault(player, {})
        for round_entry in rounds:
            kept_rounds.setdefault(round_entry.key, round_entry)

    async def deal_history(self, player: str, before: float | None, limit: int) -> list[DealEntry]:
        entries = self._deals.get(player, {}).values()
        found = [e for e in entries if before is None or e.t < before]
        return sorted(found, key=lambda e: (e.t, e.key), reverse=True)[:limit]

    async def round_history(
        self, player: str, before: float | None, limit: int
    ) -> list[RoundEntry]:
        entries = self._rounds.get(player, {}).values()
        found = [e for e in entries if before is None or e.t < before]
        return sorted(found, key=lambda e: (e.t, e.key), reverse=True)[:limit]

    async def totals(self, player: str) -> list[LadderTotals]:
        return ladders_of(self._totals.get(player, {}).values())

    async def weeks(self, player: str, since: float) -> list[LadderTotals]:
        return weeks_of(self._totals.get(player, {}).values(), since)

    async def put_replay(self, key: str, replay: bytes, expires: float) -> None:
        self._replays[key] = (replay, expires)

    async def replay(self, key: str) -> bytes | None:
        found = self._replays.get(key)
        if found is None or found[1] <= time.time():
            self._replays.pop(key, None)
            return None
        return found[0]

    # -- friends -----------------------------------------------------------------
    async def set_friendship(self, friendship: Friendship) -> None:
        self._friendships[_pair(friendship.a, friendship.b)] = friendship

    async def remove_friendship(self, a: str, b: str) -> bool:
        return self._friendships.pop(_pair(a, b), None) is not None

    async def friendships(self, account: str) -> list[Friendship]:
        found = [f for f in self._friendships.values() if account in (f.a, f.b)]
        return sorted(found, key=lambda f: (f.since, f.a, f.b))

    async def set_friend_link(self, account: str, link_hash: str) -> None:
        old = self._link_of.pop(account, None)
        if old is not None:
            self._friend_links.pop(old, None)
        self._friend_links[link_hash] = account
        self._link_of[account] = link_hash

    async def friend_link(self, link_hash: str) -> str | None:
        return self._friend_links.get(link_hash)

    # -- ratings ---------------------------------------------------------------
    async def ratings(self, ladder: str, players: Iterable[str]) -> dict[str, Rating]:
        kept = self._ratings.get(ladder, {})
        return {p: kept[p] for p in players if p in kept}

    async def apply_rated_round(
        self, rnd: RatedRound, seen: dict[str, int], after: dict[str, Rating]
    ) -> Applied:
        if rnd.key in self._rated_keys:
            return Applied.ALREADY
        kept = self._ratings.setdefault(rnd.ladder, {})
        if any((kept[p].rounds if p in kept else 0) != seen.get(p, 0) for p in after):
            return Applied.STALE
        self._rated_keys[rnd.key] = rnd
        self._rated.setdefault(rnd.ladder, []).append(rnd)
        after = {p: r for p, r in after.items() if p not in self._deleted}
        kept.update(after)
        for p, point in chart_points(rnd, after).items():
            self._charts.setdefault((rnd.ladder, p), []).append(point)
        return Applied.NEW

    async def rated_round(self, key: str) -> RatedRound | None:
        return self._rated_keys.get(key)

    async def rated_rounds(self, ladder: str) -> list[RatedRound]:
        return list(self._rated.get(ladder, []))

    async def replace_ladder(
        self, ladder: str, rounds: list[RatedRound], read: Sequence[str]
    ) -> bool:
        if [r.key for r in self._rated.get(ladder, [])] != list(read):
            return False
        ratings, charts = replay_with_chart(rounds)
        ratings = {p: r for p, r in ratings.items() if p not in self._deleted}
        charts = {p: c for p, c in charts.items() if p not in self._deleted}
        for old in self._rated.get(ladder, []):
            self._rated_keys.pop(old.key, None)
        self._rated[ladder] = list(rounds)
        self._rated_keys.update((r.key, r) for r in rounds)
        self._ratings[ladder] = ratings
        self._charts = {k: v for k, v in self._charts.items() if k[0] != ladder}
        self._charts.update(((ladder, p), points) for p, points in charts.items())
        return True

    def _table(self, ladder: str) -> list[tuple[str, Rating]]:
        kept = self._ratings.get(ladder, {})
        return sorted(kept.items(), key=lambda pr: table_order(*pr))

    async def ladder_table(self, ladder: str, start: int, count: int) -> list[Standing]:
        rows = self._table(ladder)[max(start, 0) : max(start, 0) + max(count, 0)]
        return [Standing(p, shown(r), r.rounds, r.provisional) for p, r in rows]

    async def ladder_position(self, ladder: str, player: str) -> int | None:
        for i, (p, _) in enumerate(self._table(ladder)):
            if p == player:
                return i
        return None

    async def rating_chart(self, ladder: str, player: str) -> list[ChartPoint]:
        return list(self._charts.get((ladder, player), []))

    async def close(self) -> None:
        return None
