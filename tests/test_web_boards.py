"""The boards a page keeps from outcomes are the server's, in Chromium against a
real server.

A `moved` reply and a watcher's `progress` event carry the move's OUTCOME and a
digest, not the board (docs/protocol.md, "Applying an outcome"): each page keeps
its boards by applying them (client/web/outcomes.js). Here a player races a
random Classic deal (draws, recycles, pile to pile, cards home, undos, cards
turned up), watched by a spectator and by a late friend who sits the deal out;
after every move the player's board, and the mover's board on the spectator's
wall and on the late friend's, is what a `snapshot` says, in the page's memory
and on screen, and no page needed a snapshot of its own to keep up. Then a
page's board is spoiled on purpose (its own board, and a board on the wall): the
next move's digest does not match, the page takes a snapshot by itself and shows
the right board.
"""

from __future__ import annotations

import json
import random
from typing import Any

from playwright.sync_api import Browser, expect

from tests.support.web import Client, Source, legal_moves, no_errors, read_board, wait_until

KEPT = """async (who) => {
  const { state } = await import('/state.js');
  const kept = who === null ? state.room.deal.board : state.room.deal.boards[who];
  const reply = await state.conn.request('snapshot');
  const deal = reply.room.deal;
  return JSON.stringify({ kept, snap: who === null ? deal.board : deal.boards[who] });
}"""

LOGGED = """(who) => import('/state.js').then(({ state }) => {
  const deal = state.room?.deal;
  const board = deal && (who === null ? deal.board : (deal.boards || {})[who]);
  return board ? board.logged : null;
})"""

SEND = """(move) => import('/play.js').then((m) => m.sendMove(move)).then((r) => r.type)"""

# Spoils a kept board where no move of those sent next rewrites it (the tableau:
# a draw leaves it be): the top card of the last pile showing one goes onto pile
# 1, and the page draws what it now holds.
SPOIL = """async (who) => {
  const { state, render } = await import('/state.js');
  const deal = state.room.deal;
  const board = who === null ? deal.board : deal.boards[who];
  const tableau = board.tableau.map((p) => ({ down: p.down, up: p.up.slice() }));
  const from = tableau.findLastIndex((p, i) => i > 0 && p.up.length);
  tableau[0].up.push(tableau[from].up.pop());
  const spoilt = { ...board, tableau };
  if (who === null) deal.board = spoilt;
  else deal.boards[who] = spoilt;
  render();
}"""


