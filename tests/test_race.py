"""A whole race through real sockets: three players and a spectator, three deals.

Deal 1 (Thoughtful, seed known to the test): the host solves it first and takes the
race bonus, the second player solves it too, the third resigns. Deal 2 (one pass
through the stock, set by the host during deal 1): the third player draws through
the stock into a dead deal, the second drops and resumes with the token onto the
same board, the host switches scoring to Vegas mid-deal (the sheet is rescored at
once), then moves the room on. Deal 3: the host sets a time limit and Timed
scoring; the server's (fake) clock runs out and the round ends with everybody
scored where they stand. Then a rematch carries the cumulative Vegas banks. Every
sheet is checked against the engine's own computation from the moves the test made.
"""

from __future__ import annotations

from typing import Any

from protocol.deal import verify_commitment
from protocol.settings import Scoring
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.ledger import Ledger
from tests.support.raw_client import JSON, Client, after, player, result_of
from tests.support.solver import board_from_view, solve

WIN_SEED = "race-27"  # tests/support/solver.py wins it in ~225 moves
DEAD_SEED = "dead-19"  # drawing through the stock once leaves no move
THIRD_SEED = "race-28"


async def play(
    client: Client,
    ledger: Ledger,
    deal: int,
    moves: list[dict[str, Any]],
    clock: FakeClock,
    step_ms: int = 0,
) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    for move in moves:
        clock.advance(step_ms)
        reply = await client.request("move", deal=deal, move=move)
        assert reply["type"] == "moved", (move, reply)
        ledger.moved(client.player or "", reply, move)
    return reply


def assert_sheet(sheet: dict[str, Any], expected: Any) -> None:
    assert sheet == expected.to_wire()


