"""The race on one screen, in Chromium: what a person sees at each moment of a
round on a 1280×800 and a 1366×768 laptop and on 360×740, 390×844 and 430×932
phones (the narrowest and widest of common phones, and the one between) —
the race bar with every rival's chip, the whole board and its buttons in view
without scrolling, no page wider than its screen, a new deal opening on the
player's own board; equal players sharing a placing (shown "=4th") in the break's
results; the score sheet's eight columns; a late friend watching the deal they
sit out; the name field's limit. Screenshots of a deal, the break and the podium
at every size go to artifacts/ (layout-deal-1280x800.png, …). Waits on what the
pages show, never on time."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Locator, expect

from protocol.names import MAX_GRAPHEMES
from tests.support.web import ARTIFACTS, WAIT_MS, Client, no_errors, settled, wait_until

# A round's end and a break redraw four pages of eight boards each (results, past
# deals, seed checks) in one browser on a shared machine: their first sight waits longer.
REDRAW_MS = 4 * WAIT_MS
FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
SCROLL_TO_SHEET = "() => document.getElementById('sheet-scroll').scrollIntoView({block: 'nearest'})"


def not_wider_than_the_screen(client: Client, moment: str) -> None:
    page = client.page
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"{client.label} at {moment}: the page is {width[0]} px wide"


def wholly_in_view(locator: Locator) -> None:
    """Every part of it on screen, with the page where it is (no scrolling)."""
    expect(locator).to_be_in_viewport(ratio=1)


def seen(client: Client, name: str) -> None:
    """What the person sees now: the screen, not the whole page."""
    size = client.page.viewport_size
    assert size
    client.page.screenshot(path=str(ARTIFACTS / f"{name}-{size['width']}x{size['height']}.png"))


def deal_on_screen(laptops: list[Client], phones: list[Client], label: str) -> None:
    """A deal just dealt: the whole race on each laptop; on each phone the
    player's own board, whole, with its buttons, and no page wider than the screen."""
    for c in laptops:
        race_on_screen(c, rivals=7)
    for c in phones:
        expect(c.page.locator("#btn-resign")).to_be_visible(timeout=REDRAW_MS)
        settled(c.page)
        wholly_in_view(c.page.locator("#board-host .board"))
        wholly_in_view(c.page.locator("#btn-resign"))
        not_wider_than_the_screen(c, label)


def race_on_screen(client: Client, rivals: int) -> None:
    page = client.page
    expect(page.locator("#btn-resign")).to_be_visible(timeout=REDRAW_MS)
    settled(page)
    assert page.evaluate("() => window.scrollY") == 0, "the page scrolled the race away"
    chips = page.locator("#hud .rival")
    expect(chips).to_have_count(rivals)
    for target in (page.locator("#hud .stats"), *chips.all(), page.locator("#commitment")):
        wholly_in_view(target)
    for target in ("#board-host .board", "#btn-draw", "#btn-resign"):
        wholly_in_view(page.locator(target))
    # Room kept for the longest pile: the board cannot grow below the screen.
    room = page.evaluate(
        """() => { const t = document.querySelector('#board-host .tableau');
                   const cw = t.querySelector('.pile').getBoundingClientRect().width;
                   return [t.getBoundingClientRect().height, cw]; }"""
    )
    assert room[0] >= 5.8 * room[1] - 1, room


def move_on(host: Client) -> None:
    host.page.click("#btn-next")
    host.page.click("[data-confirm=yes]")


def test_the_race_on_one_screen_on_laptops_and_phones(browser: Browser, server: str) -> None:
    host = Client(browser, server, "host", 1280, 800)
    lap = Client(browser, server, "lap", 1366, 768)
    phone = Client(browser, server, "phone", 390, 844)
    small = Client(browser, server, "small", 360, 740)
    wide = Client(browser, server, "wide", 430, 932)
    people = [host, lap, phone, small, wide]
    laptops, phones = [host, lap], [phone, small, wide]
    try:
        code = host.create("Ann", deals_per_round=2, break_seconds=60)
        for c, name in (
            (lap, "Lena"),
            (phone, "Bob"),
            (small, "Sue Longname-Whitfield"),
            (wide, "Wen"),
        ):
            c.join(name, code)
        host.page.select_option("#bot-pace", "relaxed")
        for _ in range(3):
            host.page.click("#btn-add-bot")
        for c in people:
            expect(c.page.locator("li.member")).to_have_count(8)
        for c in phones:
            not_wider_than_the_screen(c, "the room before the round")

        host.page.click("#btn-start")
        deal_on_screen(laptops, phones, "deal 1")
        for c in people:
            seen(c, "layout-deal")

        move_on(host)  # the break, with the deal's results and every board
        for c in people:
            expect(c.page.locator("#results-table")).to_be_visible(timeout=REDRAW_MS)
            expect(c.page.locator("#results .results-boards .wall-tile")).to_have_count(8)
        for c in phones:
            not_wider_than_the_screen(c, "the break")
            # The results' last column and the seed check are on the page, not cut off.
            right = c.page.evaluate(
                """() => Math.max(...[...document.querySelectorAll(
                     '#results-table td.status, #results .results-seed')].map(
                     (e) => e.getBoundingClientRect().right))"""
            )
            assert right <= c.page.viewport_size["width"], (c.label, right)  # type: ignore[index]
        # The people made no move: unfinished at 0, nothing tells them apart, so
        # they share one placing, shown with "=" (docs/rules.md §7.1).
        ids = [c.my_id() for c in people]
        row = '#results-table tbody tr[data-player="{}"] .place'
        shared = [host.page.locator(row.format(pid)).inner_text() for pid in ids]
        assert len(set(shared)) == 1 and shared[0].startswith("="), shared
        for c in people:
            seen(c, "layout-break")
        phone.shot("layout-break-390x844-whole")
        for c in people:  # a person reads down the break's boards and past deals
            c.page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")

        host.page.click("#btn-next-now")
        deal_on_screen(laptops, phones, "deal 2")

        move_on(host)  # the round's last deal: the podium
        for c in people:
            expect(c.page.locator("#podium")).to_be_visible(timeout=REDRAW_MS)
        for c in phones:
            not_wider_than_the_screen(c, "the podium")
        for c in people:
            seen(c, "layout-podium")

        # The score sheet: every player's column on the laptops; on a phone,
        # every column, or a scroll that says so.
        for c in people:
            heads = c.page.locator("#sheet-table thead th[data-player]")
            expect(heads).to_have_count(8)
            box = c.page.locator("#sheet-scroll")
            # Scrolled to as a person would, in one step in the page: every render
            # redraws the sheet, and a handle held across one would be stale.
            c.page.evaluate(SCROLL_TO_SHEET)
            widths = box.evaluate("(b) => [b.scrollWidth, b.clientWidth, b.innerText]")
            fits = widths[0] <= widths[1]
            if c in laptops:
                assert fits, f"{c.label}: the sheet hides a column: {widths}"
                for head in heads.all():
                    expect(head).to_be_in_viewport(ratio=1)
            else:
                expect(c.page.locator("#sheet-more")).to_be_visible(visible=not fits)
        host.page.locator("#sheet").screenshot(path=str(ARTIFACTS / "layout-sheet-1280x800.png"))
        # A screen too narrow for eight columns: the sheet scrolls, and says so.
        small.page.set_viewport_size({"width": 300, "height": 740})
        expect(small.page.locator("#sheet-more")).to_have_text(
            "Scroll sideways for all 8 players →"
        )
        no_errors(*people)
    except BaseException:
        for c in people:
            c.dump()
        raise
    finally:
        for c in people:
            c.close()


