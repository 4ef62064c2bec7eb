"""The matchmaker (server/matchmaking/match.py) is fair under any churn: players
joining and leaving a ladder's queue at random, with time passing between, never
end in two rooms, never wait while a rival within their window waits too, and
never wait forever when anyone else is waiting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from server.matchmaking.match import (
    LEAST,
    MOST,
    WINDOW_OPEN_AFTER_S,
    Waiter,
    bots_offered,
    form_rooms,
    unmatched_could_match,
    window,
)

waiters = st.lists(
    st.builds(
        Waiter,
        st.sampled_from([f"p{i}" for i in range(30)]),
        st.integers(0, 3000),
        st.floats(0, 120, allow_nan=False),
    ),
    max_size=30,
    unique_by=lambda w: w.player,  # a queue holds a player once
)


@given(waiters)
@settings(max_examples=300, deadline=None)
def test_rooms_are_fair(queue: list[Waiter]) -> None:
    rooms = form_rooms(queue)
    seated = [w.player for room in rooms for w in room]
    assert len(seated) == len(set(seated))  # no one in two rooms
    assert set(seated) <= {w.player for w in queue}
    for room in rooms:
        assert LEAST <= len(room) <= MOST
        longest = room[0]
        assert all(longest.waited >= w.waited for w in room)
        assert all(abs(w.rating - longest.rating) <= window(longest.waited) for w in room)
    assert not unmatched_could_match(queue, rooms)


def test_the_window_widens_then_opens() -> None:
    assert window(0) < window(10) < window(WINDOW_OPEN_AFTER_S - 1)
    far = [Waiter("a", 900, 0.0), Waiter("b", 2400, 0.0)]
    assert form_rooms(far) == []
    late = [Waiter("a", 900, WINDOW_OPEN_AFTER_S), Waiter("b", 2400, 0.0)]
    assert [[w.player for w in r] for r in form_rooms(late)] == [["a", "b"]]


def test_nearest_ratings_share_a_room() -> None:
    queue = [Waiter(f"p{r}", r, 0.0) for r in (1000, 1010, 1020, 1030, 1040, 1500, 1510)]
    rooms = [{w.rating for w in room} for room in form_rooms(queue)]
    assert {1500, 1510} in rooms
    assert sum(len(r) for r in rooms) == 6  # a room holds four: the fifth waits


def test_bots_are_offered_after_thirty_seconds() -> None:
    assert not bots_offered(29.9)
    assert bots_offered(30.0)


class Churn(RuleBasedStateMachine):
    """A ladder's queue as the shell keeps it: joins, leaves and ticks of the
    clock, the matchmaker run at each tick and its rooms taken out."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.queued: dict[str, tuple[int, float]] = {}  # player -> (rating, since)
        self.in_room: set[str] = set()
        self.rooms_of: dict[str, int] = {}

    def queue(self) -> list[Waiter]:
        return [Waiter(p, r, self.now - since) for p, (r, since) in self.queued.items()]

    @rule(n=st.integers(0, 40), rating=st.integers(0, 3000))
    def join(self, n: int, rating: int) -> None:
        player = f"p{n}"
        if player in self.in_room or player in self.queued:
            return  # the shell refuses: one queue or room at a time
        self.queued[player] = (rating, self.now)

    @precondition(lambda self: bool(self.queued))
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        player = data.draw(st.sampled_from(sorted(self.queued)))
        del self.queued[player]

    @rule(seconds=st.floats(0, 20, allow_nan=False))
    def tick(self, seconds: float) -> None:
        self.now += seconds
        queue = self.queue()
        rooms = form_rooms(queue)
        assert not unmatched_could_match(queue, rooms)
        for room in rooms:
            for w in room:
                assert w.player in self.queued
                assert w.player not in self.in_room
                self.rooms_of[w.player] = self.rooms_of.get(w.player, 0) + 1
                del self.queued[w.player]
                self.in_room.add(w.player)

    @rule(n=st.integers(0, 40))
    def room_over(self, n: int) -> None:
        self.in_room.discard(f"p{n}")

    @invariant()
    def nobody_waits_forever(self) -> None:
        # Time passes only in a tick, which runs the matchmaker at once: two
        # players who both waited past the open window would have been matched.
        long = [
            p for p, (_, since) in self.queued.items() if self.now - since >= WINDOW_OPEN_AFTER_S
        ]
        assert len(long) <= 1

    @invariant()
    def queue_and_rooms_are_apart(self) -> None:
        assert not set(self.queued) & self.in_room


Churn.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_churn = Churn.TestCase
