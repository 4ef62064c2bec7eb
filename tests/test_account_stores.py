"""The account stores' contract (server/accounts/store.py), asserted alike for
every store in ``STORES``: what each promise means is written once, here.

Each store comes with a backend the test owns (nothing for the in-memory store,
a data directory for SQLite, a redis-server of its own on a free port, appendonly
with fsync always, for Redis). Stores whose data outlives a crash of their
backend are also run through a crash (``LASTING``), and those whose backend can
be taken away through an outage (``FAILING``). At the end, each store's own
promises: SQLite's directory lock; Redis's keys, two nodes racing on one Redis,
a frozen Redis.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import ClassVar, TypeVar

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
    new_code,
    new_device_token,
    secret_hash,
)
from server.accounts.redis import RedisAccounts
from server.accounts.sqlite import SqliteAccounts
from server.accounts.store import AccountStore, LadderTotals
from server.ratings.model import (
    Applied,
    RatedRound,
    Rating,
    rate_round,
    replay,
    replay_with_chart,
    shown,
)
from server.ratings.operator import remove_result
from server.store.base import StoreUnavailable, StoreUncertain
from tests.support.processes import RedisServer
from tests.support.redis_proxy import RedisProxy
from tests.support.waiting import eventually

T = TypeVar("T")

T0 = 1_796_200_000.123457  # times with every digit a float holds: kept exactly


class Backend:
    """A store kind and the backend it runs on, owned by one test."""

    name: ClassVar[str]
    lasting: ClassVar[bool] = False  # acknowledged writes survive a crash of the backend
    failing: ClassVar[bool] = False  # the backend can be taken away and brought back

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    async def open(self) -> AccountStore:
        """A store on this backend (as a node opens it when it starts)."""
        raise NotImplementedError

    async def crash(self) -> None:
        """The backend dies at once (kill -9) and is started again."""
        raise NotImplementedError

    async def take_away(self) -> None:
        """The backend is gone until :meth:`bring_back`, and every open store
        knows it (so a refusal is certain, not a timeout)."""
        raise NotImplementedError

    async def bring_back(self) -> None:
        raise NotImplementedError

    async def finish(self) -> None:
        raise NotImplementedError


class RedisBackend(Backend):
    name = "redis"
    lasting = True
    failing = True

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.redis = RedisServer(directory / "redis")
        self.redis.start()
        self.stores: list[RedisAccounts] = []

    async def open(self) -> RedisAccounts:
        store = RedisAccounts("127.0.0.1", self.redis.port, timeout=2.0)
        await store.connect()
        self.stores.append(store)
        return store

    async def crash(self) -> None:
        self.redis.kill()
        self.redis.start()  # same port and directory: it replays its append-only file

    async def take_away(self) -> None:
        self.redis.kill()
        for store in self.stores:
            await eventually(lambda s=store: not s.connected, what="the store to notice")

    async def bring_back(self) -> None:
        self.redis.start()

    async def finish(self) -> None:
        for store in self.stores:
            await store.close()
        self.redis.kill()


class MemoryBackend(Backend):
    name = "memory"

    async def open(self) -> MemoryAccounts:
        return MemoryAccounts()

    async def finish(self) -> None:
        pass


class SqliteBackend(Backend):
    """SQLite in a data directory. Its crash: a new directory holding the files
    as a ``kill -9`` leaves them (copied while the store is open and idle, so
    the write-ahead log is not folded in as a clean close would), opened anew."""

    name = "sqlite"
    lasting = True

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.data = directory / "data"
        self.crashes = 0
        self.stores: list[SqliteAccounts] = []

    async def open(self) -> SqliteAccounts:
        store = await SqliteAccounts.at(self.data)
        self.stores.append(store)
        return store

    async def crash(self) -> None:
        self.crashes += 1
        left = self.dir / f"data-after-crash-{self.crashes}"
        shutil.copytree(self.data, left)
        (left / "accounts.lock").unlink()
        assert (left / "accounts.sqlite3-wal").stat().st_size > 0  # not folded in
        self.data = left

    async def finish(self) -> None:
        for store in self.stores:
            await store.close()


STORES: list[type[Backend]] = [MemoryBackend, SqliteBackend, RedisBackend]
LASTING = [kind for kind in STORES if kind.lasting]
FAILING = [kind for kind in STORES if kind.failing]


def _name(kind: type[Backend]) -> str:
    return kind.name


@pytest.fixture(params=STORES, ids=_name)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    kind: type[Backend] = request.param
    made = kind(tmp_path)
    try:
        yield made
    finally:
        await made.finish()


@pytest.fixture
async def store(backend: Backend) -> AccountStore:
    return await backend.open()


# -- what the tests store ----------------------------------------------------------


def account(n: int, handle: str | None = None, **changes: object) -> Account:
    fields: dict[str, object] = {
        "account": f"a{n:04d}",
        "player": f"p{n:04d}",
        "handle": handle if handle is not None else f"Player {n}",
        "created": T0 + n,
        "handle_changed": T0 + n,
    }
    fields.update(changes)
    return Account(**fields)  # type: ignore[arg-type]


def device(n: int, owner: Account, label: str = "Firefox on Linux") -> Device:
    return Device(f"dev{n}", owner.account, label, T0 + n, T0 + n)


def passkey(n: int, owner: Account, sign_count: int = 0) -> Passkey:
    return Passkey(
        credential_id=bytes([n, 0, 255, 10, 13]) + b"\x00cred",
        account=owner.account,
        public_key=b"\x04" + bytes(range(64)),
        sign_count=sign_count,
        label=f"key {n} 🔑",
        created=T0 + n,
    )


def deal(
    n: int,
    *,
    ladder: str = "draw1",
    result: str = "won",
    seconds: float | None = 100.5,
    moves: int = 100,
    score: int = 500,
    t: float | None = None,
) -> DealEntry:
    return DealEntry(
        key=f"ROOM01/1/{n}",
        t=T0 + n if t is None else t,
        room="ROOM01",
        round=1,
        deal=n,
        ladder=ladder,
        rules={"draw": 1, "passes": None, "timer": 300.25, "names": ["Åse", "日本"]},
        scoring="standard",
        placing=1,
        tied=False,
        score=score,
        bonus=7,
        seconds=seconds if result == "won" else None,
        moves=moves,
        result=result,
        players=3,
    )


def round_entry(n: int) -> RoundEntry:
    return RoundEntry(
        key=f"ROOM01/{n}",
        t=T0 + n,
        room="ROOM01",
        round=n,
        deals=3,
        total=1500 + n,
        placing=2,
        tied=True,
        players=["p0002", "p0003"],
    )


async def exactly_one(calls: list[Awaitable[object]]) -> object:
    """Run ``calls`` at once; exactly one may succeed (truthy): that one's result."""
    results = await asyncio.gather(*calls)
    winners = [r for r in results if r]
    assert len(winners) == 1, results
    return winners[0]


