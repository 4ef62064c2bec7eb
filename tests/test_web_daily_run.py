"""A run of the daily in Chromium: the lobby's "Play today's draw 1" seats the
player in their run (the normal board screen), a reload mid-run resumes the
same board, resigning ends it and the room shows the day's leaderboard with
one's own rank, everyone's or friends'; a second attempt is refused. No frame
the page receives names the day's seed before the run is over.

The server runs in a thread of this process on a clock the test moves; the
day's deals are proven for real and published into its store by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from server.daily.schedule import DailyDeal, day_of
from tests.support.dailies import publish
from tests.support.inprocess import FakeClock
from tests.support.threaded import ThreadedServer
from tests.support.web import Client, no_errors


class DailyServer(ThreadedServer):
    """On a clock the test moves, with today's deals published at start."""

    def __init__(self) -> None:
        super().__init__(FakeClock(), publish_daily=False)
        self.deals: dict[str, DailyDeal] = {}

    def __enter__(self) -> DailyServer:
        super().__enter__()
        assert self.clock is not None
        today = day_of(self.clock.now())
        self.deals = self.call(publish(self.server.service.daily.store, today), 60)
        return self


@pytest.fixture
def run_server() -> Iterator[DailyServer]:
    with DailyServer() as server:
        yield server


def test_a_run_is_played_resumed_after_a_reload_and_ranked(
    run_server: DailyServer, browser: Browser
) -> None:
    ann = Client(browser, run_server.http, "ann-run")
    seed = run_server.deals["classic-draw1"].seed
    received: list[str] = []
    ann.page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda p: received.append(p if isinstance(p, str) else p.decode("latin-1")),
        ),
    )
    try:
        page = ann.open("/")
        page.fill("#name", "Ann")
        page.click("#daily-play-1")
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#board-host .board")).to_be_visible()
        expect(page.locator("#daily-board")).to_be_hidden()
        # The server's room: no host controls, no invitation.
        expect(page.locator("#host-panel")).to_be_hidden()
        expect(page.locator("#copy-invite")).to_be_hidden()
        stock = ann.board()
        assert stock is not None and stock["stock"] == 24
        run_server.advance(60_000)  # looking at the deal first: the run's clock waits
        expect(page.locator("#deal-clock")).to_have_text("0:00")
        for drawn in (1, 2, 3):
            run_server.advance(1000)
            page.keyboard.press("d")
            expect(page.locator("#board-host .slot.stock .count")).to_have_text(str(24 - drawn))
        before = ann.board()

        # A reload mid-run: the same board, the run going on.
        page.reload()
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#board-host .slot.stock .count")).to_have_text("21")
        assert ann.board() == before
        assert not any(seed in frame for frame in received)  # nothing told before the end

        run_server.advance(1000)
        page.click("#btn-resign")
        page.click("#btn-resign")  # asked twice, as every resignation
        panel = page.locator("#daily-board")
        expect(panel).to_be_visible()
        expect(panel.locator("#daily-board-you")).to_have_text("Your rank: 1 of 1")
        row = panel.locator("tr.mine")
        expect(row).to_contain_text("Ann")
        expect(row).to_contain_text("resigned")
        expect(row).to_contain_text("3.0 s")  # from the first move to the resignation
        page.click("#daily-board-friends")
        expect(page.locator("#daily-board-friends")).to_have_attribute("aria-pressed", "true")
        expect(panel.locator("tbody tr")).to_have_count(1)  # a guest's friends: themselves
        ann.shot("daily-run-board", panel)
        ann.shot("daily-run-over")

        # The profile counts the day in the streaks of days played (none won).
        page.click("#leave")
        expect(page.locator("#lobby-screen")).to_be_visible()
        page.click("#profile-open")
        expect(page.locator("#profile-streaks")).to_have_text(
            "Daily streaks: 1 day in a row played (best 1), 0 days won (best 0)."
        )
        page.click("#profile-close")
        expect(page.locator("#daily-streak")).to_have_text(
            "Your streak: 1 day in a row played, 0 days won."
        )

        # One attempt: back in the lobby, the same daily is refused in words.
        page.click("#daily-play-1")
        expect(page.locator("#daily-error")).to_contain_text("played this daily already")
        no_errors(ann)
    finally:
        ann.context.close()