def test_a_late_friend_watches_the_deal_they_sit_out(browser: Browser, server: str) -> None:
    host = Client(browser, server, "host", 1280, 800)
    late = Client(browser, server, "late", 390, 844)
    try:
        code = host.create("Ann", deals_per_round=2)
        host.page.click("#btn-start")
        expect(host.page.locator("#btn-resign")).to_be_visible()
        ann = host.my_id()
        page = late.open(f"/#join={code}")
        page.fill("#name", "Dan")
        page.click("#join-btn")  # told first that a round is running
        expect(page.locator("#invite-note")).to_contain_text("A round is running")
        page.click("#join-btn")
        expect(page.locator("#table-message")).to_contain_text("sit this deal out")
        tile = page.locator(f'#wall .wall-tile[data-player="{ann}"]')
        expect(tile.locator(".board .tableau .pile")).to_have_count(7)
        stock = tile.locator(".slot.stock .count")
        expect(stock).to_have_text("24")
        host.page.keyboard.press("d")  # Ann draws: Dan sees her board change
        expect(stock).to_have_text("23")
        expect(page.locator("#btn-resign")).to_be_hidden()
        wholly_in_view(tile.locator(".board"))
        not_wider_than_the_screen(late, "sitting out")
        seen(late, "layout-sitting-out")

        # Boards for spectators only after the deal: none for Dan either.
        host.page.select_option("#host-spectators", "after_deal")
        expect(tile.locator(".board")).to_have_count(0)
        expect(tile).to_contain_text("The board shows once the deal is over.")
        expect(tile.locator(".tile-home")).to_have_text(re.compile(r"0/52 home"))
        no_errors(host, late)
    except BaseException:
        host.dump()
        late.dump()
        raise
    finally:
        host.close()
        late.close()


def test_a_name_over_the_limit_is_refused_with_the_limit_shown(
    browser: Browser, server: str
) -> None:
    client = Client(browser, server, "names", 390, 844)
    try:
        page = client.open()
        count = page.locator("#name-count")
        page.fill("#name", "")
        expect(count).to_have_text(f"0/{MAX_GRAPHEMES}")
        page.fill("#name", "A" * MAX_GRAPHEMES)
        expect(count).to_have_text(f"{MAX_GRAPHEMES}/{MAX_GRAPHEMES}")
        expect(page.locator("#name-error")).to_be_hidden()
        # An emoji family is one character to its reader, as to the server.
        page.fill("#name", "👩‍👩‍👧" * MAX_GRAPHEMES)
        expect(count).to_have_text(f"{MAX_GRAPHEMES}/{MAX_GRAPHEMES}")
        long = "Maximiliana Wolkenstein-Hartmann"
        page.fill("#name", long)
        expect(count).to_have_text(f"{len(long)}/{MAX_GRAPHEMES}")
        error = page.locator("#name-error")
        expect(error).to_have_text(
            f"A name is at most {MAX_GRAPHEMES} characters: this one has {len(long)}."
        )
        page.click("#create-btn")  # refused in the form, not cut short
        expect(page.locator("#lobby-screen")).to_be_visible()
        expect(page.locator("#name")).to_have_value(long)
        expect(error).to_be_visible()
        wait_until(page, lambda: page.evaluate(FITS), "the lobby fits the phone")
        for width, height in ((360, 740), (430, 932)):  # the narrowest and widest phones
            page.set_viewport_size({"width": width, "height": height})
            wait_until(page, lambda: page.evaluate(FITS), f"the lobby fits {width} px")
        no_errors(client)
    finally:
        client.close()
