"""Session mechanics against the real server (python -m server): refusals, 4001,
unknown tokens, drops, sequence gaps and the rate limit.

The rare paths are made to happen on the client's side of a real socket: a drop
is the client's transport aborted (no close frame), and a lost event is one frame
dropped once in the client's receive path, as an overloaded relay would lose it.
The server and the wire stay real throughout.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from client import ConnectionLost, RoomEvent, ServerError, Session, connect
from client.codec import decode
from client.connection import normalize_url
from client.room import RoomView
from protocol.outcomes import view_digest
from tests.support.flooder import OP_TEXT, frame
from tests.support.processes import ServerProcess
from tests.support.sessions import until
from tests.support.waiting import TIMEOUT, eventually


async def _next(events: AsyncIterator[RoomEvent], timeout: float = 5.0) -> RoomEvent:
    return await asyncio.wait_for(anext(events), timeout)


class ReceiveTap:
    """Fault injection in a session's receive path: every frame the real server
    sends passes through here (and is recorded) on its way to the session, except
    the next one of type ``lose`` once armed, which is dropped as if lost."""

    def __init__(self, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
        self.session = session
        self.frames: list[dict[str, Any]] = []
        self.lose: str | None = None
        self.lost: dict[str, Any] | None = None
        monkeypatch.setattr(session, "_receive", self._tap(session._receive))

    def _tap(self, receive: Callable[[bytes | str], None]) -> Callable[[bytes | str], None]:
        def tapped(data: bytes | str) -> None:
            frame = decode(data, self.session._subprotocol)
            self.frames.append(frame)
            if self.lose is not None and frame.get("type") == self.lose:
                self.lose, self.lost = None, frame
                return
            receive(data)

        return tapped

    def replies(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == kind and "id" in f]


async def _playing(session: Session, **settings: Any) -> RoomView:
    """A one-player room of ``session``'s with its first deal dealt."""
    await session.create_room({"deals_per_round": 1, **settings})
    await session.start()
    return await until(session, lambda r: r.my_board is not None)


def test_urls_are_normalized() -> None:
    assert normalize_url("127.0.0.1:8765") == "ws://127.0.0.1:8765/ws"
    assert normalize_url("http://h:1/") == "ws://h:1/ws"
    assert normalize_url("https://h/ws") == "wss://h/ws"


async def test_refusals_carry_code_message_and_field(live_url: str) -> None:
    async with connect(live_url, name="Ann") as s:
        await s.create_room()
        with pytest.raises(ServerError) as info:
            await s.update_settings(draw=2)
        err = info.value
        assert (err.code, err.field) == ("bad_setting", "draw")
        assert err.message and isinstance(err.frame["id"], int)  # the reply to our request
        assert s.room is not None and s.room.settings["draw"] == 1  # nothing changed

        await s.start()
        room = await until(s, lambda r: r.my_board is not None)
        board = copy.deepcopy(room.my_board)
        assert board is not None and board["waste"] == 0
        with pytest.raises(ServerError) as info:  # the engine's own reason
            await s.move("waste_foundation")
        err = info.value
        assert (err.code, err.field) == ("waste_empty", None) and err.message
        with pytest.raises(ServerError) as info:
            await s.move({"kind": "tableau_tableau", "from": 9, "to": 0, "count": 1})
        assert info.value.code == "no_such_pile"
        fresh = await s.snapshot()  # the refused moves left the board as it was
        assert fresh.my_board == board and fresh.my_board["moves"] == 0


async def test_resumed_elsewhere_ends_the_session_without_reconnecting(live_url: str) -> None:
    first = await connect(live_url, name="Ann")
    try:
        events = first.events()
        room = await first.create_room()
        assert first.token is not None
        async with connect(live_url, token=first.token) as second:
            with pytest.raises(ConnectionLost) as info:
                async with asyncio.timeout(5):
                    async for _ in events:
                        pass
            assert info.value.close_code == 4001 and first.close_code == 4001
            # The session is over for good: its reader has ended (4001 is not resumed),
            # so no reconnect can come later and take the player back from ``second``.
            assert first.closed and (first.stats.drops, first.stats.reconnects) == (1, 0)
            assert first._reader is not None and first._reader.done()
            with pytest.raises(ConnectionLost):  # its requests fail: the session is over
                await first.ping()

            assert second.player == first.player
            assert second.room is not None and second.room.code == room.code
            fresh = await second.snapshot()
            assert not second.closed and second.close_code is None
            assert fresh.players == [{"id": second.player, "name": "Ann", "connected": True}]
    finally:
        await first.close()


