"""The daily deals in Chromium: the lobby's "Daily deal" panel with today's
commitments, and the Daily screen (also at ``/daily``) listing the days ahead by
their commitments and the days over by their seeds, each checked by the page
itself: the seed hashes to the commitment the page saw before, and the proof,
followed from the seed's layout, wins.

The server runs in a thread of this process on a clock the test moves, so a
day can end without waiting for midnight."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest
from playwright.sync_api import Browser, expect

from server.daily.schedule import DAYS_AHEAD, LADDERS, day_of, day_start
from server.rooms.proofs import ProvenPools
from tests.support.inprocess import FakeClock
from tests.support.threaded import ThreadedServer
from tests.support.waiting import TIMEOUT
from tests.support.web import Client, no_errors

BUDGET = 60_000


class DailyServer(ThreadedServer):
    """On a clock the test moves, publishing with a small solver budget."""

    def __init__(self) -> None:
        super().__init__(FakeClock(), proofs=ProvenPools(size=1, max_states=BUDGET))

    def published(self, today: date) -> None:
        """Until the week from ``today`` on is published."""
        last = today + timedelta(DAYS_AHEAD)
        daily = self.server.service.daily
        self.call(daily.until_published(last), 8 * TIMEOUT)

    def next_day(self) -> date:
        """The server's clock to the first millisecond of the next UTC day: that day."""
        day = day_of(self.clock.now()) + timedelta(1)
        self.loop.call_soon_threadsafe(self.clock.advance, day_start(day) - self.clock.now())
        return day


@pytest.fixture
def daily_server() -> Iterator[DailyServer]:
    with DailyServer() as server:
        server.published(day_of(server.clock.now()))
        yield server


def test_the_lobby_panel_and_the_daily_screen(daily_server: DailyServer, browser: Browser) -> None:
    ann = Client(browser, daily_server.http, "ann-daily")
    try:
        first = day_of(daily_server.clock.now())
        page = ann.open("/")
        panel = page.locator("#daily-panel")
        expect(panel).to_be_visible()
        page.click("#daily-open")
        screen = page.locator("#daily-screen")
        expect(screen).to_be_visible()
        expect(page.locator("#lobby-screen")).to_be_hidden()
        rows = screen.locator("tr[data-day]")
        expect(rows).to_have_count(len(LADDERS) * (DAYS_AHEAD + 1))
        expect(screen.locator('tr[data-when="revealed"]')).to_have_count(0)
        today = screen.locator('tr[data-when="today"]')
        expect(today).to_have_count(len(LADDERS))
        expect(today.first).to_contain_text("revealed tomorrow")
        commitments = {
            r.get_attribute("data-day"): r.locator("td.hash code").first.inner_text()
            for r in rows.all()
        }
        page.click("#daily-close")
        expect(panel.locator("li[data-ladder]")).to_have_count(len(LADDERS))
        shown = panel.locator('li[data-ladder="classic-draw3"] code').inner_text()
        assert shown == commitments[f"{first.isoformat()} classic-draw3"]

        # The day ends on the server's clock; /daily shows its seeds, checked here.
        daily_server.published(daily_server.next_day())
        page = ann.open("/daily")
        screen = page.locator("#daily-screen")
        revealed = screen.locator('tr[data-when="revealed"]')
        expect(revealed).to_have_count(len(LADDERS))
        for row in revealed.all():
            expect(row).to_contain_text("✓ seed matches the commitment; the proof wins")
            assert (
                row.locator("td.hash code").first.inner_text()
                == commitments[row.get_attribute("data-day")]
            )
        expect(screen.locator('tr[data-when="today"]')).to_have_count(len(LADDERS))
        expect(screen.locator('tr[data-when="ahead"]')).to_have_count(len(LADDERS) * DAYS_AHEAD)
        ann.shot("daily", screen)
        no_errors(ann)
    finally:
        ann.context.close()
