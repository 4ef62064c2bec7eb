"""Words for people, in Chromium against a real server: a refused drop told with
card symbols and the rule in plain words, a form error naming the field's label,
the host's controls saying when each rule applies (a change mid-deal pending)
and asking before they end a deal, the players told why it ended, a stopped
server said plainly (board paused, clock stopped), and Enter in an invite's name
field joining."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.processes import ServerProcess
from tests.support.web import (
    WAIT_MS,
    Client,
    drag,
    illegal_pair,
    no_errors,
    source_locator,
    target_locator,
    unfold_house_rules,
)

SUIT = re.compile("[♣♦♥♠]")
YES = '.confirm [data-confirm="yes"]'
NO = '.confirm [data-confirm="no"]'


@pytest.fixture
def people(browser: Browser, server: str) -> Iterator[list[Client]]:
    made: list[Client] = []

    def person(label: str) -> Client:
        made.append(Client(browser, server, label))
        return made[-1]

    yield [person("ann"), person("bob")]
    for c in made:
        c.close()


def _start(ann: Client, bob: Client, **settings: object) -> str:
    code = ann.create("Ann", **settings)
    bob.join("Bob", code)
    expect(ann.page.locator("#members li.member")).to_have_count(2)
    ann.page.click("#btn-start")
    for c in (ann, bob):
        expect(c.page.locator("#board-host .board")).to_be_visible()
    return code


def test_a_refused_drop_is_told_in_words(people: list[Client]) -> None:
    ann, bob = people
    _start(ann, bob, deals_per_round=1)
    b = ann.board()
    assert b is not None
    pair = illegal_pair(b)
    assert pair, "no two piles whose tops do not fit"
    p, q = pair
    drag(
        ann.page,
        source_locator(ann.page, ("tableau", p, len(b["piles"][p]["up"]) - 1)),
        target_locator(ann.page, b, ("tableau", q)),
    )
    status = ann.page.locator("#move-status .reason")
    expect(status).to_contain_text("can't go on the")
    text = status.inner_text()
    assert len(SUIT.findall(text)) == 2, text  # both cards, by their suit symbols
    assert "build down" in text and "alternating colours" in text, text
    assert not re.search(r"\b[A2-9TJQK][CDHS]\b", text), text  # no wire codes in the words
    # Words only: the code stays on the wire, not on the screen.
    assert "not_one_lower" not in text and "not_alternating_colour" not in text, text
    expect(ann.page.locator("#move-status .reason-code")).to_have_count(0)
    expect(status).to_have_attribute(
        "data-code", re.compile("^(not_one_lower|not_alternating_colour)$")
    )
    ann.shot("words-refusal", ann.page.locator("#move-status"))
    no_errors(ann, bob)


def test_a_form_error_names_the_fields_label(people: list[Client]) -> None:
    ann = people[0]
    page = ann.open()
    page.fill("#name", "Ann")
    unfold_house_rules(page)
    page.fill("#create-deals_per_round", "50")
    page.click("#create-btn")
    error = page.locator("#create-deals_per_round-error")
    expect(error).to_have_text("Deals per round must be a whole number from 1 to 20.")
    expect(page.locator("#lobby-screen")).to_be_visible()
    no_errors(ann)


def test_host_controls_say_when_rules_apply_and_ask_first(people: list[Client]) -> None:
    ann, bob = people
    _start(ann, bob, deals_per_round=3, draw=1)
    host = ann.page
    # Two groups: what applies at once, what waits for the next deal.
    expect(host.locator("#host-now #host-scoring")).to_be_visible()
    expect(host.locator("#host-now #host-time_limit_minutes")).to_be_visible()
    expect(host.locator("#host-next #host-draw")).to_be_visible()
    expect(host.locator("#host-next #host-undo")).to_be_visible()
    expect(host.get_by_text("House rules (apply at once)")).to_have_count(0)

    # A rule of play changed mid-deal is pending: the running deal keeps draw one.
    host.select_option("#host-draw", "3")
    expect(host.locator("#host-draw-pending")).to_have_text(
        "pending: from the next deal (this deal: Draw one)"
    )
    expect(bob.page.locator("#rules-pending")).to_have_text("From the next deal: Draw: Draw three.")

    # Next deal asks; Cancel does nothing.
    host.click("#btn-next")
    expect(host.locator(".confirm")).to_contain_text("End deal 1 for everyone now?")
    expect(host.locator("#btn-next")).to_be_hidden()
    host.click(NO)
    expect(host.locator(".confirm")).to_have_count(0)
    expect(host.locator("#btn-next")).to_be_visible()
    for c in (ann, bob):
        expect(c.page.locator("#deal-of")).to_have_text("1 of 3")
    expect(host.locator("#host-draw-pending")).to_be_visible()

    # Confirmed, it moves on; the players read why their deal ended.
    host.click("#btn-next")
    ann.shot("words-confirm", host.locator("#host-panel"))
    host.click(YES)
    for c in (ann, bob):
        expect(c.page.locator("#deal-of")).to_have_text("2 of 3")
    expect(bob.page.locator("#deal-ended")).to_have_text(
        "Deal 1 ended: Ann, the host, started the next deal."
    )
    expect(host.locator("#deal-ended")).to_have_text("Deal 1 ended: you started the next deal.")
    # Deal 2 was dealt under draw three: nothing is pending now.
    expect(host.locator("#host-draw-pending")).to_have_count(0)
    expect(bob.page.locator("#rules-pending")).to_have_text("")

    # Remove asks too, in the players list; Cancel keeps Bob.
    host.click('button[aria-label="Remove Bob"]')
    expect(host.locator("#members .confirm")).to_contain_text("Remove Bob from the room?")
    host.click(f"#members {NO}")
    expect(host.locator("#members li.member")).to_have_count(2)

    # Leaving mid-round asks the player; Cancel keeps the seat.
    bob.page.click("#leave")
    expect(bob.page.locator(".confirm")).to_contain_text("Leave the room mid-round?")
    bob.page.click(NO)
    expect(bob.page.locator("#room-screen")).to_be_visible()
    expect(host.locator("#members li.member")).to_have_count(2)
    no_errors(ann, bob)


def test_a_stopped_server_is_said_plainly(browser: Browser, server_process: ServerProcess) -> None:
    server_process.start()
    ann = Client(browser, server_process.http, "ann")
    try:
        ann.create("Ann", deals_per_round=1)
        page = ann.page
        page.click("#btn-start")
        expect(page.locator("#board-host .board")).to_be_visible()
        expect(page.locator("#conn")).to_have_text("Connected")
        expect(page.locator("#btn-draw")).to_be_enabled()

        server_process.kill()
        lost = page.locator("#conn-lost")
        expect(lost).to_contain_text("Reconnecting… the server is not answering yet")
        expect(page.locator("#conn")).to_have_text("Reconnecting… the server is not answering yet")
        # The board says why it takes no moves: not "Deal over", the deal runs on.
        expect(page.locator("#board-host .finished-label")).to_have_text("Reconnecting…")
        # The board takes no moves and the clock stands still until it is back.
        expect(page.locator("#table")).to_have_class(re.compile(r"\bdisconnected\b"))
        expect(page.locator("#btn-draw")).to_be_disabled()
        expect(page.locator("#deal-clock")).to_have_attribute("data-paused", "true")
        ann.shot("words-connection-lost")

        # Back (a memory server forgets the room): the page says where it stands.
        server_process.start()
        expect(page.locator("#lobby-message")).to_contain_text(
            "Your session expired", timeout=2 * WAIT_MS
        )
        expect(lost).to_be_hidden()
        expect(page.locator("#conn")).not_to_have_text(re.compile("lost"))
        # Chromium itself logs each refused socket while the server is down (not
        # the page's doing); any other console error fails the test.
        refused = f"WebSocket connection to '{server_process.url}' failed"
        assert any(refused in e for e in ann.errors)
        ann.errors[:] = [e for e in ann.errors if not (refused in e and "REFUSED" in e)]
        no_errors(ann)
    finally:
        ann.close()


def test_enter_in_the_invite_name_field_joins(people: list[Client]) -> None:
    ann, bob = people
    code = ann.create("Ann")
    page = bob.open(f"/#join={code}")
    expect(page.locator("#join-code")).to_have_value(code)
    page.fill("#name", "Bob")
    page.press("#name", "Enter")
    expect(page.locator("#room-screen")).to_be_visible()
    expect(page.locator("#room-code")).to_have_text(code)
    expect(ann.page.locator("#members li.member")).to_have_count(2)
    no_errors(ann, bob)
