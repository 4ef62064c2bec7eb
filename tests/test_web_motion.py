"""Motion and feedback in the browser client (client/web/motion.js, gestures.js,
style.css), in headless Chromium against a real server.

A move glides, a deal is dealt from the stock and a won deal cascades, and with
``prefers-reduced-motion: reduce`` none of them runs; the board's DOM is the
server's view at once either way. A drag lights up the pile under it and the
light goes with the drop. Notices float over the page instead of pushing the
board down; a finished board says so; a key pressed after a click on the felt does
not ring the whole page; a player who left has no "playing" chip; on a phone the
host's Start is on screen before the board, and the board after it.

What runs is seen from the page: a MutationObserver installed before the client's
scripts notes how many animations are in flight on the board right after each
change of the DOM (the observer runs once the redraw, which starts them, is done).
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.web import (
    BotSeat,
    Client,
    find_move,
    no_errors,
    play_by_ui,
    settled,
    source_locator,
    target_locator,
    wait_until,
    winning_line,
)

WATCH_MOTION = """
window.__motion = 0;
new MutationObserver(() => {
  const n = document.getAnimations().filter((a) => {
    const t = a.effect && a.effect.target;
    return t && t.closest && t.closest('#board-host, .cascade');
  }).length;
  window.__motion = Math.max(window.__motion, n);
}).observe(document, { childList: true, subtree: true });
"""

BOX = """(sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [r.left, r.top, r.width];
}"""


def watched(client: Client) -> Client:
    client.page.add_init_script(WATCH_MOTION)
    return client


def motion_seen(page: Page) -> int:
    """The most board animations in flight at once since the last reset."""
    n: int = page.evaluate("() => { const n = window.__motion; window.__motion = 0; return n; }")
    return n


def box(page: Page, selector: str) -> list[float]:
    result: list[float] = page.evaluate(BOX, selector)
    return result


def drag_and_watch(page: Page, b: dict[str, Any], src: Any, dst: Any) -> None:
    """A drag by mouse, checking on the way that the target lights up, and only it,
    and that nothing stays lit once the card is dropped."""
    settled(page)
    a = source_locator(page, src).bounding_box()
    z = target_locator(page, b, dst).bounding_box()
    assert a and z
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + min(12, a["height"] / 4))
    page.mouse.down()
    page.mouse.move(a["x"] + a["width"] / 2 + 8, a["y"] + 20, steps=2)
    page.mouse.move(z["x"] + z["width"] / 2, z["y"] + z["height"] / 2, steps=8)
    if dst[0] == "foundation":
        lit = f'#board-host .slot.foundation[data-index="{dst[1]}"]'
    else:
        lit = f'#board-host .pile[data-pile="{dst[1]}"]'
    expect(page.locator(lit)).to_have_class(_has("drop-target"))
    expect(page.locator("#board-host .drop-target")).to_have_count(1)
    page.mouse.up()
    expect(page.locator("#board-host .drop-target")).to_have_count(0)
    expect(page.locator("#board-host .board.dragging")).to_have_count(0)


def _has(cls: str) -> re.Pattern[str]:
    return re.compile(rf"(^|\s){cls}(\s|$)")


def test_moves_glide_drops_light_up_and_notices_float(server: str, browser: Browser) -> None:
    """Ann races two Python-client players: the deal is dealt, a drag lights its
    target and the move glides; a refusal and her resign notice leave the board
    where it was; her resigned board says so; Cy leaves and his chip stops saying
    playing; after a click on the felt a key rings no outline round the page."""
    ann = watched(Client(browser, server, "ann-m"))
    seats: list[BotSeat] = []
    try:
        code = ann.create("Ann", deals_per_round=3)
        page = ann.page
        for name in ("Cy", "Dee"):
            seat = BotSeat(server, name)
            seat.run(seat.session.join_room(code, "player"))
            seats.append(seat)
        expect(page.locator("#members li.member")).to_have_count(3)
        cy_id = seats[0].session.room.me if seats[0].session.room else ""
        motion_seen(page)
        page.click("#btn-start")
        # The board is the server's view at once; the deal flies in over it.
        expect(page.locator("#board-host .tableau .pile")).to_have_count(7)
        expect(page.locator("#board-host .tableau .card")).to_have_count(28)
        assert motion_seen(page) >= 28
        settled(page)
        # Every pile's number shows (none under its cards), and a focused card
        # keeps its place in the pile instead of rising over the cards above it.
        hidden = page.evaluate(
            """() => [...document.querySelectorAll('#board-host .pile-no')].filter((n) => {
              const r = n.getBoundingClientRect();
              const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
              return at !== n;
            }).map((n) => n.textContent)"""
        )
        assert hidden == [], hidden
        page.focus('#board-host .card[data-pile="5"][data-index="0"]')
        page.keyboard.press("Tab")  # on to pile 7's card, by keyboard: focus shows
        focused = page.evaluate(
            "() => { const a = document.activeElement, s = getComputedStyle(a);"
            " return [a.dataset.focusKey, s.outlineStyle, s.zIndex]; }"
        )
        assert focused == ["t6-0", "solid", "auto"], focused

        # A drag lights up where it would land; the move then glides.
        b, src, dst = find_move(ann)
        motion_seen(page)
        drag_and_watch(page, b, src, dst)
        wait_until(page, lambda: ann.board() != b, "the dragged move to land")
        assert motion_seen(page) > 0

        # A refusal, shown over the page: the board does not move.
        settled(page)
        before = box(page, "#board-host .board")
        page.locator("body").press("a")
        expect(page.locator("#move-status")).to_contain_text("Auto-complete works once")
        assert box(page, "#board-host .board") == before

        # Cy leaves mid-deal: his chip no longer says he is playing.
        chip = page.locator(f'.rival[data-player="{cy_id}"] .rival-status')
        expect(chip).to_have_text("playing")
        seats[0].run(seats[0].session.leave_room())
        expect(chip).to_have_text("left the room")

        # A click on the felt's margin focuses the page's main; a key then must not
        # ring it (the 3 px outline round the whole page).
        felt = page.locator("#table").bounding_box()
        assert felt
        page.mouse.click(felt["x"] + 3, felt["y"] + felt["height"] - 3)
        page.keyboard.press("d")
        ring = page.evaluate(
            "() => { const a = document.activeElement; const s = getComputedStyle(a);"
            " return [a.tagName, a.matches(':focus-visible') ? s.outlineStyle : 'none']; }"
        )
        assert ring[1] == "none" or ring[0] not in ("MAIN", "BODY", "HTML"), ring

        # Ann resigns: the notices say so over the page, the board stays put and
        # shows it is out of play.
        page.click("#btn-resign")
        page.click("#btn-resign")
        expect(page.locator("#notices")).to_contain_text("You resigned this deal")
        expect(page.locator("#board-host .board.finished .finished-label")).to_have_text("Resigned")
        settled(page)
        assert box(page, "#board-host .board") == before
        ring = page.evaluate("() => getComputedStyle(document.querySelector('main')).outlineStyle")
        assert ring == "none", ring
        ann.shot("motion-resigned")
        no_errors(ann)
    except BaseException:
        ann.dump()
        raise
    finally:
        for seat in seats:
            seat.close()
        ann.close()


def test_won_board_cascades_and_looks_finished(server: str, browser: Browser) -> None:
    """A Thoughtful deal Ann wins by the line the bot's search finds, while Cy
    plays on: the cards cascade, the board is dimmed and labelled won, and the
    notices of her win do not move it."""
    ann = watched(Client(browser, server, "ann-w"))
    cy: BotSeat | None = None
    try:
        code = ann.create("Ann", variant="thoughtful", deals_per_round=10)
        page = ann.page
        cy = BotSeat(server, "Cy")
        cy.run(cy.session.join_room(code, "player"))
        expect(page.locator("#members li.member")).to_have_count(2)
        page.click("#btn-start")
        number, line = 0, None
        for number in range(1, 9):
            view = cy.dealt(number)
            expect(page.locator("#deal-of")).to_have_text(f"{number} of 10")
            line = winning_line(view)
            if line:
                break
            page.click("#btn-next")
            page.click('.confirm [data-confirm="yes"]')  # it asks first
        assert line, "the bot found no winning line in 8 deals"
        play_by_ui(ann, line[:-1])
        settled(page)
        before = box(page, "#board-host .board")
        motion_seen(page)
        page.click("#btn-auto")
        label = page.locator("#board-host .board.finished.status-won .finished-label")
        expect(label).to_have_text("✓ Won")
        assert motion_seen(page) > 0  # the cascade, from the foundations
        expect(page.locator("#notices")).to_contain_text("You won this deal")
        settled(page)
        assert box(page, "#board-host .board") == before
        opacity = page.evaluate(
            "() => getComputedStyle(document.querySelector('#board-host .tableau')).opacity"
        )
        assert float(opacity) < 0.7, opacity
        ann.shot("motion-won")
        no_errors(ann)
    except BaseException:
        ann.dump()
        raise
    finally:
        if cy is not None:
            cy.close()
        ann.close()


def test_reduced_motion_runs_no_animation(server: str, browser: Browser) -> None:
    """With prefers-reduced-motion: reduce, the deal, draws and moves show at once,
    with no animation at all; a drag still lights up its target."""
    eve = watched(Client(browser, server, "eve-r", reduced_motion=True))
    try:
        eve.create("Eve")
        page = eve.page
        motion_seen(page)
        page.click("#btn-start")
        expect(page.locator("#board-host .tableau .card")).to_have_count(28)
        b, src, dst = find_move(eve)  # draws by key until a move shows
        drag_and_watch(page, b, src, dst)
        wait_until(page, lambda: eve.board() != b, "the dragged move to land")
        assert motion_seen(page) == 0
        assert page.evaluate("() => document.getAnimations().length") == 0
        no_errors(eve)
    except BaseException:
        eve.dump()
        raise
    finally:
        eve.close()


def test_phone_start_on_screen_then_the_board(server: str, browser: Browser) -> None:
    """On a 390×844 screen the host reaches Start without scrolling, and after
    pressing it the board is in view."""
    pat = Client(browser, server, "pat-p", width=390, height=844)
    try:
        pat.create("Pat")
        page = pat.page
        start = page.locator("#btn-start")
        expect(start).to_be_visible()
        assert page.evaluate("() => window.scrollY") == 0
        r = start.bounding_box()
        assert r and r["y"] >= 0 and r["y"] + r["height"] <= 844, r
        felt = page.locator("#table").bounding_box()
        assert felt and r["y"] < felt["y"], (r, felt)  # before the table, not under it
        page.mouse.click(r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)  # no scrolling
        expect(page.locator("#board-host .tableau .pile")).to_have_count(7)
        settled(page)
        board = page.locator("#board-host .board").bounding_box()
        assert board and 0 <= board["y"] < 844 * 0.5, board
        assert board["y"] + board["height"] <= 844, board
        pat.shot("motion-phone")
        no_errors(pat)
    except BaseException:
        pat.dump()
        raise
    finally:
        pat.close()