# -- accounts and handles ------------------------------------------------------------


async def test_an_account_reads_back_exactly_by_id_handle_and_player(store: AccountStore) -> None:
    ann = account(1, "Åse 🂡", room_code="K7QX2M", shows_record=False)
    bob = account(2, "bob", shows_online=False)
    assert await store.create_account(ann)
    assert await store.create_account(bob)
    assert await store.account(ann.account) == ann
    assert await store.account_by_handle(handle_key("ÅSE 🂡")) == ann
    assert await store.account_by_player(bob.player) == bob
    assert await store.account("a9999") is None
    assert await store.account_by_handle("nobody here") is None
    assert await store.account_by_player("p9999") is None
    assert not await store.is_deleted(ann.player)
    # Many players' handles in one read: those without an account are left out.
    wanted = [bob.player, "p9999", ann.player, bob.player]
    assert await store.handles(wanted) == {ann.player: "Åse 🂡", bob.player: "bob"}
    assert await store.handles([]) == {}
    # Many accounts' players likewise (a friends table's).
    assert await store.players([bob.account, "a9999", ann.account]) == {
        ann.account: ann.player,
        bob.account: bob.player,
    }
    assert await store.players([]) == {}


async def test_a_handle_is_taken_once_whatever_its_case_or_unicode_form(
    store: AccountStore,
) -> None:
    composed = unicodedata.normalize("NFC", "Åsa")
    decomposed = unicodedata.normalize("NFD", "Åsa")
    assert composed != decomposed
    assert await store.create_account(account(1, composed))
    for n, handle in enumerate([decomposed, "åSA", "ÅSA", "åsa"], start=2):
        assert not await store.create_account(account(n, handle))
        assert await store.account(f"a{n:04d}") is None  # nothing written
        assert await store.account_by_player(f"p{n:04d}") is None
    # A player holds one account.
    assert not await store.create_account(account(9, "Other", player="p0001"))
    assert await store.account("a0009") is None
    assert await store.account_by_handle(handle_key("other")) is None
    assert (await store.account_by_handle(handle_key(decomposed))) == account(1, composed)


async def test_racing_claims_on_one_handle_one_wins(store: AccountStore) -> None:
    spellings = ["Zed", "ZED", "zed", "zEd"] * 5
    won = await exactly_one(
        [store.create_account(account(n, h)) for n, h in enumerate(spellings, start=1)]
    )
    assert won is True
    holder = await store.account_by_handle("zed")
    assert holder is not None
    for n in range(1, len(spellings) + 1):
        stored = await store.account(f"a{n:04d}")
        assert stored is None or stored == holder


async def test_update_moves_the_handle_claim_atomically(store: AccountStore) -> None:
    ann, bob = account(1, "Ann"), account(2, "Bob")
    assert await store.create_account(ann)
    assert await store.create_account(bob)
    # Settings and room change; the handle's case may change (the same key).
    ann2 = account(1, "ANN", room_code="ROOMAA", shows_online=False, handle_changed=T0 + 50)
    assert await store.update_account(ann2)
    assert await store.account(ann.account) == ann2
    assert await store.account_by_handle("ann") == ann2
    # A handle someone holds is refused, nothing written.
    assert not await store.update_account(account(1, "bOB", handle_changed=T0 + 60))
    assert await store.account(ann.account) == ann2
    assert await store.account_by_handle("bob") == bob
    # A free handle: claimed, and the old one freed in the same step.
    ann3 = account(1, "Annabel", handle_changed=T0 + 70)
    assert await store.update_account(ann3)
    assert await store.account_by_handle("annabel") == ann3
    assert await store.account_by_handle("ann") is None
    assert await store.account_by_player(ann.player) == ann3
    assert await store.create_account(account(3, "ann"))
    # No such account: nothing to replace.
    assert not await store.update_account(account(7, "Ghost"))
    assert await store.account("a0007") is None
    assert await store.account_by_handle("ghost") is None


async def test_a_room_saved_touches_only_the_room(store: AccountStore) -> None:
    """A room saved from a stale read undoes no handle change made meanwhile."""
    ann = account(1, "Ann")
    assert await store.create_account(ann)
    renamed = account(1, "Annabel", shows_record=False, handle_changed=T0 + 50)
    assert await store.update_account(renamed)
    await store.set_room(ann.account, "ROOMAA")
    assert await store.account(ann.account) == dataclasses.replace(renamed, room_code="ROOMAA")
    assert await store.account_by_handle("ann") is None
    await store.set_room(ann.account, None)
    assert await store.account(ann.account) == renamed
    await store.set_room("a0009", "ROOMBB")  # no such account: nothing written
    assert await store.account("a0009") is None


async def test_racing_renames_to_one_handle_one_wins(store: AccountStore) -> None:
    people = [account(n) for n in range(1, 11)]
    for person in people:
        assert await store.create_account(person)
    await exactly_one(
        [store.update_account(account(n, "Winner", handle_changed=T0 + 99)) for n in range(1, 11)]
    )
    holder = await store.account_by_handle("winner")
    assert holder is not None
    for person in people:
        if person.account != holder.account:
            assert await store.account(person.account) == person


# -- devices -----------------------------------------------------------------------


async def test_devices_sign_in_by_token_hash_and_sign_out(store: AccountStore) -> None:
    ann, bob = account(1), account(2)
    await store.create_account(ann)
    await store.create_account(bob)
    tokens = [new_device_token() for _ in range(3)]
    phone, laptop = device(1, ann, "Phone ☎"), device(2, ann)
    await store.add_device(secret_hash(tokens[0]), phone)
    await store.add_device(secret_hash(tokens[1]), laptop)
    await store.add_device(secret_hash(tokens[2]), device(3, bob, "cli"))
    assert await store.device_by_token(secret_hash(tokens[0])) == phone
    assert await store.device_by_token(secret_hash(new_device_token())) is None
    assert await store.devices(ann.account) == [phone, laptop]
    await store.touch_device(phone.device, T0 + 500.25)
    touched = await store.device_by_token(secret_hash(tokens[0]))
    assert touched == Device(phone.device, ann.account, "Phone ☎", phone.created, T0 + 500.25)
    assert await store.remove_device(phone.device)
    assert await store.device_by_token(secret_hash(tokens[0])) is None  # at once
    assert not await store.remove_device(phone.device)
    assert await store.devices(ann.account) == [laptop]
    assert [d.label for d in await store.devices(bob.account)] == ["cli"]


