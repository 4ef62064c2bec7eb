"""Driving the browser client (client/web/) in headless Chromium: people as pages.

Shared by every tests/test_web*.py module: the ``browser`` and ``server`` fixtures
live in tests/conftest.py; here are :class:`Client` (one person in their own
browser context), reading boards from the DOM, finding legal moves on them, and
playing them by the gestures people use.

Chromium comes from the system (/usr/bin/chromium); without it these tests fail
rather than skip, because CI installs it (scripts/setup.sh --dev).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, Locator, Page, expect

from client import Session, connect
from client.bot import Bot
from client.bot import board_from_view as bot_board
from protocol.cards import card_str
from protocol.moves import Move, MoveKind, Status
from protocol.views import player_view
from tests.support.waiting import eventually_blocking

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-quic",
    "--disable-component-update",
    "--disable-sync",
]
RANKS = "A23456789TJQK"
WAIT_MS = 30_000  # a bound on a wait that would otherwise hang (tests/support/waiting.py)
expect.set_options(timeout=WAIT_MS)  # Playwright's own waits: 5 s unless told
LAPTOP = (1280, 800)  # the laptop page most browser tests use

T = TypeVar("T")


class Client:
    """One person in their own browser context (own localStorage, own session)."""

    def __init__(
        self,
        browser: Browser,
        base: str,
        label: str,
        width: int = 1280,
        height: int = 900,
        reduced_motion: bool = False,
    ):
        self.base = base
        self.label = label
        self.context = browser.new_context(
            viewport={"width": width, "height": height},
            reduced_motion="reduce" if reduced_motion else "no-preference",
        )
        self.context.set_default_timeout(WAIT_MS * 2)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.frames: deque[str] = deque(maxlen=60)  # the last frames, shown when a test fails
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"{label}: page error: {exc}"))
        self.page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        ws.on("framesent", lambda payload: self.frames.append(f"→ {str(payload)[:240]}"))
        ws.on("framereceived", lambda payload: self.frames.append(f"← {str(payload)[:240]}"))
        ws.on("close", lambda _ws: self.frames.append("× closed"))

    def dump(self) -> None:
        print(f"--- {self.label}: last frames ---")
        for line in self.frames:
            print(line)

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(f"{self.label}: console error: {msg.text}")

    def open(self, path: str = "/") -> Page:
        self.page.goto(self.base + path)
        expect(self.page.locator("#conn")).to_be_visible()
        return self.page

    def create(self, name: str, **settings: Any) -> str:
        """Create a room from the lobby's form. Without a break between deals
        unless ``break_seconds`` is given (tests/test_web_break.py gives one)."""
        settings = {"break_seconds": 0, **settings}
        page = self.open()
        page.fill("#name", name)
        unfold_house_rules(page)
        for field, value in settings.items():
            control = page.locator(f"#create-{field}")
            if isinstance(value, bool):
                control.set_checked(value)
            elif control.evaluate("el => el.tagName") == "SELECT":
                control.select_option(str(value))
            else:
                control.fill(str(value))
        page.click("#create-btn")
        expect(page.locator("#room-screen")).to_be_visible()
        code = page.locator("#room-code").inner_text()
        assert re.fullmatch(r"[23456789A-HJKMNP-Z]{6}", code), code
        return code

    def join(self, name: str, code: str, role: str = "player") -> None:
        page = self.open(f"/#join={code}")
        expect(page.locator("#join-code")).to_have_value(code)  # the invite link filled it in
        page.fill("#name", name)
        page.check(f"input[name=role][value={role}]")
        page.click("#join-btn")
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#room-code")).to_have_text(code)

    def my_id(self) -> str:
        me = self.page.locator("li.member", has=self.page.locator(".tag", has_text="you"))
        pid = me.get_attribute("data-player")
        assert pid
        return pid

    def board(self, root: str = "#board-host") -> dict[str, Any] | None:
        return read_board(self.page, root)

    def shot(self, name: str, locator: Locator | None = None) -> Path:
        path = ARTIFACTS / f"{name}.png"
        if locator is None:
            self.page.screenshot(path=str(path), full_page=True)
        else:
            locator.screenshot(path=str(path))
        return path

    def close(self) -> None:
        self.context.close()


def keep_name(person: Client, handle: str) -> Page:
    """Take ``handle`` from the lobby (Keep your name) and keep the recovery codes
    it shows once: back in the lobby, signed in. The person's page."""
    page = person.open()
    page.click("#open-keep")
    page.fill("#handle", handle)
    page.click("#take-handle")
    expect(page.locator("#codes-panel")).to_be_visible()
    page.check("#kept-codes")
    page.click("#codes-done")
    expect(page.locator("#lobby-screen")).to_be_visible()
    expect(page.locator("#me-handle")).to_have_text(handle)
    return page


