"""Rounds as a series in the browser (client/web/series.js), in headless Chromium
against a real server: the podium on every page at round over, the HUD with the
player's round total and placing instead of the last deal's score, and the series
table beside the sheet, which a rematch keeps (round 1's winner stays on screen
through round 2, its deals one click away). Rounds of one deal, ended by
resigning; the screenshot is artifacts/podium.png."""

from __future__ import annotations

from functools import partial
from typing import Any

from playwright.sync_api import Browser, Page, expect

from server.core.series import ROUNDS_LISTED
from tests.support.web import (
    BotSeat,
    Client,
    drag,
    find_move,
    no_errors,
    source_locator,
    target_locator,
    wait_until,
)


def my_score(page: Page) -> int:
    return int(page.locator("#my-score").inner_text())


def changed(client: Client, before: object) -> bool:
    return client.board() != before


def score_above_zero(client: Client) -> int:
    """Moves by drag and drop until the deal's score is above 0 (a turn-over, a card
    to the tableau or home: a handful of moves at most); returns it."""
    page = client.page
    for _ in range(20):
        if my_score(page) > 0:
            return my_score(page)
        before, src, dst = find_move(client)
        drag(page, source_locator(page, src), target_locator(page, before, dst))
        wait_until(page, partial(changed, client, before), "the move's new board")
    raise AssertionError("no score after 20 moves")


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign")  # the second click within four seconds confirms
    expect(page.locator("#notices")).to_contain_text("You resigned this deal")


def test_podium_and_a_series_that_outlives_the_rematch(server: str, browser: Browser) -> None:
    ann = Client(browser, server, "ann-series")
    bob = Client(browser, server, "bob-series")
    sam = Client(browser, server, "sam-series")
    everyone = (ann, bob, sam)
    try:
        code = ann.create("Ann", deals_per_round=1, race_bonus=0, scoring="standard")
        bob.join("Bob", code)
        sam.join("Sam", code, role="spectator")
        a, b = ann.page, bob.page
        a.click("#btn-start")
        for p in (a, b):
            expect(p.locator("#deal-of")).to_have_text("1 of 1")
        expect(a.locator("#podium")).to_be_hidden()
        total = score_above_zero(ann)
        b_id = bob.my_id()
        resign(a)
        b.click("#btn-resign")
        b.click("#btn-resign")

        # Round over: a podium on every page, Ann first with her total, Bob second.
        for c in everyone:
            podium = c.page.locator("#podium")
            expect(podium).to_be_visible()
            expect(podium.locator(".podium-title")).to_contain_text("Round 1 podium")
            first = podium.locator(".step-first")
            expect(first.locator(".podium-place")).to_have_text("1st")
            expect(first.locator(".podium-name")).to_contain_text("Ann")
            expect(first.locator(".podium-total")).to_have_text(str(total))
            second = podium.locator(".step-second")
            expect(second.locator(".podium-name")).to_contain_text("Bob")
            expect(second.locator(".podium-total")).to_have_text("0")
        # The HUD: the round's total and placing, not the last deal's score.
        expect(a.locator("#my-total")).to_have_text(str(total))
        expect(a.locator("#my-place")).to_have_text("1st of 2")
        expect(a.locator("#my-score")).to_have_count(0)
        expect(b.locator("#my-total")).to_have_text("0")
        expect(b.locator("#my-place")).to_have_text("2nd of 2")
        expect(a.locator(f'.rival[data-player="{b_id}"] .rival-score')).to_have_text("0")
        expect(a.locator("#round-over")).to_contain_text(f"Ann wins with {total}")
        # The sheet places the players by their totals, as the server sent them.
        a_id = ann.my_id()
        places = a.locator("#sheet-table tfoot tr.places")
        expect(places.locator(f'td[data-placed="{a_id}"]')).to_have_text("1st")
        expect(places.locator(f'td[data-placed="{b_id}"]')).to_have_text("2nd")
        ann.shot("podium")

        # The series beside the sheet: round 1 and match wins, on every page.
        for c in everyone:
            table = c.page.locator("#series-table")
            expect(table).to_be_visible()
            expect(table.locator('tbody tr[data-round="1"] .series-winner')).to_have_text("Ann")
            expect(table.locator(f'tfoot td[data-player="{b_id}"]')).to_have_text("0")

        # A rematch: round 2 runs, and round 1 stays in the series table.
        a.click("#btn-rematch")
        for c in everyone:
            p = c.page
            expect(p.locator("#podium")).to_be_hidden()
            expect(p.locator("#deal-of")).to_have_text("1 of 1")
            row = p.locator('#series-table tbody tr[data-round="1"]')
            expect(row.locator(".series-winner")).to_have_text("Ann")
            expect(row.locator(f'td[data-player="{b_id}"]')).to_have_text("0")
        expect(a.locator("#my-score")).to_have_text("0")  # a deal runs: its score again
        ann.shot("series-round-2")
        # Round 1's deals are still reachable: its seed and every score.
        deals = b.locator('#series details[data-round="1"]')
        deals.locator("summary").click()
        expect(deals.locator(".series-seed")).to_be_visible()
        expect(deals.locator(".cell-score").first).to_have_text(f"+{total}")

        # Round 2 ends in a tie at 0: a shared first place, a win for each.
        resign(a)
        b.click("#btn-resign")
        b.click("#btn-resign")  # the last one: the round is over at once
        for c in everyone:
            podium = c.page.locator("#podium")
            expect(podium.locator(".podium-title")).to_contain_text("Round 2 podium")
            expect(podium.locator(".step-first .podium-place")).to_have_text("=1st")
            expect(podium.locator(".step-first .podium-name")).to_have_count(2)
            table = c.page.locator("#series-table")
            expect(table.locator("tbody tr")).to_have_count(2)
            expect(table.locator('tbody tr[data-round="2"] .series-winner')).to_have_text(
                "Ann & Bob"
            )
            expect(table.locator(f'tfoot td[data-player="{b_id}"]')).to_have_text("1")
        expect(a.locator("#my-place")).to_have_text("=1st of 2")
        expect(a.locator("#sheet-table tfoot tr.places td")).to_have_text(["=1st", "=1st"])
        expect(a.locator("#series-table tfoot td.winner")).to_have_text("2")  # Ann's two
        no_errors(*everyone)
    finally:
        for c in everyone:
            c.close()