# -- one-time codes ----------------------------------------------------------------


async def test_a_link_code_works_once(store: AccountStore) -> None:
    ann = account(1)
    await store.create_account(ann)
    code = new_code()
    link = LinkCode(ann.account, time.time() + 600.125)
    await store.put_link_code(secret_hash(code), link)
    assert await store.take_link_code(secret_hash(code.lower())) == link  # as typed
    assert await store.take_link_code(secret_hash(code)) is None
    assert await store.take_link_code(secret_hash(new_code())) is None


async def test_racing_takers_of_a_link_code_one_wins(store: AccountStore) -> None:
    ann = account(1)
    await store.create_account(ann)
    for _ in range(5):
        code = secret_hash(new_code())
        await store.put_link_code(code, LinkCode(ann.account, time.time() + 600))
        won = await exactly_one([store.take_link_code(code) for _ in range(20)])
        assert isinstance(won, LinkCode) and won.account == ann.account


async def test_recovery_codes_work_once_and_a_new_set_replaces_the_old(
    store: AccountStore,
) -> None:
    ann, bob = account(1), account(2)
    await store.create_account(ann)
    await store.create_account(bob)
    first = [new_code() for _ in range(10)]
    await store.set_recovery_codes(ann.account, [secret_hash(c) for c in first])
    await store.set_recovery_codes(bob.account, [secret_hash(new_code()) for _ in range(10)])
    assert await store.recovery_codes_left(ann.account) == 10
    assert await store.take_recovery_code(secret_hash(first[0])) == ann.account
    assert await store.take_recovery_code(secret_hash(first[0])) is None
    assert await store.recovery_codes_left(ann.account) == 9
    won = await exactly_one([store.take_recovery_code(secret_hash(first[1])) for _ in range(20)])
    assert won == ann.account
    assert await store.recovery_codes_left(ann.account) == 8
    second = [new_code() for _ in range(10)]
    await store.set_recovery_codes(ann.account, [secret_hash(c) for c in second])
    assert await store.recovery_codes_left(ann.account) == 10
    assert await store.take_recovery_code(secret_hash(first[2])) is None  # the old set
    assert await store.take_recovery_code(secret_hash(second[9])) == ann.account
    assert await store.recovery_codes_left(bob.account) == 10
    assert await store.recovery_codes_left("a9999") == 0


# -- passkeys ----------------------------------------------------------------------


async def test_a_passkey_is_registered_once_to_anyone(store: AccountStore) -> None:
    ann, bob = account(1), account(2)
    await store.create_account(ann)
    await store.create_account(bob)
    key = passkey(1, ann, sign_count=5)
    assert await store.add_passkey(key)
    assert not await store.add_passkey(passkey(1, bob))
    assert await store.passkey(key.credential_id) == key
    assert await store.passkeys(bob.account) == []
    other = passkey(2, ann)
    assert await store.add_passkey(other)
    assert await store.passkeys(ann.account) == [key, other]
    assert await store.remove_passkey(key.credential_id)
    assert not await store.remove_passkey(key.credential_id)
    assert await store.passkey(key.credential_id) is None
    assert await store.passkeys(ann.account) == [other]


async def test_the_signature_counter_only_moves_on(store: AccountStore) -> None:
    ann = account(1)
    await store.create_account(ann)
    key = passkey(1, ann, sign_count=5)
    await store.add_passkey(key)
    assert not await store.use_passkey(key.credential_id, 5, T0 + 10)  # replayed
    assert not await store.use_passkey(key.credential_id, 4, T0 + 10)  # cloned
    assert not await store.use_passkey(key.credential_id, 0, T0 + 10)
    assert await store.passkey(key.credential_id) == key  # nothing written
    assert await store.use_passkey(key.credential_id, 9, T0 + 20.5)
    used = await store.passkey(key.credential_id)
    assert used is not None and (used.sign_count, used.last_used) == (9, T0 + 20.5)
    # Racing assertions with one counter: one of them moves it.
    await exactly_one([store.use_passkey(key.credential_id, 10, T0 + 30) for _ in range(20)])
    assert not await store.use_passkey(b"no such key", 100, T0)
    # An authenticator without a counter says 0 every time.
    plain = passkey(2, ann, sign_count=0)
    await store.add_passkey(plain)
    assert await store.use_passkey(plain.credential_id, 0, T0 + 1)
    assert await store.use_passkey(plain.credential_id, 0, T0 + 2)
    assert await store.use_passkey(plain.credential_id, 1, T0 + 3)
    assert not await store.use_passkey(plain.credential_id, 0, T0 + 4)


# -- history -----------------------------------------------------------------------


async def test_history_is_kept_once_and_totals_count_each_entry_once(
    store: AccountStore,
) -> None:
    deals = [
        deal(1, seconds=200.25, moves=120, score=400),
        deal(2, result="resigned", moves=30, score=-52),
        deal(3, seconds=95.125, moves=90, score=700),
        deal(4, ladder="draw3", result="timed out", moves=10, score=5),
    ]
    rounds = [round_entry(1), round_entry(2)]
    await store.add_history("p0001", deals[:3], rounds[:1])
    # Folding again (a restart) with more entries: those kept already change nothing.
    await store.add_history("p0001", deals, rounds)
    await store.add_history("p0001", [deals[0], deals[0]], [rounds[1], rounds[1]])
    assert await store.totals("p0001") == [
        LadderTotals("draw1", deals=3, wins=2, best_seconds=95.125, moves=240, score=1048),
        LadderTotals("draw3", deals=1, wins=0, best_seconds=None, moves=10, score=5),
    ]
    assert await store.deal_history("p0001", None, 10) == deals[::-1]
    assert await store.round_history("p0001", None, 10) == rounds[::-1]
    assert await store.totals("p0002") == []
    assert await store.deal_history("p0002", None, 10) == []


async def test_an_entry_written_again_differently_is_left_as_it_was(store: AccountStore) -> None:
    await store.add_history("p0001", [deal(1, moves=50)], [])
    await store.add_history("p0001", [deal(1, moves=999, score=1)], [])
    assert await store.deal_history("p0001", None, 10) == [deal(1, moves=50)]
    (totals,) = await store.totals("p0001")
    assert (totals.deals, totals.moves, totals.score) == (1, 50, 500)


