"""Every account store keeps the same promises (server/accounts/store.py): the
in-memory one and SQLite on a real file, through the same checks; SQLite's
survive closing and opening the file again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.accounts.memory import MemoryAccounts
from server.accounts.model import (
    Account,
    DealEntry,
    Device,
    Friendship,
    FriendState,
    LinkCode,
    Passkey,
    RoundEntry,
    handle_key,
)
from server.accounts.sqlite import SqliteAccounts
from server.accounts.store import AccountStore, LadderTotals
from server.store.base import StoreUnavailable


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AccountStore]:
    made: AccountStore = (
        MemoryAccounts() if request.param == "memory" else await SqliteAccounts.at(tmp_path)
    )
    try:
        yield made
    finally:
        await made.close()


def ann(**changes: object) -> Account:
    base = {"account": "a1", "player": "pANN", "handle": "Ann", "created": 10.0,
            "handle_changed": 10.0}  # fmt: skip
    return Account(**(base | changes))  # type: ignore[arg-type]


async def test_a_handle_and_a_player_hold_one_account_each(store: AccountStore) -> None:
    assert await store.create_account(ann())
    assert not await store.create_account(ann(account="a2", player="pOTHER", handle="ANN"))
    assert not await store.create_account(ann(account="a2", handle="Bea"))
    assert await store.account_by_handle(handle_key("aNN")) == ann()
    assert await store.account_by_player("pANN") == ann()
    assert await store.create_account(ann(account="a2", player="pBEA", handle="Bea"))
    assert not await store.update_account(ann(handle="bea"))  # taken
    assert await store.update_account(ann(handle="Anne", room_code="ABCDEF"))
    assert await store.account_by_handle("ann") is None
    assert (await store.account("a1")) == ann(handle="Anne", room_code="ABCDEF")


async def test_devices_and_their_tokens(store: AccountStore) -> None:
    await store.create_account(ann())
    one, two = Device("d1", "a1", "cli", 1.0, 1.0), Device("d2", "a1", "web", 2.0, 2.0)
    await store.add_device("h1", one)
    await store.add_device("h2", two)
    assert await store.device_by_token("h1") == one
    await store.touch_device("d1", 5.0)
    assert [d.last_used for d in await store.devices("a1")] == [5.0, 2.0]
    assert await store.remove_device("d1")
    assert not await store.remove_device("d1")
    assert await store.device_by_token("h1") is None
    assert await store.devices("a1") == [two]


async def test_codes_are_taken_once(store: AccountStore) -> None:
    await store.put_link_code("L", LinkCode("a1", 99.0))
    assert await store.take_link_code("L") == LinkCode("a1", 99.0)
    assert await store.take_link_code("L") is None
    await store.set_recovery_codes("a1", ["r1", "r2"])
    assert await store.recovery_codes_left("a1") == 2
    assert await store.take_recovery_code("r1") == "a1"
    assert await store.take_recovery_code("r1") is None
    await store.set_recovery_codes("a1", ["r3"])
    assert await store.take_recovery_code("r2") is None
    assert await store.recovery_codes_left("a1") == 1


async def test_passkey_counters_only_move_on(store: AccountStore) -> None:
    key = Passkey(b"\x01cred", "a1", b"pk", 3, "phone", 1.0)
    assert await store.add_passkey(key)
    assert not await store.add_passkey(key)
    assert not await store.use_passkey(b"\x01cred", 3, 2.0)
    assert await store.use_passkey(b"\x01cred", 4, 2.0)
    found = await store.passkey(b"\x01cred")
    assert found is not None and (found.sign_count, found.last_used) == (4, 2.0)
    zero = Passkey(b"z", "a1", b"pk", 0, "key", 1.0)
    await store.add_passkey(zero)
    assert await store.use_passkey(b"z", 0, 3.0)
    assert len(await store.passkeys("a1")) == 2
    assert await store.remove_passkey(b"z")


async def test_history_counts_each_entry_once(store: AccountStore) -> None:
    won = DealEntry("R1/1/1", 100.0, "R1", 1, 1, "d1", {"draw": 1}, result="won", seconds=90.0,
                    moves=80, score=500)  # fmt: skip
    lost = DealEntry("R1/1/2", 200.0, "R1", 1, 2, "d1", result="resigned", moves=20, score=-10)
    rnd = RoundEntry("R1/1", 200.0, "R1", 1, 2, 490, 1, False, ["pBEA"])
    await store.add_history("pANN", [won], [])
    await store.add_history("pANN", [won, lost], [rnd, rnd])
    assert await store.deal_history("pANN", None, 10) == [lost, won]
    assert await store.deal_history("pANN", 200.0, 10) == [won]
    assert await store.round_history("pANN", None, 10) == [rnd]
    assert await store.totals("pANN") == [LadderTotals("d1", 2, 1, 90.0, 100, 490)]


async def test_friends_and_deletion(store: AccountStore) -> None:
    await store.create_account(ann())
    await store.create_account(ann(account="a2", player="pBEA", handle="Bea"))
    asked = Friendship("a1", "a2", FriendState.ASKED, 1.0)
    await store.set_friendship(asked)
    assert await store.friendships("a2") == [asked]
    friends = Friendship("a1", "a2", FriendState.FRIENDS, 2.0)
    await store.set_friendship(friends)
    assert await store.friendships("a1") == [friends]
    await store.set_friend_link("a1", "f1")
    await store.set_friend_link("a1", "f2")
    assert (await store.friend_link("f1"), await store.friend_link("f2")) == (None, "a1")
    await store.add_device("h1", Device("d1", "a1", "cli", 1.0, 1.0))
    await store.delete_account("a1")
    assert await store.is_deleted("pANN")
    assert await store.account("a1") is None and await store.account_by_handle("ann") is None
    assert await store.device_by_token("h1") is None
    assert await store.friendships("a2") == []
    assert await store.create_account(ann(account="a3", player="pNEW"))  # the handle is free
    assert await store.remove_friendship("a2", "a1") is False


async def test_sqlite_keeps_everything_across_a_reopen_and_locks_its_directory(
    tmp_path: Path,
) -> None:
    first = await SqliteAccounts.at(tmp_path)
    await first.create_account(ann())
    await first.add_device("h1", Device("d1", "a1", "cli", 1.0, 1.0))
    with pytest.raises(StoreUnavailable):
        await SqliteAccounts.at(tmp_path)
    await first.close()
    again = await SqliteAccounts.at(tmp_path)
    try:
        assert await again.account_by_player("pANN") == ann()
        assert await again.device_by_token("h1") == Device("d1", "a1", "cli", 1.0, 1.0)
    finally:
        await again.close()