async def test_whole_race() -> None:
    clock = FakeClock()
    seeds = Seeds(WIN_SEED, DEAD_SEED, THIRD_SEED)
    ledger = Ledger()
    async with running_server(clock=clock, draw_seed=seeds) as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        cat = await player(server, "Cat", JSON)
        sam = await player(server, "Sam", JSON)
        joined = await ann.ok(
            "create_room",
            settings={"variant": "thoughtful", "deals_per_round": 3, "break_seconds": 0},
        )
        room = joined["room"]
        code = room["code"]
        assert room["host"] == ann.player and room["state"] == "lobby" and room["role"] == "player"
        await bob.ok("join_room", code=code.lower(), role="player")
        await cat.ok("join_room", code=code, role="player")
        await sam.ok("join_room", code=code, role="spectator")
        players = [ann.player, bob.player, cat.player]
        members = await ann.event(
            "members", spectators=[{"id": sam.player, "name": "Sam", "connected": True}]
        )
        assert [p["id"] for p in members["players"]] == players

        # ---------------------------------------------------------------- deal 1
        t0 = clock.now()
        await ann.ok("start")
        starts = [await c.event("deal_started") for c in (ann, bob, cat, sam)]
        views = [s["deal"]["board"] for s in starts[:3]]
        assert views[0] == views[1] == views[2]  # the identical layout
        assert all(s["deal"]["boards"] == {} for s in starts[:3])  # no rival boards
        assert starts[3]["deal"]["board"] is None
        assert sorted(starts[3]["deal"]["boards"]) == sorted(players)
        commitment1 = starts[0]["deal"]["commitment"]
        assert "seed" not in starts[0]["deal"]
        ledger.deal_started(starts[0]["deal"], WIN_SEED, players)
        solution = solve(board_from_view(views[0]))
        assert solution is not None
        moves = [m.to_wire() for m in solution]

        last = await play(ann, ledger, 1, moves, clock, step_ms=50)
        assert last["outcome"]["status"] == "won" and last["outcome"]["home"] == 52
        first = await sam.event("first_finisher")
        assert first == {
            "type": "first_finisher",
            "seq": first["seq"],
            "player": ann.player,
            "deal": 1,
            "bonus": 100,
        }
        # Host tightens the stock for later deals; deal 1 keeps its free passes.
        await ann.ok("update_settings", settings={"stock_passes": 1})
        settings_ev = await bob.event("settings")
        assert settings_ev["settings"]["stock_passes"] == 1
        last = await play(bob, ledger, 1, moves, clock, step_ms=40)  # recycles still allowed
        assert last["outcome"]["status"] == "won"
        last = await play(cat, ledger, 1, [{"kind": "resign"}], clock)
        assert last["outcome"]["status"] == "resigned"

        over = await sam.event("deal_over")
        ended1 = clock.now()
        ledger.ended_at[1] = ended1
        assert over["deal"]["seed"] == WIN_SEED
        assert verify_commitment(WIN_SEED, commitment1)
        assert over["deal"]["logs"] == ledger.logs_wire(1)
        assert over["deal"]["boards"][cat.player]["stock_cards"]  # revealed in full
        sheet = await sam.event("sheet")
        assert_sheet(sheet["sheet"], ledger.sheet(players, Scoring.STANDARD, 100, ended1))
        row = sheet["sheet"]["rows"][0]
        assert row["first"] == ann.player
        assert row["cells"][ann.player]["bonus"] == 100
        assert row["cells"][bob.player]["bonus"] == 0
        assert row["cells"][cat.player]["status"] == "resigned"
        assert [m["type"] for m in cat.events[-3:]] == ["deal_over", "sheet", "deal_started"]
        assert all(e["type"] != "first_finisher" or e["player"] == ann.player for e in sam.events)

        # ---------------------------------------------------------------- deal 2
        start2 = await cat.event("deal_started")
        assert start2["deal"]["number"] == 2 and start2["deal"]["rules"]["pass_limit"] == 1
        ledger.deal_started(start2["deal"], DEAD_SEED, players)
        last = await play(cat, ledger, 2, [{"kind": "draw"}] * 24, clock, step_ms=10)
        assert last["outcome"]["status"] == "dead"
        refused = await cat.request("move", deal=2, move={"kind": "draw"})
        assert refused["code"] == "deal_over"

        await play(bob, ledger, 2, [{"kind": "draw"}] * 3, clock, step_ms=10)
        bob_board = (await bob.request("snapshot"))["room"]["deal"]["board"]
        # Bob drops (no close handshake) and comes back with his token.
        bob.ws.transport.abort()
        await ann.event(
            "members",
            players=[
                {"id": ann.player, "name": "Ann", "connected": True},
                {"id": bob.player, "name": "Bob", "connected": False},
                {"id": cat.player, "name": "Cat", "connected": True},
            ],
        )
        bob2 = await Client.open(server.url)
        welcome = await bob2.ok("hello", version=2, token=bob.token)
        bob2.player, bob2.token = welcome["player"], bob.token
        assert welcome["player"] == bob.player and welcome["name"] == "Bob"
        snap = welcome["room"]
        assert snap["code"] == code and snap["role"] == "player" and snap["me"] == bob.player
        assert snap["deal"]["number"] == 2 and snap["deal"]["board"] == bob_board
        assert snap["deal"]["boards"] == {}
        assert [d["number"] for d in snap["history"]] == [1]
        # A past deal comes as its boards and a summary; its logs on request, the
        # same for either subprotocol, encoded once.
        past = snap["history"][0]
        assert "logs" not in past
        assert past["boards"] == over["deal"]["boards"]
        cells = sheet["sheet"]["rows"][0]["cells"]
        # Placed by score: Ann won first (the race bonus), Bob won, Cat resigned;
        # each deal ended at its last move's time; the winners reached their
        # scores with it, Cat (her one move the resignation) never scored.
        place = {ann.player: 1, bob.player: 2, cat.player: 3}
        assert past["summary"] == {
            p: {
                "logged": len(ledger.moves[1][p]),
                "moves": over["deal"]["boards"][p]["moves"],
                "status": over["deal"]["boards"][p]["status"],
                "finished_t": ledger.moves[1][p][-1].t,
                "score": cells[p]["score"],
                "scored_t": 0 if p == cat.player else ledger.moves[1][p][-1].t,
                "place": place[p],
            }
            for p in players
        }
        assert over["deal"]["summary"] == past["summary"]
        for asker in (bob2, sam, bob2):
            got = await asker.ok("deal_log", deal=1)
            assert got == {
                "type": "deal_log",
                "id": got["id"],
                "deal": 1,
                "logs": ledger.logs_wire(1),
            }
        for number in (2, 0, 99, -1):  # running, or no such deal
            refused = await sam.request("deal_log", deal=number)
            assert refused["code"] == "wrong_deal", refused
        # A third connection with the same token takes over; the second gets 4001.
        bob3 = await Client.open(server.url)
        await bob3.ok("hello", version=2, token=bob.token)
        bob3.player, bob3.token = bob.player, bob.token
        assert await bob2.closed() == 4001
        await play(bob3, ledger, 2, [{"kind": "draw"}], clock, step_ms=10)

        # Scoring changes mid-deal: the whole sheet is rescored at once.
        clock.advance(1000)
        await ann.ok("update_settings", settings={"scoring": "vegas"})
        ev = await sam.event("settings")
        assert ev["settings"]["scoring"] == "vegas"
        rescored = await sam.event("sheet")
        assert rescored["seq"] == ev["seq"] + 1
        expected = ledger.sheet(players, Scoring.VEGAS, 100, clock.now())
        assert_sheet(rescored["sheet"], expected)
        assert [r["cells"][ann.player]["score"] for r in rescored["sheet"]["rows"]] == [
            -52 + 5 * 52 + 100,
            -52,
        ]
        assert rescored["sheet"]["rows"][0]["cells"][cat.player]["score"] == -52

        # The host moves on while Ann and Bob still play: scored where they stand.
        clock.advance(2000)
        await ann.ok("next_deal")
        over2 = await sam.event("deal_over")
        ledger.ended_at[2] = clock.now()
        assert over2["deal"]["seed"] == DEAD_SEED
        assert over2["deal"]["logs"] == ledger.logs_wire(2)
        assert over2["deal"]["boards"][ann.player]["status"] == "playing"
        sheet2 = await sam.event("sheet")
        assert_sheet(sheet2["sheet"], ledger.sheet(players, Scoring.VEGAS, 100, clock.now()))

        # ---------------------------------------------------------------- deal 3
        start3 = await ann.event(
            "deal_started",
        )
        assert start3["deal"]["number"] == 3
        ledger.deal_started(start3["deal"], THIRD_SEED, players)
        await ann.ok("update_settings", settings={"time_limit_minutes": 5, "scoring": "timed"})
        ev = await sam.event("settings")
        assert ev["round_ends_at"] == t0 + 5 * 60_000
        await play(ann, ledger, 3, [{"kind": "draw"}] * 5, clock, step_ms=3000)
        clock.advance(t0 + 5 * 60_000 - clock.now())  # time runs out
        over3 = await sam.event("deal_over")
        ledger.ended_at[3] = clock.now()
        assert over3["deal"]["seed"] == THIRD_SEED
        await sam.event("sheet")
        round_over = await sam.event("round_over")
        expected = ledger.sheet(players, Scoring.TIMED, 100, clock.now())
        assert_sheet(round_over["sheet"], expected)
        assert round_over["winners"] == expected.winners
        late = await ann.request("move", deal=3, move={"kind": "draw"})
        assert late["code"] == "wrong_state"
        snap = (await ann.ok("snapshot"))["room"]
        assert snap["state"] == "round_over" and len(snap["history"]) == 3

        # ---------------------------------------------------------------- rematch
        await ann.ok("rematch")
        start = await ann.event("deal_started")
        assert start["round"] == 2 and start["deal"]["number"] == 1
        # The new round's sheet comes first, empty, so no client shows the old one.
        fresh = await sam.event("sheet")
        assert fresh["sheet"]["rows"] == [] and fresh["sheet"]["players"] == players
        assert (await sam.event("deal_started"))["seq"] == fresh["seq"] + 1
        await ann.ok("update_settings", settings={"scoring": "cumulative_vegas"})
        carried = (await sam.event("sheet"))["sheet"]
        bank = ledger.sheet(players, Scoring.CUMULATIVE_VEGAS, 100, clock.now()).totals
        assert carried["carry"] == bank
        assert carried["totals"] == {p: bank[p] - 52 for p in players}

        await ann.ok("close_room")
        for c in (bob3, cat, sam):
            await c.event("room_closed", reason="host")
        gone = await cat.request("join_room", code=code, role="player")
        assert gone["code"] in ("no_such_room", "already_in_room")
        for c in (ann, bob3, cat, sam):
            await c.close()