async def test_racing_folds_of_one_room_count_once(store: AccountStore) -> None:
    deals = [deal(n, moves=n) for n in range(1, 31)]
    await asyncio.gather(*(store.add_history("p0001", deals, [round_entry(1)]) for _ in range(8)))
    assert await store.totals("p0001") == [
        LadderTotals("draw1", deals=30, wins=30, best_seconds=100.5, moves=465, score=15000)
    ]
    assert len(await store.round_history("p0001", None, 100)) == 1


async def test_history_pages_newest_first_strictly_before(store: AccountStore) -> None:
    deals = [deal(n, t=T0 + n * 1.5) for n in range(1, 26)]
    await store.add_history("p0001", deals[::2], [])  # arrival order is not time order
    await store.add_history("p0001", deals[1::2], [])
    newest_first = deals[::-1]
    pages, before = [], None
    while page := await store.deal_history("p0001", before, 7):
        pages.append(page)
        before = page[-1].t
    assert [len(p) for p in pages] == [7, 7, 7, 4]
    assert [d for p in pages for d in p] == newest_first
    assert await store.deal_history("p0001", deals[0].t, 7) == []
    assert await store.deal_history("p0001", deals[3].t + 0.5, 2) == [deals[3], deals[2]]
    rounds = [round_entry(n) for n in range(1, 6)]
    await store.add_history("p0001", [], rounds)
    assert await store.round_history("p0001", rounds[3].t, 2) == [rounds[2], rounds[1]]


async def test_a_long_history_is_one_fold_and_one_page(store: AccountStore) -> None:
    deals = [deal(n, moves=1, score=2, seconds=1000.0 - n / 8) for n in range(1, 10_001)]
    await store.add_history("p0001", deals, [])
    page = await store.deal_history("p0001", None, 10_000)
    assert page == deals[::-1]
    assert await store.totals("p0001") == [
        LadderTotals("draw1", 10_000, 10_000, 1000.0 - 10_000 / 8, 10_000, 20_000)
    ]


async def test_a_replay_is_kept_until_it_expires(store: AccountStore) -> None:
    blob = bytes(range(256)) * 40
    await store.put_replay("ROOM01/1/1", blob, time.time() + 3600)
    assert await store.replay("ROOM01/1/1") == blob
    assert await store.replay("ROOM01/1/2") is None
    await store.put_replay("ROOM01/1/2", b"short-lived", time.time() + 0.2)
    await eventually(lambda: _is_none(store.replay("ROOM01/1/2")), what="the replay to expire")
    assert await store.replay("ROOM01/1/1") == blob


async def _is_none(value: Awaitable[object]) -> bool:
    return await value is None


# -- friends -----------------------------------------------------------------------


async def test_a_friendship_is_seen_from_both_sides(store: AccountStore) -> None:
    ann, bob, cid = account(1), account(2), account(3)
    for person in (ann, bob, cid):
        await store.create_account(person)
    asked = Friendship(ann.account, bob.account, FriendState.ASKED, T0 + 1)
    await store.set_friendship(asked)
    await store.set_friendship(Friendship(cid.account, ann.account, FriendState.ASKED, T0 + 2))
    assert await store.friendships(ann.account) == [
        asked,
        Friendship(cid.account, ann.account, FriendState.ASKED, T0 + 2),
    ]
    assert await store.friendships(bob.account) == [asked]
    # Accepted: the request becomes the friendship (one, not two).
    friends = Friendship(ann.account, bob.account, FriendState.FRIENDS, T0 + 3.75)
    await store.set_friendship(friends)
    assert await store.friendships(bob.account) == [friends]
    assert friends in await store.friendships(ann.account)
    assert await store.remove_friendship(bob.account, ann.account)  # either order
    assert await store.friendships(bob.account) == []
    assert await store.friendships(ann.account) == [
        Friendship(cid.account, ann.account, FriendState.ASKED, T0 + 2)
    ]
    assert not await store.remove_friendship(ann.account, bob.account)


async def test_a_new_friend_link_replaces_the_old(store: AccountStore) -> None:
    ann, bob = account(1), account(2)
    await store.create_account(ann)
    await store.create_account(bob)
    first, second = new_code(), new_code()
    await store.set_friend_link(ann.account, secret_hash(first))
    await store.set_friend_link(bob.account, secret_hash(new_code()))
    assert await store.friend_link(secret_hash(first)) == ann.account
    await store.set_friend_link(ann.account, secret_hash(second))
    assert await store.friend_link(secret_hash(first)) is None
    assert await store.friend_link(secret_hash(second)) == ann.account
    assert await store.friend_link(secret_hash(new_code())) is None


# -- deleting an account -----------------------------------------------------------


class Held:
    """Everything one account holds, with the secrets that reach it."""

    def __init__(self, n: int) -> None:
        self.account = account(n, f"Holder {n}")
        self.token = new_device_token()
        self.link = new_code()
        self.recovery = [new_code() for _ in range(10)]
        self.friend_link = new_code()
        self.passkey = passkey(n, self.account, sign_count=3)
        self.deals = [deal(k, ladder=f"ladder {n}") for k in range(1, 4)]
        self.rounds = [round_entry(1)]

    async def store_in(self, store: AccountStore) -> None:
        a = self.account
        assert await store.create_account(a)
        await store.add_device(secret_hash(self.token), device(int(a.account[1:]), a))
        await store.put_link_code(secret_hash(self.link), LinkCode(a.account, time.time() + 600))
        await store.set_recovery_codes(a.account, [secret_hash(c) for c in self.recovery])
        await store.set_friend_link(a.account, secret_hash(self.friend_link))
        assert await store.add_passkey(self.passkey)
        await store.add_history(a.player, self.deals, self.rounds)