def resign_round(seat: BotSeat, number: int) -> None:
    """``seat`` resigns round ``number``'s one deal, once it is dealt to them."""

    async def go() -> None:
        session = seat.session
        while True:
            room = session.room
            if room is not None and room.round == number and room.my_board:
                break
            await session.wait_update(timeout=1)
        await session.resign()

    seat.run(go())


def test_a_long_series_lists_its_last_rounds_and_counts_the_earlier(
    server: str, browser: Browser
) -> None:
    """Past ROUNDS_LISTED rounds, the series table lists the last ones and a first
    row counts the rounds before them with each player's wins among them; match
    wins count every round. Two Python-client players tie ROUNDS_LISTED + 1 rounds
    (both resign at 0), then a spectator's page opens on the room."""
    ann, bob = BotSeat(server, "Ann"), BotSeat(server, "Bob")
    sam = Client(browser, server, "sam-long-series")
    try:
        settings: dict[str, Any] = {"deals_per_round": 1, "race_bonus": 0, "scoring": "standard"}
        code = ann.run(ann.session.create_room(settings)).code
        bob.run(bob.session.join_room(code))
        rounds = ROUNDS_LISTED + 1
        for number in range(1, rounds + 1):
            ann.run(ann.session.start() if number == 1 else ann.session.rematch())
            resign_round(ann, number)
            resign_round(bob, number)
        sam.join("Sam", code, role="spectator")
        table = sam.page.locator("#series-table")
        expect(table.locator("tbody tr[data-round]")).to_have_count(ROUNDS_LISTED)
        expect(table.locator('tbody tr[data-round="1"]')).to_have_count(0)
        earlier = table.locator("tbody tr.series-earlier")
        expect(earlier.locator("th")).to_have_text("1 earlier round")
        expect(earlier.locator("td")).to_have_text(["1 won", "1 won"])
        expect(table.locator("tfoot td")).to_have_text([str(rounds), str(rounds)])
        sam.shot("series-long")
        no_errors(sam)
    finally:
        sam.close()
        for seat in (ann, bob):
            seat.close()