def unfold_house_rules(page: Page) -> None:
    """Open the create form's house rules, folded behind their one-line summary."""
    rules = page.locator("#create-rules")
    if rules.get_attribute("open") is None:
        page.click("#create-rules summary")
    expect(page.locator("#create-settings")).to_be_visible()


# -- reading boards from the DOM and finding moves ----------------------------------


READ_BOARD = """(root) => {
  const b = document.querySelector(root + ' .board');
  if (!b) return null;
  const piles = [...b.querySelectorAll('.tableau .pile')].map((p) => ({
    down: p.querySelectorAll('.card.back').length,
    up: [...p.querySelectorAll('.card.face')].map((c) => c.dataset.card),
  }));
  const waste = [...b.querySelectorAll('.slot.waste .card')].map((c) => c.dataset.card);
  const count = b.querySelector('.slot.stock .count');
  const foundations = [...b.querySelectorAll('.slot.foundation')].map(
    (f) => (f.querySelector('.card') || {dataset: {}}).dataset.card || null);
  return {piles, waste: waste.length ? waste[waste.length - 1] : null,
          stock: count ? Number(count.textContent) : null, foundations};
}"""


def read_board(page: Page, root: str) -> dict[str, Any] | None:
    result: dict[str, Any] | None = page.evaluate(READ_BOARD, root)
    return result


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def red(card: str) -> bool:
    return card[1] in "DH"


def fits(card: str, top: str | None) -> bool:
    if top is None:
        return rank(card) == 13
    return red(card) != red(top) and rank(top) == rank(card) + 1


def fits_home(card: str, foundations: list[str | None]) -> int | None:
    packs = len(foundations) // 4
    suit = "CDHS".index(card[1])
    for f in range(suit * packs, suit * packs + packs):
        top = foundations[f]
        if (top is None and rank(card) == 1) or (top is not None and rank(top) == rank(card) - 1):
            return f
    return None


Source = tuple[Any, ...]


def legal_moves(b: dict[str, Any]) -> list[tuple[Source, Source]]:
    """Moves the engine will accept, seen from the board view (no hidden card)."""
    moves: list[tuple[Source, Source]] = []
    piles = b["piles"]
    tops = [p["up"][-1] if p["up"] else None for p in piles]
    if b["waste"]:
        f = fits_home(b["waste"], b["foundations"])
        if f is not None:
            moves.append((("waste",), ("foundation", f)))
        moves += [
            (("waste",), ("tableau", q)) for q in range(len(piles)) if fits(b["waste"], tops[q])
        ]
    for p, pile in enumerate(piles):
        up = pile["up"]
        if not up:
            continue
        f = fits_home(up[-1], b["foundations"])
        if f is not None:
            moves.append((("tableau", p, len(up) - 1), ("foundation", f)))
        start = len(up) - 1
        while start > 0 and fits(up[start], up[start - 1]):
            start -= 1
        for i in range(start, len(up)):
            if i == 0 and pile["down"] == 0 and rank(up[0]) == 13:
                continue  # a king already at the bottom: moving it proves nothing
            for q in range(len(piles)):
                if q != p and fits(up[i], tops[q]):
                    moves.append((("tableau", p, i), ("tableau", q)))
    return moves


def illegal_pair(b: dict[str, Any]) -> tuple[int, int] | None:
    """Two piles whose tops do not fit: the top of ``p`` cannot go onto ``q``."""
    piles = b["piles"]
    for p, src in enumerate(piles):
        for q, dst in enumerate(piles):
            if p != q and src["up"] and dst["up"] and not fits(src["up"][-1], dst["up"][-1]):
                return p, q
    return None


def source_locator(page: Page, src: Source) -> Locator:
    if src[0] == "waste":
        return page.locator('#board-host .card[data-zone="waste"]')
    pile, index = src[1], src[2]
    return page.locator(
        f'#board-host .card[data-zone="tableau"][data-pile="{pile}"][data-index="{index}"]'
    )


def target_locator(page: Page, b: dict[str, Any], dst: Source) -> Locator:
    if dst[0] == "foundation":
        return page.locator(f'#board-host .slot.foundation[data-index="{dst[1]}"]')
    q = dst[1]
    up = b["piles"][q]["up"]
    if up:
        return page.locator(f'#board-host .card[data-pile="{q}"][data-index="{len(up) - 1}"]')
    return page.locator(f'#board-host .pile[data-pile="{q}"]')