async def test_delete_account_forgets_everything_it_holds(store: AccountStore) -> None:
    gone, kept = Held(1), Held(2)
    await gone.store_in(store)
    await kept.store_in(store)
    await store.set_friendship(
        Friendship(gone.account.account, kept.account.account, FriendState.FRIENDS, T0)
    )
    await store.put_replay("ROOM01/1/1", b"shared by the room", time.time() + 3600)
    kept_before = await _everything(store, kept)

    await store.delete_account(gone.account.account)
    a = gone.account
    assert await store.account(a.account) is None
    assert await store.account_by_handle(handle_key(a.handle)) is None
    assert await store.account_by_player(a.player) is None
    assert await store.is_deleted(a.player)
    assert not await store.is_deleted(kept.account.player)
    assert await store.device_by_token(secret_hash(gone.token)) is None
    assert await store.devices(a.account) == []
    assert await store.take_link_code(secret_hash(gone.link)) is None
    assert await store.take_recovery_code(secret_hash(gone.recovery[0])) is None
    assert await store.recovery_codes_left(a.account) == 0
    assert await store.friend_link(secret_hash(gone.friend_link)) is None
    assert await store.passkey(gone.passkey.credential_id) is None
    assert await store.passkeys(a.account) == []
    assert await store.deal_history(a.player, None, 10) == []
    assert await store.round_history(a.player, None, 10) == []
    assert await store.totals(a.player) == []
    assert await store.friendships(kept.account.account) == []
    assert not await store.remove_friendship(kept.account.account, a.account)
    # The other account is as it was (but for the friendship), the room's replay too.
    assert await _everything(store, kept) == kept_before
    assert await store.replay("ROOM01/1/1") == b"shared by the room"
    # The handle is free again.
    assert await store.create_account(account(3, a.handle))
    await store.delete_account("a9999")  # nothing there: nothing happens


async def _everything(store: AccountStore, held: Held) -> list[object]:
    a = held.account
    return [
        await store.account(a.account),
        await store.device_by_token(secret_hash(held.token)),
        await store.devices(a.account),
        await store.recovery_codes_left(a.account),
        await store.friend_link(secret_hash(held.friend_link)),
        await store.passkeys(a.account),
        await store.deal_history(a.player, None, 10),
        await store.round_history(a.player, None, 10),
        await store.totals(a.player),
    ]


# -- ratings ------------------------------------------------------------------------

LADDER = "classic-draw1"


async def rate(store: AccountStore, key: str, places: dict[str, int], t: float) -> Applied:
    """Rate a round as the server does: read, rate, apply (again if stale)."""
    while True:
        before = await store.ratings(LADDER, places)
        after = rate_round(before, places, t)
        seen = {p: r.rounds for p, r in before.items()}
        applied = await store.apply_rated_round(RatedRound(key, LADDER, t, places), seen, after)
        if applied is not Applied.STALE:
            return applied


ROUNDS = [
    ("R1-1/1", {"p1": 1, "p2": 2}),
    ("R1-1/2", {"p1": 2, "p2": 1, "p3": 3}),
    ("R2-1/1", {"p3": 1, "p1": 1, "p4": 3, "p2": 4}),
    ("R2-1/2", {"p4": 1, "p2": 2}),
]


async def test_a_rated_round_is_applied_once_and_its_ratings_read_back(
    store: AccountStore,
) -> None:
    for i, (key, places) in enumerate(ROUNDS):
        assert await rate(store, key, places, T0 + i) is Applied.NEW
    assert await rate(store, "R1-1/2", {"p1": 1, "p2": 2}, T0 + 9) is Applied.ALREADY
    logged = [RatedRound(k, LADDER, T0 + i, p) for i, (k, p) in enumerate(ROUNDS)]
    assert await store.rated_rounds(LADDER) == logged
    assert await store.rated_round("R2-1/1") == logged[2]
    assert await store.rated_round("nope") is None
    assert await store.ratings(LADDER, ["p1", "p2", "p3", "p4", "p9"]) == replay(logged)
    assert await store.ratings("classic-draw3", ["p1"]) == {}


async def test_a_rating_moved_meanwhile_is_stale_and_nothing_is_written(
    store: AccountStore,
) -> None:
    await rate(store, "A/1", {"p1": 1, "p2": 2}, T0)
    after = rate_round({}, {"p1": 1, "p3": 2}, T0 + 1)  # read before A/1: p1 unrated
    stale = RatedRound("B/1", LADDER, T0 + 1, {"p1": 1, "p3": 2})
    assert await store.apply_rated_round(stale, {}, after) is Applied.STALE
    assert await store.rated_round("B/1") is None
    assert set(await store.ratings(LADDER, ["p1", "p3"])) == {"p1"}


async def test_racing_appliers_of_one_round_one_wins(store: AccountStore) -> None:
    rnd = RatedRound("C/1", LADDER, T0, {"p1": 1, "p2": 2})
    after = rate_round({}, rnd.places, T0)
    results = await asyncio.gather(*(store.apply_rated_round(rnd, {}, after) for _ in range(5)))
    assert sorted(results) == sorted([Applied.NEW] + [Applied.ALREADY] * 4)
    assert (await store.ratings(LADDER, ["p1"]))["p1"].rounds == 1


async def test_the_ladder_table_position_and_chart(store: AccountStore) -> None:
    for i, (key, places) in enumerate(ROUNDS):
        await rate(store, key, places, T0 + i)
    ratings, charts = replay_with_chart(
        RatedRound(k, LADDER, T0 + i, p) for i, (k, p) in enumerate(ROUNDS)
    )
    order = sorted(ratings, key=lambda p: (-shown(ratings[p]), p))
    table = await store.ladder_table(LADDER, 0, 100)
    assert [row.player for row in table] == order
    assert [row.rating for row in table] == [shown(ratings[p]) for p in order]
    assert all(row.provisional and row.rounds == ratings[row.player].rounds for row in table)
    assert [r.player for r in await store.ladder_table(LADDER, 1, 2)] == order[1:3]
    for i, p in enumerate(order):
        assert await store.ladder_position(LADDER, p) == i
    assert await store.ladder_position(LADDER, "p9") is None
    assert await store.rating_chart(LADDER, "p2") == charts["p2"]
    assert [pt.key for pt in charts["p2"]] == ["R1-1/1", "R1-1/2", "R2-1/1", "R2-1/2"]


