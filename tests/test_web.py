"""The browser client (client/web/) in headless Chromium against a real server.

Two players race in two pages while a third page spectates. Moves are made the way
people make them (drag and drop, clicks, keys), and each page is checked against
the others: the spectator wall shows the mover's board card for card, the rival
sees the mover's progress, a refused move shows the server's reason, a reload
restores the board, and the sheet follows the host's change of scoring. Once a
deal is over, "Past deals" shows every board and move log of it, replayed from
the revealed seed. In a Thoughtful race a Python-client player (client/) wins
first, so the race bonus shows because it was earned; undo and auto-complete are
used for real. The only frames a test tampers with are the one the seq-gap test
drops. Every page must stay free of console errors. Screenshots go to artifacts/.

Chromium comes from the system (/usr/bin/chromium); without it these tests fail
rather than skip, because CI installs it (scripts/setup.sh --dev).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

import pytest
from playwright.sync_api import Browser, WebSocketRoute, expect

from protocol.board import Board
from protocol.cards import card_str
from protocol.deal import commitment, deal_layout
from protocol.moves import Move, MoveKind, Status
from protocol.scoring import replay_outcomes
from protocol.settings import DealRules, Variant
from protocol.views import outcome_view, player_view, revealed_view
from server.rooms.proofs import prove_seed
from tests.support.solver import solve
from tests.support.web import (
    WAIT_MS,
    BotSeat,
    Client,
    check_past_deal,
    click_card,
    drag,
    find_move,
    illegal_pair,
    line_in_words,
    log_lines,
    no_errors,
    past_player,
    play_by_ui,
    read_board,
    source_locator,
    target_locator,
    unfold_house_rules,
    wait_until,
    winning_line,
)

# -- the tests ----------------------------------------------------------------------


def test_race_with_spectator(server: str, browser: Browser) -> None:
    ann = Client(browser, server, "ann")
    bob = Client(browser, server, "bob")
    sam = Client(browser, server, "sam")
    clients = [ann, bob, sam]
    try:
        _race(ann, bob, sam)
        no_errors(*clients)
    except BaseException:
        for c in clients:
            c.dump()
        raise
    finally:
        for c in clients:
            c.close()


def _race(ann: Client, bob: Client, sam: Client) -> None:
    # Lobby: every house rule is a control with its default.
    page = ann.open()
    expect(page.locator("#create-scoring")).to_have_value("standard")
    expect(page.locator("#create-draw")).to_have_value("1")
    expect(page.locator("#create-deals_per_round")).to_have_value("3")
    expect(page.locator("#create-race_bonus")).to_have_value("100")
    expect(page.locator("#create-foundation_to_tableau")).to_be_checked()
    expect(page.locator("#create-undo")).not_to_be_checked()
    ann.shot("lobby")

    code = ann.create("Ann", deals_per_round=2, undo=True)
    expect(ann.page.locator("#invite-link")).to_have_value(f"{ann.base}/#join={code}")
    bob.join("Bob", code)
    sam.join("Sam", code, role="spectator")
    expect(ann.page.locator("#members li.member")).to_have_count(2)
    expect(ann.page.locator("#spectators")).to_contain_text("Sam")
    ann_id, bob_id = ann.my_id(), bob.my_id()

    ann.page.click("#btn-start")
    for c in (ann, bob):
        expect(c.page.locator("#board-host .board .tableau .pile")).to_have_count(7)
        expect(c.page.locator("#deal-of")).to_have_text("1 of 2")
    expect(sam.page.locator(".wall-tile")).to_have_count(2)
    commitment = ann.page.locator(".seed-line .commit").get_attribute("title") or ""
    assert re.fullmatch(r"[0-9a-f]{64}", commitment), commitment
    expect(ann.page.locator("#revealed-seed")).to_have_count(0)  # secret while the deal runs
    # Identical layouts for everybody.
    assert ann.board() == bob.board()

    # Ann: a legal move by drag and drop (drawing with the D key until one shows).
    before, src, dst = find_move(ann)
    drag(ann.page, source_locator(ann.page, src), target_locator(ann.page, before, dst))
    wait_until(ann.page, lambda: ann.board() != before, "Ann's drag to land")

    # … appears on the spectator wall, card for card, and in Bob's view of his rival.
    tile = f'.wall-tile[data-player="{ann_id}"]'
    wait_until(sam.page, lambda: sam.board(tile) == ann.board(), "the wall to show Ann's board")
    ann_moves = ann.page.locator("#my-moves").inner_text()
    expect(bob.page.locator(f'.rival[data-player="{ann_id}"] .rival-moves')).to_have_text(
        f"{ann_moves} mv"
    )
    ann_home = ann.page.locator("#my-home").inner_text()
    expect(bob.page.locator(f'.rival[data-player="{ann_id}"] .rival-home')).to_have_text(ann_home)
    expect(sam.page.locator(f"{tile} .tile-score")).to_have_text(
        ann.page.locator("#my-score").inner_text()
    )

    # Ann: another legal move by clicks (select, then target).
    before, src, dst = find_move(ann)
    click_card(source_locator(ann.page, src))
    expect(source_locator(ann.page, src)).to_have_class(re.compile(r"\bselected\b"))
    click_card(target_locator(ann.page, before, dst))
    wait_until(ann.page, lambda: ann.board() != before, "Ann's click move to land")
    wait_until(
        sam.page, lambda: sam.board(tile) == ann.board(), "the wall to follow the click move"
    )

    # Bob: an illegal move is refused with the server's reason, and nothing moves.
    b = bob.board()
    assert b is not None
    pair = illegal_pair(b)
    assert pair is not None
    p, q = pair
    top = len(b["piles"][p]["up"]) - 1
    click_card(bob.page.locator(f'#board-host .card[data-pile="{p}"][data-index="{top}"]'))
    click_card(target_locator(bob.page, b, ("tableau", q)))
    status = bob.page.locator("#move-status")
    # In words on the screen; the code it was refused with is the element's data.
    expect(status.locator(".reason")).to_have_attribute(
        "data-code", re.compile(r"not_alternating_colour|not_one_lower|only_king_on_empty")
    )
    expect(status.locator(".reason")).not_to_be_empty()
    assert bob.board() == b
    # The same move by drag snaps back.
    drag(
        bob.page,
        bob.page.locator(f'#board-host .card[data-pile="{p}"][data-index="{top}"]'),
        target_locator(bob.page, b, ("tableau", q)),
    )
    expect(bob.page.locator(".drag-ghost")).to_have_count(0)
    expect(bob.page.locator("#board-host .card.drag-source")).to_have_count(0)
    assert bob.board() == b

    # Keyboard: D draws for Bob too; U takes back his last tableau move when allowed.
    stock = b["stock"]
    bob.page.locator("body").press("d")
    wait_until(bob.page, lambda: (bob.board() or {}).get("stock") != stock, "Bob's draw")
    expect(ann.page.locator(f'.rival[data-player="{bob_id}"] .rival-moves')).to_have_text("1 mv")

    ann.shot("board")
    sam.shot("wall")

    # A reload restores the seat and the board.
    mid = bob.board()
    bob.page.reload()
    expect(bob.page.locator("#room-screen")).to_be_visible()
    expect(bob.page.locator("#board-host .board")).to_be_visible()
    assert bob.board() == mid
    expect(bob.page.locator("#deal-of")).to_have_text("1 of 2")
    expect(bob.page.locator("#me-name")).to_have_text("Bob")

    # A bad setting is refused next to its field.
    field = ann.page.locator("#host-time_limit_minutes")
    field.fill("7")
    field.press("Tab")
    expect(ann.page.locator("#host-time_limit_minutes-error")).not_to_be_empty()
    # A good one applies at once: a 5-minute limit starts the round's countdown.
    field.fill("5")
    field.press("Tab")
    expect(ann.page.locator("#host-time_limit_minutes-error")).to_be_empty()
    for c in (ann, bob, sam):
        expect(c.page.locator("#round-left")).to_have_text(re.compile(r"^[45]:\d\d$"))

    # The host moves on: deal 1 goes on the sheet with Standard scores, its seed shows.
    ann_score = int(ann.page.locator("#my-score").inner_text())
    ann_moves_n = int(ann.page.locator("#my-moves").inner_text())
    bob_moves_n = int(bob.page.locator("#my-moves").inner_text())
    ann_home_n = int(ann.page.locator("#my-home").inner_text().split("/")[0])
    bob_home_n = int(bob.page.locator("#my-home").inner_text().split("/")[0])
    ann.page.click("#btn-next")
    ann.page.click('.confirm [data-confirm="yes"]')  # it asks first
    for c in (ann, bob, sam):
        expect(c.page.locator("#deal-of")).to_have_text("2 of 2")
        # Deal 1's seed is out, checked against its commitment; deal 2's stays secret.
        expect(c.page.locator("#revealed-seed")).to_have_attribute("data-deal", "1")
        expect(c.page.locator(".seed-line .ok")).to_be_visible()
    seed = sam.page.locator("#revealed-seed").inner_text()
    digest = hashlib.sha256(f"klondike-race/seed/v1:{seed}".encode()).hexdigest()
    assert digest == commitment
    cell = f'#sheet-table tr[data-deal="1"] td[data-player="{ann_id}"] .cell-score'
    expect(bob.page.locator(cell)).to_have_text(
        f"+{ann_score}" if ann_score > 0 else str(ann_score)
    )

    # Deal 1 is over for everyone: its boards (face-down cards too) and move logs
    # are in every page's "Past deals" panel, replayed from the seed.
    for c in (ann, bob, sam):
        check_past_deal(c.page, 1, seed, {ann_id: ann_moves_n, bob_id: bob_moves_n})
        expect(past_player(c.page, ann_id).locator(".card.was-down")).not_to_have_count(0)
    ann_log = log_lines(ann.page, ann_id)
    assert any(re.search(r"→ (pile \d|foundation)", line) for line in ann_log), ann_log
    assert all(line.startswith("draw ") for line in log_lines(bob.page, bob_id)[:1])
    ann.shot("past-deals", ann.page.locator("#past-panel"))

    # The host switches to Vegas: every page's sheet is rescored at once.
    ann.page.select_option("#host-scoring", "vegas")
    want_ann = -52 + 5 * ann_home_n
    want_bob = -52 + 5 * bob_home_n
    bob_cell = f'#sheet-table tr[data-deal="1"] td[data-player="{bob_id}"] .cell-score'
    for c in (ann, bob, sam):
        expect(c.page.locator(cell)).to_have_text(str(want_ann))
        expect(c.page.locator(bob_cell)).to_have_text(str(want_bob))
    expect(sam.page.locator("#rules-summary")).to_contain_text("Vegas")
    # … the running deal too (nobody has moved in deal 2: the buy-in only).
    expect(ann.page.locator("#my-score")).to_have_text("-52")
    expect(bob.page.locator(f'.rival[data-player="{ann_id}"] .rival-score')).to_have_text("-52")
    total = f'#sheet-table tfoot td[data-player="{ann_id}"]'
    expect(sam.page.locator(total)).to_have_text(str(want_ann - 52))
    ann.shot("sheet", ann.page.locator("#sheet").locator(".."))

    # Last deal: the round ends; every board and seed of it is revealed to everyone.
    ann.page.click("#btn-next")
    ann.page.click('.confirm [data-confirm="yes"]')  # it asks first
    for c in (ann, bob, sam):
        expect(c.page.locator("#round-over")).to_be_visible()
        # The felt makes way for "Past deals", which shows the last deal at first.
        expect(c.page.locator("#table")).to_be_hidden()
        expect(c.page.locator("#past-panel article.past-player")).to_have_count(2)
        expect(c.page.locator("#revealed-seed")).to_have_attribute("data-deal", "2")
        expect(c.page.locator(".seed-line .ok")).to_be_visible()
        expect(c.page.locator("#sheet-table tbody tr[data-deal]")).to_have_count(2)
        expect(c.page.locator("#past-picker button")).to_have_count(2)
    ann.shot("round-over")
    # The picker switches between the round's deals.
    expect(sam.page.locator('#past-picker button[data-deal="2"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(past_player(sam.page, ann_id).locator(".log li")).to_have_count(0)
    sam.page.click('#past-picker button[data-deal="1"]')
    expect(sam.page.locator('#past-picker button[data-deal="1"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(past_player(sam.page, ann_id).locator(".log li")).to_have_count(ann_moves_n)

    # Host removes Bob: Bob is back in the lobby with a message.
    ann.page.click(f'li.member[data-player="{bob_id}"] button')
    ann.page.click('.confirm [data-confirm="yes"]')  # it asks first
    expect(bob.page.locator("#lobby-screen")).to_be_visible()
    expect(bob.page.locator("#lobby-message")).to_contain_text("removed")
    expect(ann.page.locator("#members li.member")).to_have_count(1)


def test_phone_keyboard_and_lobby_errors(server: str, browser: Browser) -> None:
    """A phone-sized screen, the keyboard only, and errors shown where they belong."""
    eve = Client(browser, server, "eve", width=390, height=844)
    try:
        page = eve.open()
        # No name: the lobby says so by the field instead of sending anything.
        page.click("#create-btn")
        expect(page.locator("#name-error")).not_to_be_empty()
        # A setting out of range is refused by the server, next to its field.
        page.fill("#name", "Eve")
        unfold_house_rules(page)
        page.fill("#create-race_bonus", "7")
        page.click("#create-btn")
        expect(page.locator("#create-race_bonus-error")).not_to_be_empty()
        expect(page.locator("#lobby-screen")).to_be_visible()
        page.fill("#create-race_bonus", "100")
        # Unknown room code.
        page.fill("#join-code", "ZZZZZZ")
        page.click("#join-btn")
        expect(page.locator("#join-error")).to_contain_text("no open room with that code")

        # Create (keyboard: focus the button and press Enter), start, play by keys.
        page.select_option("#create-variant", "double")
        page.focus("#create-btn")
        page.keyboard.press("Enter")
        expect(page.locator("#room-screen")).to_be_visible()
        page.focus("#btn-start")
        page.keyboard.press("Enter")
        expect(page.locator("#board-host .board .tableau .pile")).to_have_count(9)
        expect(page.locator("#board-host .slot.foundation")).to_have_count(8)
        # Cards fit the phone: the board is no wider than the screen.
        right = "document.querySelector('#board-host .board').getBoundingClientRect().right"
        width = page.evaluate(right)
        assert width <= 390, width

        b = eve.board()
        assert b is not None
        page.locator("body").press("d")
        wait_until(
            page, lambda: (eve.board() or {}).get("stock") == b["stock"] - 1, "a draw by key"
        )
        # A number key selects a pile's run; Escape clears it.
        page.locator("body").press("9")
        expect(page.locator("#board-host .pile[data-pile='8'] .card.selected")).not_to_have_count(0)
        page.keyboard.press("Escape")
        expect(page.locator("#board-host .card.selected")).to_have_count(0)
        # Tab reaches the cards, and focus is visible.
        page.focus("#board-host .slot.stock")
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"
        eve.shot("phone")
        no_errors(eve)
    except BaseException:
        eve.dump()
        raise
    finally:
        eve.close()


def test_seq_gap_resyncs_from_snapshot(server: str, browser: Browser) -> None:
    """A lost event (its seq skipped) makes the page ask for a snapshot and catch up."""
    ann = Client(browser, server, "ann-gap")
    sam = Client(browser, server, "sam-gap")
    dropped: list[str] = []
    requests: list[str] = []

    def route(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()

        def to_page(message: str | bytes) -> None:
            frame = json.loads(message) if isinstance(message, str) else {}
            if frame.get("type") == "progress" and not dropped:
                dropped.append(str(message))  # lose the first progress event
                return
            ws.send(message)

        def to_server(message: str | bytes) -> None:
            if isinstance(message, str):
                requests.append(json.loads(message).get("type", ""))
            upstream.send(message)

        upstream.on_message(to_page)
        ws.on_message(to_server)

    sam.page.route_web_socket(re.compile(r"/ws$"), route)
    try:
        code = ann.create("Ann")
        sam.join("Sam", code, role="spectator")
        ann.page.click("#btn-start")
        tile = ".wall-tile"
        expect(sam.page.locator(tile)).to_have_count(1)
        wait_until(
            sam.page, lambda: sam.board(tile) == ann.board(), "the wall to show the dealt board"
        )

        first = ann.board()
        assert first is not None
        ann.page.locator("body").press("d")
        wait_until(sam.page, lambda: dropped, "the first progress event to be dropped")
        wait_until(
            ann.page,
            lambda: (ann.board() or {}).get("stock") == first["stock"] - 1,
            "Ann's first draw",
        )
        assert sam.board(tile) == first  # the spectator missed it
        assert "snapshot" not in requests

        ann.page.locator("body").press("d")
        wait_until(sam.page, lambda: "snapshot" in requests, "the spectator to ask for a snapshot")
        wait_until(
            sam.page,
            lambda: sam.board(tile) == ann.board(),
            "the wall to catch up from the snapshot",
        )
        expect(sam.page.locator(f"{tile} .tile-status")).to_have_text("playing")
        no_errors(ann, sam)
    except BaseException:
        ann.dump()
        sam.dump()
        raise
    finally:
        ann.close()
        sam.close()


def test_moves_carry_their_number_and_a_lost_reply_is_retried(
    server: str, browser: Browser
) -> None:
    """Every move frame carries ``n``, the board's ``logged``. A move whose reply is
    lost with the connection (the server played it) is sent again, the same, once
    the page has resumed; the reply is the original one and the move is played
    once (docs/protocol.md, ``move``). The resumed room view holds the move
    already: the page keeps it, checked by the reply's digest, with no snapshot."""
    ann = Client(browser, server, "ann-n")
    sent: list[dict[str, Any]] = []  # every move frame the page sent
    snapshots: list[dict[str, Any]] = []  # every snapshot request the page sent
    replies: list[dict[str, Any]] = []  # every moved reply that reached the page
    cut: list[dict[str, Any]] = []  # the one reply lost with its connection
    armed: list[bool] = []

    def route(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()

        def to_server(message: str | bytes) -> None:
            frame = json.loads(message) if isinstance(message, str) else {}
            if frame.get("type") == "move":
                sent.append(frame)
            if frame.get("type") == "snapshot":
                snapshots.append(frame)
            upstream.send(message)

        def to_page(message: str | bytes) -> None:
            frame = json.loads(message) if isinstance(message, str) else {}
            if frame.get("type") == "moved":
                if armed and not cut:
                    cut.append(frame)
                    ws.close()  # the page's connection goes, and the reply with it
                    return
                replies.append(frame)
            ws.send(message)

        upstream.on_message(to_page)
        ws.on_message(to_server)

    ann.page.route_web_socket(re.compile(r"/ws$"), route)
    try:
        ann.create("Ann")
        ann.page.click("#btn-start")
        expect(ann.page.locator("#board-host .board .tableau .pile")).to_have_count(7)
        first = ann.board()
        assert first is not None
        stock = first["stock"]

        def draw(left: int, what: str) -> None:
            ann.page.locator("body").press("d")
            wait_until(ann.page, lambda: (ann.board() or {}).get("stock") == left, what)

        draw(stock - 1, "the first draw")
        armed.append(True)
        draw(stock - 2, "the draw whose reply was lost, sent again")
        assert cut and len(sent) == 3
        expect(ann.page.locator("#conn")).to_have_attribute("data-state", "online")
        draw(stock - 3, "a draw after the resume")

        def request(frame: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in frame.items() if k != "id"}

        assert [f["n"] for f in sent] == [0, 1, 1, 2]
        assert request(sent[1]) == request(sent[2]) and sent[1]["id"] != sent[2]["id"]
        assert request(replies[1]) == request(cut[0])  # the original reply, again
        # A reply tells the move (its outcome and the digest), not the board.
        assert [r["outcome"]["moves"] for r in replies] == [1, 2, 3]
        assert all("board" not in r and len(r["digest"]) == 8 for r in replies)
        assert not snapshots
        assert (ann.board() or {}).get("stock") == stock - 3  # played once, not twice
        no_errors(ann)
    except BaseException:
        ann.dump()
        raise
    finally:
        ann.close()


MAPPING = """async () => {
  const m = await import('/cards.js');
  const view = {
    variant: 'classic', draw: 1, stock: 5, waste: 2, waste_cards: ['4S'],
    foundations: ['AC', null, null, null],
    tableau: [
      {down: 0, up: ['KH', 'QS', 'JH']}, {down: 2, up: ['9D']}, {down: 0, up: []},
      {down: 1, up: ['QC']}, {down: 0, up: ['5H']}, {down: 0, up: ['6C']}, {down: 6, up: ['2C']},
    ],
  };
  const T = (pile, index) => ({zone: 'tableau', pile, index});
  const F = (index) => ({zone: 'foundation', index});
  const P = (pile) => ({zone: 'tableau', pile});
  const W = {zone: 'waste'};
  return {
    run: m.moveFor(view, T(0, 1), P(2)),
    top: m.moveFor(view, T(4, 0), P(5)),
    samePile: m.moveFor(view, T(0, 1), P(0)),
    wastePile: m.moveFor(view, W, P(1)),
    wasteHome: m.moveFor(view, W, F(3)),
    pileHome: m.moveFor(view, T(6, 0), F(0)),
    runHome: m.moveFor(view, T(0, 1), F(2)),
    back: m.moveFor(view, F(0), P(1)),
    dblWaste: m.homeMove(view, W),
    dblTop: m.homeMove(view, T(0, 2)),
    dblBuried: m.homeMove(view, T(0, 1)),
    stock: m.stockMove(view),
    recycle: m.stockMove({...view, stock: 0}),
    keyFit: m.fittingSource(view, 0, 3),
    runStart: m.runStart(view, 0),
    suitDouble: m.foundationSuit({foundations: new Array(8).fill(null)}, 3),
  };
}"""


def test_move_mapping_in_browser(server: str, browser: Browser) -> None:
    """cards.js: which protocol move a click, drag, double-click or key means."""
    client = Client(browser, server, "mapping")
    try:
        got = client.open().evaluate(MAPPING)
        assert got == {
            "run": {"kind": "tableau_tableau", "from": 0, "to": 2, "count": 2},
            "top": {"kind": "tableau_tableau", "from": 4, "to": 5, "count": 1},
            "samePile": None,
            "wastePile": {"kind": "waste_tableau", "to": 1},
            "wasteHome": {"kind": "waste_foundation"},
            "pileHome": {"kind": "tableau_foundation", "from": 6},
            "runHome": None,
            "back": {"kind": "foundation_tableau", "from": 0, "to": 1},
            "dblWaste": {"kind": "waste_foundation"},
            "dblTop": {"kind": "tableau_foundation", "from": 0},
            "dblBuried": None,
            "stock": {"kind": "draw"},
            "recycle": {"kind": "recycle"},
            "keyFit": {"zone": "tableau", "pile": 0, "index": 2},
            "runStart": 0,
            "suitDouble": "D",
        }
        no_errors(client)
    finally:
        client.close()


REPLAY = """async (seeds) => {
  const m = await import('/replay.js');
  const deals = [];
  for (const seed of seeds) {
    for (const variant of ['classic', 'double']) {
      deals.push({seed, variant, commitment: await m.commitmentOf(seed),
        ...(await m.dealLayout(seed, variant))});
    }
  }
  // A seed that does not match its commitment: the log (with no results) is told
  // without cards, and not followed.
  const board = {variant: 'classic', draw: 1, tableau: [], foundations: []};
  const move = {kind: 'tableau_tableau', from: 1, to: 4, count: 2};
  const forged = await m.explainDeal({number: 1, seed: '0', commitment: 'ab',
    boards: {p: board}, logs: {p: [{t: 61500, move}]}});
  // The right seed, but a result naming a card that is not where the move takes it
  // from: the log is told from its result, and the check says it does not follow.
  const layout = await m.dealLayout('0');
  const notTop = layout.piles[0][0] === 'AS' ? 'KS' : 'AS';
  const lied = await m.explainDeal({number: 1, seed: '0', commitment: await m.commitmentOf('0'),
    boards: {p: board}, logs: {p: [{t: 1000, move: {kind: 'tableau_foundation', from: 0},
      result: {cards: [notTop], turned: null, events: ['tableau_foundation'], pass_started: 0,
        status: 'playing', undone: false}}]}});
  return {deals, forged, lied, notTop};
}"""


def test_seed_check_and_layout_in_browser(server: str, browser: Browser) -> None:
    """replay.js: the commitment and the layout a seed deals, as the engine has them."""
    client = Client(browser, server, "replay")
    seeds = ["0", "", "héllo wörld ♠", "x" * 119, "0f82256c574cf1c2e381c90f1b29bc1f"]
    try:
        got = client.open().evaluate(REPLAY, seeds)
        for deal in got["deals"]:
            seed = deal["seed"]
            digest = hashlib.sha256(f"klondike-race/seed/v1:{seed}".encode()).hexdigest()
            assert deal["commitment"] == digest, seed
            piles, stock = deal_layout(seed, Variant(deal["variant"]))
            assert deal["piles"] == [[card_str(c) for c in pile] for pile in piles], seed
            assert deal["stock"] == [card_str(c) for c in stock], seed
        assert got["forged"]["seedOk"] is False
        steps = got["forged"]["players"]["p"]
        assert steps["replayed"] is False
        assert [s["text"] for s in steps["steps"]] == ["pile 2 → pile 5 (2 cards)"]
        assert steps["error"] == "seed does not match"
        assert got["lied"]["seedOk"] is True
        lied = got["lied"]["players"]["p"]
        top = ("10" if got["notTop"][0] == "T" else got["notTop"][0]) + "♣♦♥♠"[
            "CDHS".index(got["notTop"][1])
        ]
        assert [s["text"].replace("\ufe0e", "") for s in lied["steps"]] == [
            f"{top} pile 1 → foundation"
        ]
        assert lied["replayed"] is False
        assert lied["error"] == f"{got['notTop']} is not on top of pile 1"
        no_errors(client)
    finally:
        client.close()


FOLLOW = """async (past) => {
  const m = await import('/replay.js');
  const checked = await m.checkDeal(past);
  const told = Object.fromEntries(
    Object.entries(past.logs).map(([id, log]) => [id, m.tellLog(log)]));
  return {checked, told};
}"""


def revealed_by_engine(seed: str, plays: dict[str, tuple[DealRules, list[Move]]]) -> dict[str, Any]:
    """A revealed deal built the way the server builds one (server/core/views.py):
    each log replayed by the engine, every move with its outcome_view."""
    boards, logs = {}, {}
    for name, (rules, line) in plays.items():
        board = Board.deal(seed, rules)
        outcomes = [board.apply(move) for move in line]
        assert replay_outcomes(seed, rules, line) == outcomes
        boards[name] = revealed_view(board)
        logs[name] = [
            {"t": 1000 * i, "move": o.move.to_wire(), "result": outcome_view(o)}
            for i, o in enumerate(outcomes)
        ]
    return {
        "number": 1,
        "seed": seed,
        "commitment": commitment(seed),
        "boards": boards,
        "logs": logs,
    }


def random_line(seed: str, rules: DealRules, n: int) -> list[Move]:
    """Up to ``n`` random legal moves, with an undo wherever one may follow."""
    rng = random.Random(seed)
    board = Board.deal(seed, rules)
    line: list[Move] = []
    while len(line) < n and board.status is Status.PLAYING:
        options = board.legal_moves()
        move = Move(MoveKind.UNDO) if board.can_undo() and rng.random() < 0.3 else None
        move = move or (rng.choice(options) if options else Move(MoveKind.RESIGN))
        board.apply(move)
        line.append(move)
    return line


def test_logs_followed_from_the_seed_in_every_variant(server: str, browser: Browser) -> None:
    """replay.js follows the engine's results from the seed's layout to the revealed
    board in every variant (draw three, Double's two foundations a suit, undos, an
    auto-complete), and tells each move as the engine reported it."""
    seed = "follow-3"
    won = DealRules(variant=Variant.THOUGHTFUL, undo=True)
    win = solve(Board.deal("race-27", won))
    assert win is not None and win[-1].kind is MoveKind.AUTO_COMPLETE
    all_rules = {
        "classic": DealRules(undo=True),
        "three": DealRules(draw=3, pass_limit=3, undo=True),
        "double": DealRules(variant=Variant.DOUBLE, undo=True),
        "thoughtful": DealRules(variant=Variant.THOUGHTFUL, draw=3, undo=True),
    }
    plays = {name: (rules, random_line(seed, rules, 300)) for name, rules in all_rules.items()}
    client = Client(browser, server, "follow")
    try:
        page = client.open()
        for past in (
            revealed_by_engine(seed, plays),
            revealed_by_engine("race-27", {"won": (won, win)}),
        ):
            got = page.evaluate(FOLLOW, past)
            assert got["checked"]["seedOk"] is True
            for name, log in past["logs"].items():
                assert got["checked"]["players"][name] == {"replayed": True, "error": None}, name
                texts = [step["text"].replace("\ufe0e", "") for step in got["told"][name]]
                assert len(texts) == len(log)
                for text, entry in zip(texts, log, strict=True):
                    kind, result = entry["move"]["kind"], entry["result"]
                    if result["undone"]:
                        assert text.startswith("undo: "), text
                    elif kind not in ("draw", "recycle", "auto_complete", "resign"):
                        head = result["cards"][0]
                        assert text.startswith(card_text(head)), (text, entry)
                    if result["turned"]:
                        assert text.endswith(f" · turns up {card_text(result['turned'])}"), text
        no_errors(client)
    finally:
        client.close()


def card_text(code: str) -> str:
    """A card as the panel writes it: "10♥" for TH."""
    return ("10" if code[0] == "T" else code[0]) + "♣♦♥♠"["CDHS".index(code[1])]


# FIPS 180-2, appendix B (and the NIST example values): the published SHA-256 test
# vectors, None standing for one million repetitions of "a".
SHA256_VECTORS = {
    "": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq": (
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    None: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
}

SHA256 = """async (vectors) => {
  const m = await import('/replay.js');
  const hex = (b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  const bytesOf = (text) => text === null
    ? new Uint8Array(1000000).fill(0x61) : new TextEncoder().encode(text);
  const subtle = async (bytes) =>
    hex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
  const out = {secure: window.isSecureContext, usesSubtle: m.usesSubtle(),
    fallback: [], subtle: [], lengths: [], seeds: {}};
  for (const text of vectors) {
    out.fallback.push(hex(m.sha256(bytesOf(text))));
    out.subtle.push(await subtle(bytesOf(text)));
  }
  // Every length across the padding boundaries of one, two and three blocks.
  for (let n = 0; n <= 200; n += 1) {
    const bytes = Uint8Array.from({length: n}, (_, i) => (i * 131 + n) & 0xff);
    out.lengths.push([hex(m.sha256(bytes)), await subtle(bytes)]);
  }
  // The page's own checks, by crypto.subtle and then by the fallback alone.
  const seed = 'héllo wörld ♠';
  const check = async () => ({usesSubtle: m.usesSubtle(), commitment: await m.commitmentOf(seed),
    layout: await m.dealLayout(seed, 'double')});
  out.seeds.subtle = await check();
  Object.defineProperty(window, 'isSecureContext', {value: false, configurable: true});
  out.seeds.fallback = await check();
  delete window.isSecureContext;
  return out;
}"""


def test_sha256_fallback_pinned_and_agrees_with_crypto_subtle(
    server: str, browser: Browser
) -> None:
    """replay.js: its written-out SHA-256 gives the published test vectors, and the
    page's crypto.subtle agrees with it, on the vectors, on every message length up
    to three blocks, and on the seed checks the page makes either way."""
    client = Client(browser, server, "sha256")
    vectors = list(SHA256_VECTORS)
    try:
        got = client.open().evaluate(SHA256, vectors)
        # Served from 127.0.0.1, the page is a secure context and uses crypto.subtle.
        assert got["secure"] is True and got["usesSubtle"] is True
        assert got["fallback"] == list(SHA256_VECTORS.values())
        assert got["subtle"] == list(SHA256_VECTORS.values())
        assert len(got["lengths"]) == 201
        for n, (fallback, subtle) in enumerate(got["lengths"]):
            data = bytes((i * 131 + n) & 0xFF for i in range(n))
            assert fallback == subtle == hashlib.sha256(data).hexdigest(), n
        by_subtle, by_fallback = got["seeds"]["subtle"], got["seeds"]["fallback"]
        assert by_subtle["usesSubtle"] is True and by_fallback["usesSubtle"] is False
        seed = "héllo wörld ♠"
        digest = hashlib.sha256(f"klondike-race/seed/v1:{seed}".encode()).hexdigest()
        assert by_subtle["commitment"] == by_fallback["commitment"] == digest
        piles, stock = deal_layout(seed, Variant.DOUBLE)
        want = {
            "piles": [[card_str(c) for c in p] for p in piles],
            "stock": list(map(card_str, stock)),
        }
        assert by_subtle["layout"] == by_fallback["layout"] == want
        no_errors(client)
    finally:
        client.close()


def test_thoughtful_race_first_finisher_undo_auto_complete(server: str, browser: Browser) -> None:
    """Everything for real, in a Thoughtful deal (every card face up, so it can be won
    on purpose): a Python-client player wins first and the pages show its race bonus;
    Bob, on a phone, makes a move and takes it back with Undo; Ann plays a winning
    line by keys and clicks until auto-complete and presses it. Then the deal is in
    every page's "Past deals" with all three logs, replayed move by move."""
    ann = Client(browser, server, "ann-t")
    bob = Client(browser, server, "bob-t", width=390, height=844)
    clients = [ann, bob]
    cy: BotSeat | None = None
    try:
        code = ann.create("Ann", variant="thoughtful", deals_per_round=10, undo=True)
        bob.join("Bob", code)
        cy = BotSeat(server, "Cy")
        cy.run(cy.session.join_room(code, "player"))
        expect(ann.page.locator("#members li.member")).to_have_count(3)
        ann_id, bob_id = ann.my_id(), bob.my_id()
        cy_id = cy.session.room.me if cy.session.room else ""
        ann.page.click("#btn-start")

        # Not every Thoughtful deal is won by the bot's search: the host moves on
        # until one is (7 in 10 are).
        number, line, view = 0, None, {}
        for number in range(1, 9):
            view = cy.dealt(number)
            for c in (ann, bob):
                expect(c.page.locator("#deal-of")).to_have_text(f"{number} of 10")
            line = winning_line(view)
            if line:
                break
            ann.page.click("#btn-next")
            ann.page.click('.confirm [data-confirm="yes"]')  # it asks first
        assert line, "the bot found no winning line in 8 deals"
        # The pages were dealt the bot's layout.
        b = ann.board()
        assert b is not None
        assert [p["up"] for p in b["piles"]] == [p["up"] for p in view["tableau"]]

        # Cy wins first: both pages name Cy and the bonus.
        cy.play(line, number)
        for c in (ann, bob):
            notice = c.page.locator("#first-finisher")
            expect(notice).to_contain_text("Cy finished first")
            expect(notice).to_contain_text("100")
            expect(c.page.locator(f'.rival[data-player="{cy_id}"] .first-badge')).to_be_visible()
            live = f'#sheet-table tr[data-deal="{number}"] td[data-player="{cy_id}"]'
            expect(c.page.locator(f"{live} .bonus")).to_contain_text("★100")

        # Bob: a draw cannot be taken back, and auto-complete is not there yet: the
        # server says why. Then a real move, taken back with the Undo button.
        bp = bob.page
        expect(bp.locator("#btn-undo")).to_be_disabled()
        bp.locator("body").press("d")
        expect(bp.locator("#my-moves")).to_have_text("1")
        bp.locator("body").press("u")
        reason = bp.locator("#move-status .reason")
        expect(reason).to_have_attribute("data-code", "undo_not_allowed")
        expect(reason).to_have_text("There is nothing here to undo.")
        bp.locator("body").press("a")
        expect(reason).to_have_attribute("data-code", "auto_complete_unavailable")
        expect(reason).to_contain_text("Auto-complete works once")
        before, src, dst = find_move(bob)
        moves_before = bp.locator("#my-moves").inner_text()
        click_card(source_locator(bp, src))
        click_card(target_locator(bp, before, dst))
        wait_until(bp, lambda: bob.board() != before, "Bob's move to land")
        expect(bp.locator("#btn-undo")).to_be_enabled()
        bp.click("#btn-undo")
        wait_until(bp, lambda: bob.board() == before, "the undo to put the board back")
        expect(bp.locator("#my-moves")).to_have_text(moves_before)
        expect(bp.locator("#btn-undo")).to_be_disabled()
        bob_log_n = int(moves_before) + 3  # the draws, the move, its undo and the resign
        bp.click("#btn-resign")
        bp.click("#btn-resign")
        expect(bp.locator("#notices")).to_contain_text("You resigned this deal")

        # Ann: the winning line by keys and clicks, up to auto-complete, then the button.
        expect(ann.page.locator("#btn-auto")).to_be_hidden()
        play_by_ui(ann, line[:-1])
        expect(ann.page.locator("#btn-auto")).to_be_visible()
        ann.page.click("#btn-auto")

        # The deal is over for everyone; the next one starts. The sheet keeps Cy's bonus.
        row = f'#sheet-table tr[data-deal="{number}"]'
        for c in (ann, bob):
            expect(c.page.locator("#deal-of")).to_have_text(f"{number + 1} of 10")
            expect(c.page.locator(f'{row} td.first[data-player="{cy_id}"] .bonus')).to_have_text(
                " ★100"
            )
            expect(c.page.locator(f'{row} td[data-player="{ann_id}"]')).to_have_class(
                re.compile(r"\bstatus-won\b")
            )
            expect(c.page.locator(f'{row} td[data-player="{ann_id}"] .bonus')).to_have_count(0)
            expect(c.page.locator(f'{row} td[data-player="{bob_id}"]')).to_have_class(
                re.compile(r"\bstatus-resigned\b")
            )

        # Past deals: every log of the deal, in words the engine agrees with.
        revealed = ann.page.locator("#revealed-seed")
        expect(revealed).to_have_attribute("data-deal", str(number))
        seed = revealed.inner_text()
        words = line_in_words(view, line)
        for c in (ann, bob):
            check_past_deal(
                c.page, number, seed, {ann_id: len(line), bob_id: bob_log_n, cy_id: len(line)}
            )
            assert log_lines(c.page, ann_id) == words
            assert log_lines(c.page, cy_id) == words
            expect(past_player(c.page, cy_id).locator(".first-badge")).to_be_visible()
            bob_log = log_lines(c.page, bob_id)
            assert bob_log[-1] == "resigned", bob_log
            assert bob_log[-2].startswith("undo: "), bob_log
        # A reload resumes into a snapshot, whose history holds no logs: the panel
        # asks for them (deal_log) and tells and replays the very same moves.
        bp.reload()
        check_past_deal(bp, number, seed, {ann_id: len(line), bob_id: bob_log_n, cy_id: len(line)})
        assert log_lines(bp, ann_id) == words
        assert log_lines(bp, bob_id)[-1] == "resigned"
        # The panel fits a phone.
        width = bp.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        bob.shot("past-deals-phone", bp.locator("#past-panel"))
        no_errors(*clients)
    except BaseException:
        for c in clients:
            c.dump()
        raise
    finally:
        if cy is not None:
            cy.close()
        for c in clients:
            c.close()


FOLLOW_LINE = """async ([seed, line, rules]) => {
  const m = await import('/replay.js');
  return await m.followLine(seed, line, rules);
}"""


def test_follow_line_matches_the_engine_at_every_step(server: str, browser: Browser) -> None:
    """replay.js followLine: a proof's moves, followed from the seed's layout by
    their results alone, are the engine's board after every move, ending won; a
    result that does not fit the cards is refused, and a line that ends short of
    home is not won."""
    client = Client(browser, server, "follow-line")
    try:
        page = client.open()
        proofs = []
        for draw in (1, 3):
            rules = DealRules(draw=draw)
            for i in range(20):
                seed = f"line-{draw}-{i}"
                proof = prove_seed(seed, rules, 60_000)[2]
                if proof is not None:
                    proofs.append((seed, rules, proof))
                    break
        assert len(proofs) == 2
        for seed, rules, proof in proofs:
            wire = proof.to_wire()
            line = [
                {"move": m, "result": r}
                for m, r in zip(wire["moves"], wire["results"], strict=True)
            ]
            got = page.evaluate(
                FOLLOW_LINE, [seed, line, {"variant": "classic", "draw": rules.draw}]
            )
            assert got["won"] is True
            board = Board.deal(seed, rules)
            views = [player_view(board)]
            for move in proof.moves:
                board.apply(move)
                views.append(player_view(board))
            assert len(got["boards"]) == len(views) == wire["length"] + 1
            for k, (js, py) in enumerate(zip(got["boards"], views, strict=True)):
                assert js["tableau"] == py["tableau"], (seed, k)
                assert js["foundations"] == py["foundations"], (seed, k)
                assert (js["stock"], js["waste"]) == (py["stock"], py["waste"]), (seed, k)
                assert js["waste_cards"][-1:] == py["waste_cards"][-1:], (seed, k)
            assert got["boards"][-1]["home"] == 52
            short = page.evaluate(FOLLOW_LINE, [seed, line[:-1], {"draw": rules.draw}])
            assert short["won"] is False
            bad = [dict(step) for step in line]
            bad[0] = {**bad[0], "result": {**bad[0]["result"], "cards": ["ZZ"]}}
            with pytest.raises(Exception, match=r"(is|are) not on top"):
                page.evaluate(FOLLOW_LINE, [seed, bad, {"draw": rules.draw}])
        no_errors(client)
    finally:
        client.close()


def test_winning_line_steps_to_a_won_board(server: str, browser: Browser) -> None:
    """Past deals of a winnable deal: "Show the winning line" steps (buttons and
    keys) from the layout the seed deals through every move of the proof, moved
    by the engine's results, to a board with every card home."""
    ann = Client(browser, server, "ann-line")
    try:
        page = ann.page
        ann.create("Ann", deals="winnable", deals_per_round=1)
        page.click("#btn-start")  # answered once the server has a proven seed
        expect(page.locator("#deal-of")).to_have_text("1 of 1", timeout=4 * WAIT_MS)
        page.click("#btn-resign")
        page.click("#btn-resign")
        toggle = page.locator("#past-panel .proof-toggle")
        expect(toggle).to_have_text("Show the winning line", timeout=2 * WAIT_MS)
        expect(toggle).to_have_attribute("aria-expanded", "false")
        told = page.locator("#past-panel .past-proof").inner_text()
        found = re.search(r"in (\d+) moves", told)
        assert found, told
        n = int(found.group(1))
        seed = page.locator("#past-panel .past-seed .seed").inner_text()
        stepper = page.locator("#past-panel .proof-stepper")
        expect(stepper).to_be_hidden()
        toggle.focus()
        page.keyboard.press("Enter")
        expect(toggle).to_have_attribute("aria-expanded", "true")
        count = stepper.locator(".proof-count")
        expect(count).to_have_text(f"move 0 of {n}")
        expect(stepper.locator(".proof-move")).to_have_text("the dealt layout")
        # The layout the seed deals, as the engine deals it: nothing home yet.
        start = read_board(page, "#past-panel .proof-stepper")
        assert start is not None
        piles, stock = deal_layout(seed, Variant.CLASSIC)
        assert [p["down"] for p in start["piles"]] == list(range(7))
        assert [p["up"] for p in start["piles"]] == [[card_str(p[-1])] for p in piles]
        assert start["stock"] == len(stock) and start["foundations"] == [None] * 4
        expect(stepper).to_have_attribute("data-won", "false")
        # Every move, one by one, from the keyboard.
        stepper.locator('button[data-step="next"]').focus()
        page.keyboard.press("Enter")
        expect(count).to_have_text(f"move 1 of {n}")
        for k in range(2, n + 1):
            page.keyboard.press("ArrowRight")
            expect(count).to_have_text(f"move {k} of {n}")
        expect(stepper).to_have_attribute("data-won", "true")
        expect(stepper.locator(".proof-won")).to_be_visible()
        expect(stepper.locator('button[data-step="next"]')).to_have_attribute(
            "aria-disabled", "true"
        )
        end = read_board(page, "#past-panel .proof-stepper")
        assert end is not None
        assert sorted(end["foundations"]) == ["KC", "KD", "KH", "KS"]
        assert all(p == {"down": 0, "up": []} for p in end["piles"])
        assert end["stock"] == 0 and end["waste"] is None
        # Back one move: not won; first and last by their buttons.
        page.keyboard.press("ArrowLeft")
        expect(count).to_have_text(f"move {n - 1} of {n}")
        expect(stepper).to_have_attribute("data-won", "false")
        expect(stepper.locator(".proof-won")).to_be_hidden()
        stepper.locator('button[data-step="first"]').click()
        expect(count).to_have_text(f"move 0 of {n}")
        stepper.locator('button[data-step="last"]').click()
        expect(count).to_have_text(f"move {n} of {n}")
        expect(stepper).to_have_attribute("data-won", "true")
        no_errors(ann)
    finally:
        ann.close()


def test_winnable_setting_and_its_revealed_proof(server: str, browser: Browser) -> None:
    """The host's settings offer ``deals`` (random / winnable, with its hint); a
    winnable deal, once over, says in "Past deals" how long its proven line is and
    how hard, as the server's engine replayed it (docs/rules.md §9)."""
    ann = Client(browser, server, "ann-w")
    try:
        page = ann.open()
        unfold_house_rules(page)  # the lobby folds them behind their summary line
        options = page.locator("#create-deals option")
        expect(options).to_have_count(2)
        assert options.all_inner_texts() == ["Random", "Winnable"]
        hint = "every deal proven winnable by a solver, replayed by the engine"
        expect(page.locator('label[for="create-deals"]')).to_contain_text(hint)
        ann.create("Ann", deals="winnable", deals_per_round=1)
        expect(page.locator("#host-deals")).to_have_value("winnable")
        expect(page.locator('label[for="host-deals"]')).to_contain_text(hint)
        page.click("#btn-start")  # answered once the server has a proven seed
        expect(page.locator("#deal-of")).to_have_text("1 of 1", timeout=4 * WAIT_MS)
        page.click("#btn-resign")
        page.click("#btn-resign")
        proof = page.locator("#past-panel .past-proof")
        expect(proof).to_have_text(
            re.compile(r"^winnable — one way to win in \d+ moves \((easy|medium|hard|expert)\)$"),
            timeout=2 * WAIT_MS,
        )
        no_errors(ann)
    finally:
        ann.close()
