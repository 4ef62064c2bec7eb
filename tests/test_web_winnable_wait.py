"""A ``deals: winnable`` room on a dry pool, in Chromium: the page says "Finding a
winnable deal…" while the server finds one (the rest of the page still works, and a
late friend joins meanwhile), and the notice goes when the deal is dealt, to the
friend too.

The server runs in a thread of this process so that its pool's solver can be held
back (tests/support/gated.py): the pool stays dry, deterministically, until the
test lets one layout, known to be proven within the budget, be solved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from server.rooms.proofs import ProvenPools
from tests.support.gated import GatedExecutor
from tests.support.threaded import ThreadedServer
from tests.support.waiting import eventually_blocking
from tests.support.web import Client, no_errors

PROVEN = "dry-pool-0"  # proven for draw one within BUDGET (tests/test_server_winnable.py)
BUDGET = 60_000


class DryServer(ThreadedServer):
    """On real time, with a held-back solver."""

    def __init__(self) -> None:
        self.gated = GatedExecutor()
        pools = ProvenPools(size=1, max_states=BUDGET, new_seed=lambda: PROVEN, executor=self.gated)
        super().__init__(proofs=pools, publish_daily=False)  # the solver is the room's alone

    def __exit__(self, *exc: object) -> None:
        self.gated.allow(100)
        super().__exit__(*exc)
        self.gated.shutdown()


@pytest.fixture
def dry_server() -> Iterator[DryServer]:
    with DryServer() as server:
        yield server


def test_a_dry_pool_shows_finding_a_winnable_deal(dry_server: DryServer, browser: Browser) -> None:
    ann = Client(browser, dry_server.http, "ann")
    bob = Client(browser, dry_server.http, "bob")
    cy = Client(browser, dry_server.http, "cy")
    try:
        code = ann.create("Ann", deals="winnable", deals_per_round=1)
        bob.join("Bob", code)
        ann.page.click("#btn-start")  # the pool is dry: the solver is held back
        for c in (ann, bob):
            expect(c.page.locator("#finding-deal")).to_have_text("Finding a winnable deal…")
        ann.shot("winnable-finding-deal")
        expect(ann.page.locator("#board-host .card").first).not_to_be_visible()

        # Not blocking anything else in the page: the sheet and the members panel.
        expect(bob.page.locator("li.member")).to_have_count(2)
        # Nor the room: a late friend joins meanwhile, and is told too.
        cy.join("Cy", code)
        expect(cy.page.locator("#finding-deal")).to_have_text("Finding a winnable deal…")
        for c in (ann, bob, cy):
            expect(c.page.locator("li.member")).to_have_count(3)

        dry_server.gated.allow(1)  # one layout solved: proven, dealt, to Cy too
        for c in (ann, bob, cy):
            expect(c.page.locator("#board-host .card").first).to_be_visible()
            expect(c.page.locator("#finding-deal")).to_have_count(0)
        no_errors(ann, bob, cy)
    finally:
        for c in (ann, bob, cy):
            c.context.close()


def test_a_deal_that_ends_on_a_dry_pool_shows_its_results_while_the_next_is_found(
    dry_server: DryServer, browser: Browser
) -> None:
    """The next deal's seed, taken ahead, is still being found when the deal ends:
    the last resign is answered at once, the results show, and their countdown
    says the next deal is being found; then it is dealt."""
    ann = Client(browser, dry_server.http, "ann-dry-break")
    try:
        code = ann.create("Ann", deals="winnable", deals_per_round=2, break_seconds=0)
        assert code
        ann.page.click("#btn-start")
        dry_server.gated.allow(1)  # deal 1's seed; the one taken ahead waits
        expect(ann.page.locator("#board-host .card").first).to_be_visible()
        # The seed taken ahead has found the pool dry (the room's own record of it,
        # read across the server's thread: nothing else tells the test).
        eventually_blocking(
            lambda: any(r.seeds.coming for r in dry_server.server.service.rooms.values()),
            what="the seed taken ahead waiting on a dry pool",
        )
        ann.page.click("#btn-resign")
        ann.page.click("#btn-resign")
        expect(ann.page.locator("#results")).to_be_visible()
        expect(ann.page.locator("#results-countdown")).to_have_text(
            "Finding a winnable deal for deal 2…"
        )
        ann.shot("winnable-finding-in-break")
        dry_server.gated.allow(1)
        expect(ann.page.locator("#deal-of")).to_have_text("2 of 2")
        expect(ann.page.locator("#results")).to_be_hidden()
        no_errors(ann)
    finally:
        ann.context.close()