async def test_replacing_a_ladder_replays_it(store: AccountStore) -> None:
    for i, (key, places) in enumerate(ROUNDS):
        await rate(store, key, places, T0 + i)
    logged = await store.rated_rounds(LADDER)
    kept = [r for r in logged if r.key != "R1-1/2"]
    assert await store.replace_ladder(LADDER, kept, [r.key for r in logged])
    ratings, charts = replay_with_chart(kept)
    assert await store.rated_rounds(LADDER) == kept
    assert await store.rated_round("R1-1/2") is None
    assert await store.ratings(LADDER, ["p1", "p2", "p3", "p4"]) == ratings
    assert await store.rating_chart(LADDER, "p3") == charts["p3"]
    assert [r.player for r in await store.ladder_table(LADDER, 0, 10)] == sorted(
        ratings, key=lambda p: (-shown(ratings[p]), p)
    )
    # The removed round may be rated anew (a key freed), and the empty ladder is empty
    assert await rate(store, "R1-1/2", {"p1": 1, "p2": 2}, T0 + 10) is Applied.NEW
    logged = await store.rated_rounds(LADDER)
    assert await store.replace_ladder(LADDER, [], [r.key for r in logged])
    assert await store.ladder_table(LADDER, 0, 10) == []
    assert await store.ratings(LADDER, ["p1"]) == {}
    assert await store.rating_chart(LADDER, "p1") == []
    assert Rating().rounds == 0


async def test_a_ladder_replaced_over_a_log_that_moved_is_not_replaced(
    store: AccountStore,
) -> None:
    """The operator's removal read the log, then a room applied a round: the
    replace writes nothing (the caller replays again), so the round stays."""
    for i, (key, places) in enumerate(ROUNDS[:2]):
        await rate(store, key, places, T0 + i)
    logged = await store.rated_rounds(LADDER)
    assert await rate(store, "R9-1/1", {"p1": 2, "p4": 1}, T0 + 5) is Applied.NEW
    kept = [r for r in logged if r.key != ROUNDS[0][0]]
    assert not await store.replace_ladder(LADDER, kept, [r.key for r in logged])
    now = await store.rated_rounds(LADDER)
    assert [r.key for r in now] == [ROUNDS[0][0], ROUNDS[1][0], "R9-1/1"]
    assert await store.ratings(LADDER, ["p1", "p2", "p3", "p4"]) == replay(now)
    # Nor over a log that lost a round meanwhile (another removal).
    assert await store.replace_ladder(LADDER, now[1:], [r.key for r in now])
    assert not await store.replace_ladder(LADDER, [], [r.key for r in now])
    assert await store.rated_rounds(LADDER) == now[1:]


async def test_removing_a_result_while_a_room_applies_a_round_keeps_that_round(
    store: AccountStore,
) -> None:
    """``klondike-race ratings --remove`` on a live store: a round applied between
    the removal's read of the log and its write is kept, and the ladder is the
    replay of the log without the removed round alone."""
    for i, (key, places) in enumerate(ROUNDS[:3]):
        await rate(store, key, places, T0 + i)
    read = store.rated_rounds
    reads: list[str] = []

    async def rated_rounds(ladder: str) -> list[RatedRound]:
        logged = await read(ladder)
        if not reads:  # a room's round lands right after the first read
            assert await rate(store, "R9-1/1", {"p3": 2, "p4": 1}, T0 + 9) is Applied.NEW
        reads.append(ladder)
        return logged

    store.rated_rounds = rated_rounds  # type: ignore[method-assign]
    removed = await remove_result(store, "R1-1/2")
    assert removed is not None and removed.key == "R1-1/2"
    assert len(reads) == 2  # replayed again, with the round applied meanwhile
    now = await read(LADDER)
    assert [r.key for r in now] == ["R1-1/1", "R2-1/1", "R9-1/1"]
    assert await store.ratings(LADDER, ["p1", "p2", "p3", "p4"]) == replay(now)


async def test_a_deleted_account_leaves_no_rating_and_none_comes_back(
    store: AccountStore,
) -> None:
    ann, bob = account(1), account(2)
    for a in (ann, bob):
        assert await store.create_account(a)
    p, q = ann.player, bob.player
    await rate(store, "D/1", {p: 1, q: 2}, T0)
    await store.delete_account(ann.account)
    assert await store.ratings(LADDER, [p, q]) == {
        q: replay([RatedRound("D/1", LADDER, T0, {p: 1, q: 2})])[q]
    }
    assert await store.rating_chart(LADDER, p) == []
    assert await store.ladder_position(LADDER, p) is None
    assert [r.player for r in await store.ladder_table(LADDER, 0, 10)] == [q]
    # A round the deleted player was in (a room still open) rates only the others,
    # and a replay of the ladder brings nobody back.
    assert await rate(store, "D/2", {p: 2, q: 1}, T0 + 1) is Applied.NEW
    assert set(await store.ratings(LADDER, [p, q])) == {q}
    logged = await store.rated_rounds(LADDER)
    assert [r.places for r in logged] == [{p: 1, q: 2}, {p: 2, q: 1}]  # placings kept
    assert await store.replace_ladder(LADDER, logged, [r.key for r in logged])
    assert await store.ratings(LADDER, [p, q]) == {q: replay(logged)[q]}
    assert await store.rating_chart(LADDER, p) == []
    assert [r.player for r in await store.ladder_table(LADDER, 0, 10)] == [q]


# -- the backend failing and coming back ---------------------------------------------


def _every_operation(store: AccountStore) -> list[Callable[[], Awaitable[object]]]:
    ann = account(1)
    return [
        lambda: store.create_account(account(5)),
        lambda: store.account(ann.account),
        lambda: store.account_by_handle("player 1"),
        lambda: store.account_by_player(ann.player),
        lambda: store.update_account(ann),
        lambda: store.delete_account(ann.account),
        lambda: store.is_deleted(ann.player),
        lambda: store.add_device("h", device(1, ann)),
        lambda: store.device_by_token("h"),
        lambda: store.devices(ann.account),
        lambda: store.touch_device("dev1", T0),
        lambda: store.remove_device("dev1"),
        lambda: store.put_link_code("h", LinkCode(ann.account, time.time() + 60)),
        lambda: store.take_link_code("h"),
        lambda: store.set_recovery_codes(ann.account, ["h"]),
        lambda: store.take_recovery_code("h"),
        lambda: store.recovery_codes_left(ann.account),
        lambda: store.add_passkey(passkey(1, ann)),
        lambda: store.passkey(b"k"),
        lambda: store.passkeys(ann.account),
        lambda: store.use_passkey(b"k", 1, T0),
        lambda: store.remove_passkey(b"k"),
        lambda: store.add_history(ann.player, [deal(9)], [round_entry(9)]),
        lambda: store.deal_history(ann.player, None, 5),
        lambda: store.round_history(ann.player, None, 5),
        lambda: store.totals(ann.player),
        lambda: store.put_replay("r", b"x", time.time() + 60),
        lambda: store.replay("r"),
        lambda: store.set_friendship(Friendship("a0001", "a0002", FriendState.ASKED, T0)),
        lambda: store.remove_friendship("a0001", "a0002"),
        lambda: store.friendships(ann.account),
        lambda: store.set_friend_link(ann.account, "h"),
        lambda: store.friend_link("h"),
        lambda: store.ratings("classic-draw1", ["p1"]),
        lambda: store.apply_rated_round(RatedRound("k", "classic-draw1", T0, {"p1": 1}), {}, {}),
        lambda: store.rated_round("k"),
        lambda: store.rated_rounds("classic-draw1"),
        lambda: store.replace_ladder("classic-draw1", [], []),
        lambda: store.ladder_table("classic-draw1", 0, 10),
        lambda: store.ladder_position("classic-draw1", "p1"),
        lambda: store.rating_chart("classic-draw1", "p1"),
    ]