def click_card(card: Locator) -> None:
    """Click where people click a fanned card: its visible top strip."""
    box = card.bounding_box()
    assert box
    card.click(position={"x": box["width"] / 2, "y": min(8, box["height"] / 6)})


SETTLED = """() => !document.getAnimations().some((a) =>
  a.playState === 'running' && a.effect && a.effect.target && a.effect.target.closest('.board'))"""


def settled(page: Page) -> None:
    """Until no card is gliding (client/web/motion.js): the board's DOM is the
    server's view at once, but a gesture aimed by coordinates wants cards at rest."""
    page.wait_for_function(SETTLED)


def drag(page: Page, src: Locator, dst: Locator) -> None:
    settled(page)
    a = src.bounding_box()
    z = dst.bounding_box()
    assert a and z
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + min(12, a["height"] / 4))
    page.mouse.down()
    page.mouse.move(a["x"] + a["width"] / 2 + 8, a["y"] + 20, steps=2)
    page.mouse.move(z["x"] + z["width"] / 2, z["y"] + z["height"] / 2, steps=8)
    page.mouse.up()


def wait_until(
    page: Page, check: Callable[[], Any], what: str, timeout: float = WAIT_MS / 1000
) -> Any:
    """Until ``check`` is truthy, letting Playwright run its callbacks meanwhile."""
    try:
        return eventually_blocking(
            check, timeout, what=what, pause=lambda: page.wait_for_timeout(50)
        )
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None


def _drawn(client: Client, before: tuple[Any, Any]) -> bool:
    now = client.board()
    return now is not None and (now["stock"], now["waste"]) != before


def find_move(client: Client) -> tuple[dict[str, Any], Source, Source]:
    """Draw (with the D key) until the board offers a legal move; return it."""
    page = client.page
    for _ in range(60):
        b = client.board()
        assert b is not None
        moves = legal_moves(b)
        if moves:
            # Prefer moves between piles: they exercise run counts.
            moves.sort(key=lambda m: (m[0][0] != "tableau" or m[1][0] != "tableau", m[1][0]))
            return b, moves[0][0], moves[0][1]
        page.keyboard.press("d")
        wait_until(page, partial(_drawn, client, (b["stock"], b["waste"])), "a draw")
    raise AssertionError("no legal move found after many draws")


def no_errors(*clients: Client) -> None:
    errors = [e for c in clients for e in c.errors]
    assert not errors, "\n".join(errors)


# -- the "Past deals" panel ----------------------------------------------------------


def past_player(page: Page, player: str) -> Locator:
    return page.locator(f'#past-panel article.past-player[data-player="{player}"]')


def log_lines(page: Page, player: str) -> list[str]:
    """A player's move log as the panel writes it, without emoji-suppressing marks."""
    texts = past_player(page, player).locator(".log li .mv").all_inner_texts()
    return [t.replace("\ufe0e", "") for t in texts]