async def test_an_unknown_token_is_refused(live_url: str) -> None:
    with pytest.raises(ServerError) as info:
        await connect(live_url, token=secrets.token_urlsafe(24))  # well-formed, never issued
    assert info.value.code == "unknown_token" and info.value.message


async def test_a_drop_resumes_with_the_token_and_fails_what_was_in_flight(
    live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(live_url, name="Ann", rate=0) as s:
        events = s.events()
        room = await s.create_room({"deals_per_round": 1})
        assert (await _next(events))["reason"] == "joined"
        token, ws = s.token, s._ws
        assert ws is not None
        send = ws.send

        async def send_then_cut(data: Any, *args: Any, **kwargs: Any) -> None:
            await send(data, *args, **kwargs)
            if decode(data, s._subprotocol)["type"] == "start":
                ws.transport.abort()  # the network goes away: no close frame, no reply

        monkeypatch.setattr(ws, "send", send_then_cut)
        with pytest.raises(ConnectionLost):  # it may have been applied: no blind retry
            await s.start()

        resumed = await _next(events)
        assert (resumed.type, resumed["reason"]) == ("snapshot", "resume")
        assert s._ws is not ws and s.token == token
        assert (s.stats.drops, s.stats.reconnects) == (1, 1)
        # The frame had left before the cut, so the server started the round; the
        # resumed room says so, and a retry would have been refused.
        assert s.room is not None and s.room.code == room.code
        assert s.room.state == "playing" and s.room.my_board is not None
        with pytest.raises(ServerError) as info:
            await s.start()
        assert info.value.code == "wrong_state"
        moved = await s.draw()  # the session works again, in the same deal
        assert moved.deal == 1 and moved.board["moves"] == 1


async def test_a_session_gives_up_resuming_after_reconnect_for(
    server_process: ServerProcess, caplog: pytest.LogCaptureFixture
) -> None:
    server = server_process
    await asyncio.to_thread(server.start)
    caplog.set_level(logging.INFO, logger="client.connection")
    async with connect(server.url, name="Ann", reconnect_for=1.0) as s:
        await s.create_room()
        server.kill()  # gone for good: every try is refused at once
        await s.wait_closed()
        # It kept trying, with pauses of 0.1, 0.2, 0.4, 0.8 s between tries: a fifth
        # try would begin 1.5 s after the first, past the 1 s it was given.
        tries = [r for r in caplog.records if r.getMessage().startswith("resume failed")]
        assert 2 <= len(tries) <= 4, [r.getMessage() for r in tries]
        assert (s.stats.drops, s.stats.reconnects) == (1, 0)
        with pytest.raises(ConnectionLost, match="could not reconnect"):
            await s.ping()


async def test_a_server_that_forgot_the_token_ends_the_session(
    server_process: ServerProcess,
) -> None:
    server = server_process
    await asyncio.to_thread(server.start)
    # It tries to resume for as long as the restart may take on a busy machine.
    async with connect(server.url, name="Ann", reconnect_for=TIMEOUT) as s:
        await s.create_room()
        server.kill()
        # Back on the same port with an empty memory store: the resume is refused.
        await asyncio.to_thread(server.start)
        await s.wait_closed()
        assert (s.stats.drops, s.stats.reconnects) == (1, 0)
        with pytest.raises(ConnectionLost, match="cannot resume: unknown_token"):
            await s.ping()


async def test_a_sequence_gap_fetches_a_snapshot_and_skips_what_it_covers(
    live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(live_url, name="Ann", rate=0) as s:
        tap = ReceiveTap(s, monkeypatch)
        await _playing(s)
        events = s.events()
        assert s.room is not None
        before = s.room.seq

        tap.lose = "progress"
        await s.draw()  # its progress event (seq before+1) never reaches the session
        await eventually(lambda: tap.lost is not None, what="the progress frame to be lost")
        assert tap.lost is not None and tap.lost["seq"] == before + 1
        assert s.room.seq == before and s.stats.resyncs == 0  # nothing to notice yet
        assert tap.replies("snapshot") == []

        await s.draw()  # progress before+2 reveals the gap
        resync = await _next(events)
        assert (resync.type, resync.seq, resync["reason"]) == ("snapshot", before + 2, "gap")
        assert s.stats.resyncs == 1 and len(tap.replies("snapshot")) == 1  # asked once
        assert s.room.seq == before + 2
        assert s.room.deal is not None and s.room.deal["progress"][s.player]["moves"] == 2

        held = copy.deepcopy(s.room)
        fresh = await s.request("snapshot")  # the room we hold is the server's room
        assert RoomView.from_wire(fresh["room"]) == held

        await s.draw()
        # Progress before+2 arrived too, but the gap's snapshot covered it: it was
        # not played again. The stream goes on in order from there.
        following = [await _next(events), await _next(events)]
        assert [(e.type, e.seq) for e in following] == [
            ("snapshot", before + 2),  # the one we just asked for
            ("progress", before + 3),
        ]
        assert s.room.seq == before + 3 and s.stats.resyncs == 1


async def test_a_settings_event_carries_the_new_round_end(live_url: str) -> None:
    async with connect(live_url, name="Ann") as s:
        await _playing(s)
        room = await s.snapshot()
        assert room.round_ends_at is None and room.round_started_at is not None
        events = s.events()
        await s.update_settings(time_limit_minutes=5)
        event = await _next(events)
        assert event.type == "settings"
        ends = room.round_started_at + 5 * 60_000  # the limit counts from the round's start
        assert event["round_ends_at"] == ends
        assert s.room is not None and s.room.round_ends_at == ends
        assert s.room.settings["time_limit_minutes"] == 5
        assert (await s.snapshot()).round_ends_at == ends


async def test_rate_limited_requests_are_retried_by_their_echoed_id(
    live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(live_url, name="Ann", rate=0) as s:  # no pacing: we flood
        tap = ReceiveTap(s, monkeypatch)
        replies = await asyncio.gather(*(s.request("ping") for _ in range(130)))
        assert [r["type"] for r in replies] == ["pong"] * 130
        limited = [f for f in tap.frames if f.get("code") == "rate_limited"]
        # The burst is 100, so up to 30 are refused: fewer the longer the server
        # takes to read them (the bucket refills 50 a second), never none.
        assert len(limited) >= 1
        # Each refusal named its own request, which was sent again and answered.
        answered = {f["id"] for f in tap.replies("pong")}
        assert all(isinstance(f["id"], int) and f["id"] not in answered for f in limited)
        assert len({r["id"] for r in replies}) == 130
        assert s.stats.unsolicited_errors == [] and not s.closed


async def test_timed_ticks_update_the_room_without_a_gap() -> None:
    """A Timed tick repeats the last seq: the library applies it, asks for no snapshot."""
    from client import connect
    from tests.support.inprocess import FakeClock, running_server

    clock = FakeClock()
    async with running_server(clock=clock) as server:
        url = server.url
        async with connect(url, name="Ann") as ann:
            await ann.create_room({"scoring": "timed", "variant": "thoughtful"})
            events = ann.events()
            await ann.start()
            async for event in events:
                if event.type == "deal_started":
                    break
            seq = ann.room.seq
            clock.advance(10_000)
            async for event in events:
                if event.type == "sheet" and "tick" in event.data:
                    break
            assert event.seq == seq == ann.room.seq
            assert ann.stats.resyncs == 0
            assert ann.room.sheet["rows"][0]["cells"][ann.player]["score"] == 0
            assert ann.room.deal["progress"][ann.player]["moves"] == 0


async def test_a_move_whose_reply_was_lost_is_sent_again_and_played_once(
    live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server played the move, then the connection went before its reply came:
    the session resumes and sends the same request (the same ``n``), and the reply
    it gets is the one that was lost: the move is played once."""
    async with connect(live_url, name="Ann", rate=0) as s:
        await _playing(s, draw=3)
        tap = ReceiveTap(s, monkeypatch)
        ws = s._ws
        assert ws is not None
        cut: list[dict[str, Any]] = []
        receive = s._receive

        def cut_at_the_reply(data: bytes | str) -> None:
            frame = decode(data, s._subprotocol)
            if frame.get("type") == "moved" and not cut:
                cut.append(frame)
                ws.transport.abort()  # the reply is lost with the connection
                return
            receive(data)

        monkeypatch.setattr(s, "_receive", cut_at_the_reply)
        moved = await s.draw()
        assert cut and s._ws is not ws and s.stats.reconnects == 1
        (again,) = [f for f in tap.frames if f.get("type") == "moved"]
        assert {k: v for k, v in again.items() if k != "id"} == {
            k: v for k, v in cut[0].items() if k != "id"
        }
        assert view_digest(moved.board) == cut[0]["digest"] and moved.board["logged"] == 1
        room = await s.snapshot()
        assert room.my_board is not None and room.my_board["logged"] == 1
        assert room.my_board["waste"] == 3  # one draw of three, not two
        moved = await s.draw()  # and the next move numbers on
        assert moved.board["logged"] == 2 and moved.board["waste"] == 6


async def test_a_move_cut_off_after_sending_is_played_once(
    live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frame left and the connection went at once: whether or not the server
    read it, the move sent again after the resume leaves exactly one move."""
    async with connect(live_url, name="Ann", rate=0) as s:
        await _playing(s, draw=3)
        ws = s._ws
        assert ws is not None
        send = ws.send

        async def send_then_cut(data: Any, *args: Any, **kwargs: Any) -> None:
            await send(data, *args, **kwargs)
            if decode(data, s._subprotocol)["type"] == "move":
                ws.transport.abort()

        monkeypatch.setattr(ws, "send", send_then_cut)
        moved = await s.draw()
        assert s.stats.reconnects == 1
        assert moved.board["logged"] == 1 and moved.board["waste"] == 3


async def test_a_wrong_move_number_resyncs_the_room(live_url: str) -> None:
    async with connect(live_url, name="Ann", rate=0) as s:
        await _playing(s)
        await s.draw()
        events = s.events()
        with pytest.raises(ServerError) as info:
            await s.move("draw", n=5)
        assert info.value.code == "wrong_move_number" and info.value.frame["expected"] == 1
        fetched = await _next(events)  # the session took a snapshot rather than guess
        while fetched.type == "progress":  # the draw's own, held back a moment (batched)
            fetched = await _next(events)
        assert (fetched.type, fetched["reason"]) == ("snapshot", "snapshot")
        assert s.room is not None and s.room.my_board is not None
        assert s.room.my_board["logged"] == 1
        with pytest.raises(ServerError) as info:  # a logged number, another move
            await s.move("resign", n=0)
        assert info.value.code == "wrong_move_number"
        assert (await s.draw()).board["logged"] == 2


@pytest.mark.parametrize(
    ("kind", "bad", "code"),
    [("msgpack", frame(0x3, b"x"), 1002), ("json", frame(OP_TEXT, b"\xff\xfe"), 1007)],
    ids=["broken framing", "text not UTF-8"],
)
async def test_a_close_for_bad_input_ends_the_session_without_reconnecting(
    live_url: str, kind: str, bad: bytes, code: int
) -> None:
    """The server closes a connection that broke the protocol (a reserved opcode:
    1002; a text frame that is not UTF-8: 1007). A session that did so would again:
    it ends, as after 1009, instead of resuming into the same close."""
    session = await connect(live_url, name="Ann", kind=kind)
    try:
        await session.create_room()
        assert session._ws is not None
        session._ws.transport.write(bad)  # under the websockets library, on its socket
        await asyncio.wait_for(session.wait_closed(), 10)
        assert session.close_code == code
        assert (session.stats.drops, session.stats.reconnects) == (1, 0)
        with pytest.raises(ConnectionLost) as info:
            await session.ping()
        assert info.value.close_code == code
    finally:
        await session.close()