@pytest.mark.parametrize("backend", FAILING, ids=_name, indirect=True)
async def test_without_its_backend_every_operation_is_store_unavailable(
    backend: Backend, store: AccountStore
) -> None:
    ann = account(1)
    assert await store.create_account(ann)
    await backend.take_away()
    operations = _every_operation(store)
    for operation in operations:
        with pytest.raises(StoreUnavailable):
            await operation()
    await backend.bring_back()
    # The same store serves again by itself; what it refused was not written.
    await eventually(lambda: _served(store.account(ann.account)), retry=(StoreUnavailable,))
    assert await store.account(ann.account) == ann
    assert await store.account("a0005") is None
    assert await store.deal_history(ann.player, None, 5) == []
    assert await store.devices(ann.account) == []


async def _served(call: Awaitable[object]) -> bool:
    await call
    return True


@pytest.mark.parametrize("backend", LASTING, ids=_name, indirect=True)
async def test_what_was_acknowledged_survives_a_crash(
    backend: Backend, store: AccountStore
) -> None:
    people = [Held(n) for n in range(1, 6)]
    for held in people:
        await held.store_in(store)
    before = [await _everything(store, held) for held in people]
    code = secret_hash(new_code())
    await store.put_link_code(code, LinkCode(people[0].account.account, time.time() + 600))
    assert await store.use_passkey(people[1].passkey.credential_id, 4, T0 + 9)
    await store.delete_account(people[2].account.account)
    before[2] = await _everything(store, people[2])
    before[1] = await _everything(store, people[1])
    await backend.crash()
    again = await backend.open()
    assert [await _everything(again, held) for held in people] == before
    assert await again.is_deleted(people[2].account.player)
    key = await again.passkey(people[1].passkey.credential_id)
    assert key is not None and key.sign_count == 4
    assert not await again.use_passkey(people[1].passkey.credential_id, 4, T0 + 10)
    assert await again.take_link_code(code) is not None
    assert await again.take_link_code(code) is None


# -- the SQLite store's own promises -------------------------------------------------


async def test_sqlite_keeps_everything_across_a_reopen_and_locks_its_directory(
    tmp_path: Path,
) -> None:
    first = await SqliteAccounts.at(tmp_path)
    held = Held(1)
    await held.store_in(first)
    before = await _everything(first, held)
    with pytest.raises(StoreUnavailable):
        await SqliteAccounts.at(tmp_path)  # a second server on the same directory
    await first.close()
    again = await SqliteAccounts.at(tmp_path)
    try:
        assert await _everything(again, held) == before
    finally:
        await again.close()


# -- the Redis store's own promises --------------------------------------------------


@pytest.fixture
async def redis_backend(tmp_path: Path) -> AsyncIterator[RedisBackend]:
    made = RedisBackend(tmp_path)
    try:
        yield made
    finally:
        await made.finish()


async def test_redis_keeps_secrets_hashed_and_only_codes_and_replays_expire(
    redis_backend: RedisBackend,
) -> None:
    store = await redis_backend.open()
    redis = redis_backend.redis
    assert store.durable  # appendonly yes, appendfsync always: checked on connect
    gone, kept = Held(1), Held(2)
    await gone.store_in(store)
    await kept.store_in(store)
    await store.set_friendship(
        Friendship(gone.account.account, kept.account.account, FriendState.ASKED, T0)
    )
    await store.put_replay("ROOM01/1/1", b"boards", time.time() + 3600)
    keys = redis("KEYS", "*")
    assert all(k.startswith(b"klondike:accounts:") for k in keys)
    dump = b"".join(keys + [redis("DUMP", k) for k in keys])
    for held in (gone, kept):
        secrets = [held.token, held.link, held.friend_link, *held.recovery]
        for secret in secrets:
            assert secret.encode() not in dump
            assert secret.replace("-", "").encode() not in dump
    expiring = sorted(k for k in keys if redis("PTTL", k) != -1)
    assert expiring == sorted(
        [store.keys.link(secret_hash(h.link)) for h in (gone, kept)]
        + [store.keys.replay("ROOM01/1/1")]
    )
    assert 0 < redis("PTTL", store.keys.link(secret_hash(gone.link))) <= 600_000
    # A code nobody takes leaves nothing once it has expired.
    unused = secret_hash(new_code())
    await store.put_link_code(unused, LinkCode(kept.account.account, time.time() + 0.2))
    assert redis("EXISTS", store.keys.link(unused)) == 1
    await eventually(lambda: redis("EXISTS", store.keys.link(unused)) == 0, what="expiry")
    # Deleting leaves nothing that names the account or its player, but the
    # note that the player was deleted.
    await store.delete_account(gone.account.account)
    left = redis("KEYS", "*")
    names = (gone.account.account.encode(), gone.account.player.encode())
    assert [k for k in left if any(n in k for n in names)] == []
    assert redis("SMEMBERS", store.keys.deleted) == [gone.account.player.encode()]
    assert store.keys.held(kept.account.account, "friends") not in left
    # ...and a room folded after the deletion does not write its history again.
    await store.add_history(gone.account.player, [deal(1)], [round_entry(1)])
    assert await store.deal_history(gone.account.player, None, 10) == []
    assert set(redis("KEYS", "*")) == set(left)


async def test_redis_forgets_a_link_code_at_its_expiry(redis_backend: RedisBackend) -> None:
    """The service judges expiry by its own clock; Redis, sharing the real one,
    drops the code then too, so a code nobody took leaves nothing."""
    store = await redis_backend.open()
    ann = account(1)
    await store.create_account(ann)
    stale = new_code()
    await store.put_link_code(secret_hash(stale), LinkCode(ann.account, time.time() - 1))
    assert await store.take_link_code(secret_hash(stale)) is None
    # One that was valid when it was made, taken after its time.
    soon = new_code()
    expires = time.time() + 0.2
    await store.put_link_code(secret_hash(soon), LinkCode(ann.account, expires))
    await eventually(lambda: time.time() > expires, what="the code's time to pass")
    assert await store.take_link_code(secret_hash(soon)) is None