async def test_undo_and_auto_complete() -> None:
    """Undo takes back the last move (score and board as before); auto-complete
    plays the rest home and wins."""
    async with running_server(draw_seed=Seeds(WIN_SEED)) as server:
        ann = await player(server, "Ann")
        await ann.ok("create_room", settings={"variant": "thoughtful", "undo": True})
        await ann.ok("start")
        view = (await ann.event("deal_started"))["deal"]["board"]
        solution = solve(board_from_view(view))
        assert solution is not None
        moves = [m.to_wire() for m in solution]
        before: dict[str, Any] = {"board": view, "score": 0}
        undone = False
        told: list[dict[str, Any]] = []  # every accepted move and its live result

        def tell(move: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
            told.append({"t": reply["t"], "move": move, "result": result_of(reply)})
            return reply

        for move in moves:
            reply = tell(move, await ann.ok("move", deal=1, move=move))
            board = after(before["board"], reply)
            if not undone and move["kind"] in ("waste_tableau", "tableau_foundation"):
                undo = {"kind": "undo"}
                back = tell(undo, await ann.ok("move", deal=1, move=undo))
                outcome = back["outcome"]
                assert outcome["undone"] and outcome["cards"] == reply["outcome"]["cards"]
                assert outcome["undid"] == move
                # The board is as before, but for the log: the move and its undo
                # are in it (the next move's number, ``logged``, is two on).
                back_board = after(board, back)
                same = {k: v for k, v in before["board"].items() if k not in ("can_undo", "logged")}
                assert {
                    k: v for k, v in back_board.items() if k not in ("can_undo", "logged")
                } == same
                assert back_board["logged"] == before["board"]["logged"] + 2
                assert back["score"] == before["score"]
                again = await ann.request("move", deal=1, move={"kind": "undo"})
                assert again["code"] == "undo_not_allowed"
                reply = tell(move, await ann.ok("move", deal=1, move=move))
                board = after(back_board, reply)
                undone = True
            before = {"board": board, "score": reply["score"]}
        assert undone and moves[-1]["kind"] == "auto_complete"
        assert reply["outcome"]["status"] == "won" and reply["outcome"]["home"] == 52
        assert len(reply["outcome"]["cards"]) > 1
        assert before["board"]["tableau"] == [{"down": 0, "up": []}] * 7
        # The revealed deal tells every move, the undo and the move it took back
        # included, exactly as the live replies did.
        over = await ann.event("deal_over")
        assert over["deal"]["logs"][ann.player] == told