class Watched(Client):
    """A page whose `snapshot` requests are counted: the test's own, and the
    page's (when it lost track of a board)."""

    def __init__(self, browser: Browser, base: str, label: str):
        super().__init__(browser, base, label)
        self.snapshots = 0  # sent on the page's socket, by the test or the page
        self.asked = 0  # of them, asked by the test
        self.page.on("websocket", lambda ws: ws.on("framesent", self._sent))

    def _sent(self, payload: Any) -> None:
        try:
            frame = json.loads(payload)
        except (TypeError, ValueError):
            return
        if isinstance(frame, dict) and frame.get("type") == "snapshot":
            self.snapshots += 1

    def logged(self, who: str | None) -> int | None:
        n: int | None = self.page.evaluate(LOGGED, who)
        return n

    def kept_and_snapshot(self, who: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The board the page keeps (its own: ``who`` None; else that player's),
        and the same board in a snapshot the test asks for on the page's socket."""
        self.asked += 1
        got = json.loads(self.page.evaluate(KEPT, who))
        return got["kept"], got["snap"]

    def own_snapshots(self) -> int:
        return self.snapshots - self.asked


def follows(watcher: Watched, player: str, logged: int, what: str) -> None:
    """Until the watcher's page has taken in the player's move that made it ``logged``."""
    wait_until(
        watcher.page, lambda: watcher.logged(player) == logged, f"{watcher.label} to follow {what}"
    )


def on_screen(view: dict[str, Any]) -> dict[str, Any]:
    """A board view as tests/support/web.py ``read_board`` reads it off the page."""
    waste = view["waste_cards"]
    return {
        "piles": [{"down": p["down"], "up": p["up"]} for p in view["tableau"]],
        "waste": waste[-1] if waste else None,
        "stock": view["stock"],
        "foundations": view["foundations"],
    }


def shows(page: Watched, root: str, view: dict[str, Any], what: str) -> None:
    wait_until(page.page, lambda: read_board(page.page, root) == on_screen(view), what)


HOME = {"tableau_foundation", "waste_foundation"}
FROM_WASTE = {"waste_tableau", "waste_foundation"}


def covered(kinds: set[str], turned: int) -> bool:
    """The moves were of every kind a person makes most: draws, undos, cards moved
    pile to pile, home and from the waste, and cards turned up."""
    return {"d", "u", "tableau_tableau"} <= kinds and bool(kinds & HOME) and bool(
        kinds & FROM_WASTE
    ) and turned > 0  # fmt: skip


def as_sent(b: dict[str, Any], src: Source, dst: Source) -> dict[str, Any]:
    """A move of ``legal_moves`` as a gesture sends it."""
    if src[0] == "waste":
        if dst[0] == "foundation":
            return {"kind": "waste_foundation"}
        return {"kind": "waste_tableau", "to": dst[1]}
    p, i = src[1], src[2]
    if dst[0] == "foundation":
        return {"kind": "tableau_foundation", "from": p}
    count = len(b["piles"][p]["up"]) - i
    return {"kind": "tableau_tableau", "from": p, "to": dst[1], "count": count}


def next_move(
    view: dict[str, Any], rng: random.Random, kinds: set[str], turned: int
) -> tuple[str, dict[str, Any] | str]:
    """A legal move for ``view`` (the player's board): ("key", "d"/"u"), pressed on
    the page, or ("send", move), sent as a gesture sends it. A move of a kind not
    made yet comes first (one that turns a card up while none has been), so the
    deal covers every kind it can; otherwise a random one."""
    b = on_screen(view)
    moves = legal_moves(b)
    wanted = [
        as_sent(b, src, dst)
        for src, dst in moves
        if (dst[0] == "foundation" and not kinds & HOME)
        or (src[0] == "waste" and not kinds & FROM_WASTE)
        or (src[0] == dst[0] == "tableau" and "tableau_tableau" not in kinds)
        or (turned == 0 and src[0] == "tableau" and src[2] == 0 and b["piles"][src[1]]["down"])
    ]
    if wanted:
        return "send", rng.choice(wanted)
    if view["can_undo"] and ("u" not in kinds or rng.random() < 0.15):
        return "key", "u"
    if moves and (rng.random() < 0.7 or not (view["stock"] or view["waste"])):
        return "send", as_sent(b, *rng.choice(moves))
    return "key", "d"


def promising(view: dict[str, Any]) -> bool:
    """A layout that offers, at once, a card home from the tableau and a move pile
    to pile: with those, moves of every kind follow (a deal tried over 3,000
    layouts of the engine so chosen covered them all within 130 moves)."""
    moves = legal_moves(on_screen(view))
    return any(s[0] == "tableau" and d[0] == "foundation" for s, d in moves) and any(
        s[0] == d[0] == "tableau" for s, d in moves
    )


def dealt(ann: Watched) -> dict[str, Any]:
    """Ann's board once a deal is being played."""
    got: tuple[dict[str, Any], dict[str, Any]] = wait_until(
        ann.page,
        lambda: (got := ann.kept_and_snapshot(None))[1]["status"] == "playing" and got,
        "a deal to play",
    )
    return got[0]


def move(ann: Watched, view: dict[str, Any], how: str, what: dict[str, Any] | str) -> None:
    """Make the move and wait for its reply to be taken in."""
    if how == "key":
        assert isinstance(what, str)
        ann.page.keyboard.press(what)
    else:
        assert ann.page.evaluate(SEND, what) == "moved"
    wait_until(ann.page, lambda: ann.logged(None) == view["logged"] + 1, f"{what} to be answered")


def test_every_board_kept_from_outcomes_is_the_snapshots(server: str, browser: Browser) -> None:
    ann = Watched(browser, server, "ann")
    sam = Watched(browser, server, "sam")
    bob = Watched(browser, server, "bob")
    clients = [ann, sam, bob]
    rng = random.Random(26)
    try:
        code = ann.create("Ann", undo=True, deals_per_round=1)
        ann.page.click("#btn-start")
        # The server deals at random: a deal is tried until one offers what the
        # test needs (about half do), the others resigned and dealt again.
        while not promising(dealt(ann)):
            ann.page.click("#btn-resign")
            ann.page.click("#btn-resign")  # confirmed
            ann.page.click("#btn-rematch")
            expect(ann.page.locator("#btn-rematch")).to_be_hidden()
        sam.join("Sam", code, role="spectator")
        expect(ann.page.locator("#board-host .board .tableau .pile")).to_have_count(7)
        ann_id = ann.my_id()
        tile = f'.wall-tile[data-player="{ann_id}"]'
        # Bob comes mid-deal: told so at the first press, he joins at the second,
        # sits the deal out and watches it.
        page = bob.open(f"/#join={code}")
        page.fill("#name", "Bob")
        page.click("#join-btn")
        expect(page.locator("#invite-note")).to_contain_text("A round is running")
        page.click("#join-btn")
        expect(page.locator("#table-message")).to_contain_text("sit this deal out")
        expect(bob.page.locator(tile)).to_be_visible()
        kinds: set[str] = set()
        turned = 0
        for made in range(400):
            view, snap = ann.kept_and_snapshot(None)
            assert view == snap
            if view["status"] != "playing" or (made >= 60 and covered(kinds, turned)):
                break
            how, what = next_move(view, rng, kinds, turned)
            kinds.add(what if isinstance(what, str) else what["kind"])
            move(ann, view, how, what)
            kept, snap = ann.kept_and_snapshot(None)
            assert kept == snap, (how, what)
            shows(ann, "#board-host", snap, f"Ann's board after {what}")
            turned += sum(p["down"] for p in view["tableau"]) - sum(
                p["down"] for p in snap["tableau"]
            )
            for watcher in (sam, bob):
                follows(watcher, ann_id, snap["logged"], f"Ann's {what}")
                seen, theirs = watcher.kept_and_snapshot(ann_id)
                assert seen == theirs == snap, (watcher.label, how, what)
                shows(watcher, tile, snap, f"{watcher.label}'s wall after Ann's {what}")
        # Draws (and a recycle with the D key once the stock ran out), undos, cards
        # moved and turned up.
        assert covered(kinds, turned), (kinds, turned)
        for c in clients:
            assert c.own_snapshots() == 0, c.label  # kept up by outcomes alone
        no_errors(*clients)
    except BaseException:
        for c in clients:
            c.dump()
        raise
    finally:
        for c in clients:
            c.close()


def test_a_spoilt_board_is_mended_by_a_snapshot(server: str, browser: Browser) -> None:
    ann = Watched(browser, server, "ann")
    sam = Watched(browser, server, "sam")
    clients = [ann, sam]
    try:
        code = ann.create("Ann", deals_per_round=1)
        sam.join("Sam", code, role="spectator")
        ann.page.click("#btn-start")
        expect(ann.page.locator("#board-host .board .tableau .pile")).to_have_count(7)
        ann_id = ann.my_id()
        tile = f'.wall-tile[data-player="{ann_id}"]'
        expect(sam.page.locator(tile)).to_be_visible()

        # Ann's own board, spoilt: the page shows it so until the next move.
        view, truth = ann.kept_and_snapshot(None)
        ann.page.evaluate(SPOIL, None)
        spoilt, _ = ann.kept_and_snapshot(None)
        assert spoilt != truth
        shows(ann, "#board-host", spoilt, "the spoilt board on Ann's page")
        # A draw: its outcome applies (it leaves the tableau be), but the view it
        # gives is not the server's: the digest says so, and the page takes a
        # snapshot by itself.
        move(ann, view, "key", "d")
        wait_until(ann.page, lambda: ann.own_snapshots() == 1, "Ann's page to take a snapshot")
        kept, snap = ann.kept_and_snapshot(None)
        assert kept == snap and snap["logged"] == 1
        shows(ann, "#board-host", snap, "Ann's board mended")
        # ... and it plays on from there, with nothing more to mend.
        move(ann, snap, "key", "d")
        kept, snap = ann.kept_and_snapshot(None)
        assert kept == snap and snap["logged"] == 2
        shows(ann, "#board-host", snap, "Ann's board after another draw")
        assert ann.own_snapshots() == 1

        # Ann's board on the spectator's wall, spoilt: her next move mends it.
        follows(sam, ann_id, 2, "Ann's draws")
        sam.page.evaluate(SPOIL, ann_id)
        spoilt, truth = sam.kept_and_snapshot(ann_id)
        assert spoilt != truth
        shows(sam, tile, spoilt, "the spoilt board on Sam's wall")
        assert sam.own_snapshots() == 0
        move(ann, snap, "key", "d")
        wait_until(sam.page, lambda: sam.own_snapshots() == 1, "Sam's page to take a snapshot")
        wait_until(sam.page, lambda: sam.logged(ann_id) == 3, "Sam's wall to be mended")
        kept, theirs = sam.kept_and_snapshot(ann_id)
        mine, snap = ann.kept_and_snapshot(None)
        assert kept == theirs == snap == mine
        shows(sam, tile, snap, "Ann's board mended on Sam's wall")
        no_errors(*clients)
    except BaseException:
        for c in clients:
            c.dump()
        raise
    finally:
        for c in clients:
            c.close()