async def test_redis_two_nodes_racing_one_wins(redis_backend: RedisBackend) -> None:
    nodes = [await redis_backend.open(), await redis_backend.open()]
    spellings = ["Shared", "SHARED", "shared"]
    claims = [nodes[n % 2].create_account(account(n, spellings[n % 3])) for n in range(12)]
    await exactly_one(claims)
    holder = await nodes[0].account_by_handle("shared")
    assert holder is not None and await nodes[1].account_by_handle("shared") == holder
    code = secret_hash(new_code())
    await nodes[0].put_link_code(code, LinkCode(holder.account, time.time() + 600))
    await exactly_one([nodes[n % 2].take_link_code(code) for n in range(20)])
    recovery = secret_hash(new_code())
    await nodes[1].set_recovery_codes(holder.account, [recovery])
    await exactly_one([nodes[n % 2].take_recovery_code(recovery) for n in range(20)])
    key = passkey(1, holder, sign_count=1)
    assert await nodes[0].add_passkey(key)
    await exactly_one([nodes[n % 2].use_passkey(key.credential_id, 2, T0) for n in range(20)])
    folds = [nodes[n % 2].add_history("p", [deal(1), deal(2)], []) for n in range(10)]
    await asyncio.gather(*folds)
    (totals,) = await nodes[1].totals("p")
    assert totals.deals == 2


async def test_redis_a_create_whose_reply_was_lost_can_be_sent_again(
    redis_backend: RedisBackend,
) -> None:
    store = await redis_backend.open()
    ann = account(1, "Ann")
    assert await store.create_account(ann)
    assert await store.create_account(ann)  # the very same account: it is there
    assert not await store.create_account(account(1, "Other"))  # same id, not the same
    assert await store.account(ann.account) == ann


async def test_redis_frozen_is_store_unavailable_after_the_timeout(
    redis_backend: RedisBackend,
) -> None:
    store = RedisAccounts("127.0.0.1", redis_backend.redis.port, timeout=0.3)
    await store.connect()
    redis_backend.stores.append(store)
    assert await store.create_account(account(1))
    redis_backend.redis.freeze()
    try:
        with pytest.raises(StoreUnavailable, match="did not answer"):
            await store.account("a0001")
    finally:
        redis_backend.redis.thaw()
    assert await store.account("a0001") == account(1)


async def test_redis_unreachable_or_not_connected_is_store_unavailable(
    redis_backend: RedisBackend,
) -> None:
    store = RedisAccounts("127.0.0.1", redis_backend.redis.port)
    with pytest.raises(StoreUnavailable, match="not connected"):
        await store.account("a0001")
    redis_backend.redis.kill()
    with pytest.raises(StoreUnavailable):
        await RedisAccounts("127.0.0.1", redis_backend.redis.port, connect_timeout=0.5).connect()


async def test_redis_without_fsync_on_every_write_is_not_durable(
    redis_backend: RedisBackend,
) -> None:
    redis_backend.redis("CONFIG", "SET", "appendfsync", "everysec")
    url = f"{redis_backend.redis.url}?prefix=elsewhere:&idle_ttl=60"  # serve --redis's URL
    store = await RedisAccounts.from_url(url)
    redis_backend.stores.append(store)
    assert store.durable is False
    assert await store.create_account(account(1))
    assert redis_backend.redis("EXISTS", b"elsewhere:accounts:account:a0001") == 1


@pytest.fixture
async def proxied(redis_backend: RedisBackend) -> AsyncIterator[tuple[RedisAccounts, RedisProxy]]:
    """A Redis store that reaches Redis through a proxy which can lose replies."""
    proxy = RedisProxy(redis_backend.redis.port)
    await proxy.accept()
    store = RedisAccounts("127.0.0.1", proxy.port, timeout=5.0)
    await store.connect()
    redis_backend.stores.append(store)
    try:
        yield store, proxy
    finally:
        await proxy.close()


async def lose_the_reply(proxy: RedisProxy, call: Awaitable[T], ran: Callable[[], bool]) -> T:
    """``call`` run by Redis with its reply swallowed, then the connection cut:
    what the store answers, having never heard Redis's answer."""
    proxy.swallow = True
    task = asyncio.ensure_future(call)
    await eventually(ran, what="Redis to run it")
    await proxy.swallowed.wait()
    proxy.swallow = False
    proxy.cut()
    return await task


async def test_redis_a_write_whose_reply_was_lost_is_settled_by_running_it_again(
    proxied: tuple[RedisAccounts, RedisProxy], redis_backend: RedisBackend
) -> None:
    store, proxy = proxied
    redis = redis_backend.redis
    ann = account(1, "Ann")
    assert await store.create_account(account(2))  # the script is loaded: one call
    assert await lose_the_reply(
        proxy,
        store.create_account(ann),
        lambda: redis("EXISTS", store.keys.account(ann.account)) == 1,
    )
    assert await store.account(ann.account) == ann
    # History: run twice, kept and counted once.
    await store.add_history("p0001", [deal(1)], [])
    await lose_the_reply(
        proxy,
        store.add_history("p0001", [deal(2), deal(3)], []),
        lambda: redis("ZCARD", store.keys.history("p0001", "deals")) == 3,
    )
    (totals,) = await store.totals("p0001")
    assert totals.deals == 3


async def test_redis_a_code_whose_reply_was_lost_is_uncertain_and_used_up(
    proxied: tuple[RedisAccounts, RedisProxy], redis_backend: RedisBackend
) -> None:
    store, proxy = proxied
    redis = redis_backend.redis
    ann = account(1)
    assert await store.create_account(ann)
    code = secret_hash(new_code())
    await store.put_link_code(code, LinkCode(ann.account, time.time() + 600))
    assert await store.take_link_code(secret_hash(new_code())) is None  # the script loaded
    with pytest.raises(StoreUncertain):
        await lose_the_reply(
            proxy, store.take_link_code(code), lambda: redis("EXISTS", store.keys.link(code)) == 0
        )
    await eventually(lambda: store.connected, what="the store to reconnect")
    assert await store.take_link_code(code) is None  # it was taken, by the lost call