def check_past_deal(page: Page, number: int, seed: str, moves: dict[str, int]) -> None:
    """The panel shows deal ``number``: its seed checked, and per player a revealed
    board and a log of ``moves[player]`` entries, each timed m:ss and replayed."""
    panel = page.locator("#past-panel")
    expect(panel).to_be_visible()
    expect(panel.locator(f'#past-picker button[data-deal="{number}"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(panel.locator(".past-seed .seed")).to_have_text(seed)
    expect(panel.locator(".past-seed .ok")).to_be_visible()
    expect(panel.locator("article.past-player")).to_have_count(len(moves))
    for player, n in moves.items():
        tile = past_player(page, player)
        expect(tile.locator(".past-board .board .tableau .pile")).not_to_have_count(0)
        expect(tile.locator(".log li")).to_have_count(n)
        expect(tile.locator(".past-log summary .ok")).to_have_text("✓ replays to this board")
        for t in tile.locator(".log li .t").all_inner_texts():
            assert re.fullmatch(r"\d+:\d\d", t), t


# -- a Python-client player on its own event loop --------------------------------------


class BotSeat:
    """A player that is not a browser: the Python client library (client/), run on
    an asyncio loop in a thread so the sync Playwright calls can go on meanwhile."""

    def __init__(self, base: str, name: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        url = base.replace("http://", "ws://") + "/ws"

        async def open_session() -> Session:
            return await connect(url, name=name)

        self.session: Session = self.run(open_session())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 20) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def dealt(self, number: int) -> dict[str, Any]:
        """This player's board view of deal ``number``, once it is dealt."""

        async def wait() -> dict[str, Any]:
            while True:
                room = self.session.room
                if room is not None and room.deal_number == number and room.my_board:
                    return room.my_board
                await self.session.wait_update(timeout=1)

        return self.run(wait())

    def play(self, line: list[Move], number: int) -> None:
        async def moves() -> None:
            for move in line:
                await self.session.move(move, deal=number)

        self.run(moves(), timeout=60)

    def close(self) -> None:
        try:
            self.run(self.session.close(), timeout=5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
            self.loop.close()


def winning_line(view: dict[str, Any]) -> list[Move] | None:
    """The moves the client's bot (client/bot.py: a search, every card being on show
    in Thoughtful) wins this deal with, ending in auto-complete; None if it cannot."""
    board = bot_board(view)
    bot = Bot()
    line: list[Move] = []
    while board.status is Status.PLAYING and len(line) < 1000:
        move = bot.decide(player_view(board))
        board.apply(move)
        line.append(move)
    if board.status is not Status.WON or line[-1].kind is not MoveKind.AUTO_COMPLETE:
        return None
    return line


def dblclick_card(page: Page, card: Locator) -> None:
    """A double click on a card's visible top strip: sends it home."""
    card.scroll_into_view_if_needed()
    settled(page)
    box = card.bounding_box()
    assert box
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + min(8, box["height"] / 6))


def play_by_ui(client: Client, line: list[Move]) -> None:
    """Each move the way a person makes it: keys for draws and pile-to-pile moves,
    clicks for the waste onto a pile, double clicks to send a card home."""
    page = client.page
    start = int(page.locator("#my-moves").inner_text())
    for i, move in enumerate(line, start=1):
        b = client.board()
        assert b is not None
        kind = move.kind
        if kind in (MoveKind.DRAW, MoveKind.RECYCLE):
            page.keyboard.press("d")
        elif kind is MoveKind.TABLEAU_TO_TABLEAU:
            page.keyboard.press(str(move.src + 1))
            page.keyboard.press(str(move.dst + 1))
        elif kind is MoveKind.WASTE_TO_TABLEAU:
            click_card(source_locator(page, ("waste",)))
            click_card(target_locator(page, b, ("tableau", move.dst)))
        elif kind is MoveKind.WASTE_TO_FOUNDATION:
            dblclick_card(page, source_locator(page, ("waste",)))
        elif kind is MoveKind.TABLEAU_TO_FOUNDATION:
            top = len(b["piles"][move.src]["up"]) - 1
            dblclick_card(page, source_locator(page, ("tableau", move.src, top)))
        elif kind is MoveKind.FOUNDATION_TO_TABLEAU:
            click_card(page.locator(f'#board-host .slot.foundation[data-index="{move.src}"] .card'))
            click_card(target_locator(page, b, ("tableau", move.dst)))
        else:
            raise AssertionError(f"no UI path for {move}")
        expect(page.locator("#my-moves")).to_have_text(str(start + i))


def in_words(move: Move, cards: tuple[int, ...], pass_started: int) -> str:
    """A move as the panel's log tells it (client/web/replay.js), from the engine's
    account of what it moved."""
    names = [
        ("10" if c[0] == "T" else c[0]) + "♣♦♥♠"["CDHS".index(c[1])] for c in map(card_str, cards)
    ]
    shown = " ".join(names) if len(names) <= 3 else f"{names[0]} … {names[-1]} ({len(names)} cards)"
    kind = move.kind
    if kind is MoveKind.DRAW:
        return f"draw {shown}"
    if kind is MoveKind.RECYCLE:
        return f"recycle the waste (pass {pass_started})"
    if kind is MoveKind.AUTO_COMPLETE:
        return f"auto-complete: {len(cards)} card{'' if len(cards) == 1 else 's'} home"
    where = {
        MoveKind.WASTE_TO_TABLEAU: ("waste", f"pile {move.dst + 1}"),
        MoveKind.WASTE_TO_FOUNDATION: ("waste", "foundation"),
        MoveKind.TABLEAU_TO_FOUNDATION: (f"pile {move.src + 1}", "foundation"),
        MoveKind.TABLEAU_TO_TABLEAU: (f"pile {move.src + 1}", f"pile {move.dst + 1}"),
        MoveKind.FOUNDATION_TO_TABLEAU: (f"foundation {move.src + 1}", f"pile {move.dst + 1}"),
    }[kind]
    return f"{shown} {where[0]} → {where[1]}"


def line_in_words(view: dict[str, Any], line: list[Move]) -> list[str]:
    board = bot_board(view)
    out = []
    for move in line:
        outcome = board.apply(move)
        out.append(in_words(move, outcome.cards, outcome.pass_started))
    return out
