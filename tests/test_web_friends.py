"""Friends in the browser (client/web/friends.js), in Chromium against a real
server, the way people use them: Ann on a laptop (1280×800), Bea on a phone
(390×844).

Both keep their names as handles. Ann copies her friend link from the Friends
panel; Bea opens it and the two are friends at once. Ann creates a room and
invites Bea from it: Bea's page shows the invitation with a Join. Bea opens her
Friends panel instead, sees Ann online in that room, and one click of Join puts
her in it; Ann's profile shows her record against Bea. Waits on what the pages
show (Playwright ``expect``), never on time. Screenshots:
artifacts/friends-laptop.png, artifacts/friends-phone.png."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.support.web import LAPTOP, keep_name, no_errors

PHONE = (390, 844)


def fits_width(page: Page) -> None:
    over = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert over <= 0, f"{over}px wider than the window"


def friend_row(page: Page, handle: str) -> Any:
    return page.locator(f'#friend-list li.friend[data-handle="{handle}"]')


def test_friends_by_link_then_one_click_into_a_friends_room(people: Any) -> None:
    ann = people("ann-friends", LAPTOP)
    bea = people("bea-friends", PHONE)
    ann.context.grant_permissions(["clipboard-read", "clipboard-write"])
    keep_name(ann, "AnnF")
    keep_name(bea, "BeaF")

    # Ann's friend link, copied from her Friends panel.
    ann.page.click("#friends-open")
    expect(ann.page.locator("#friends-dialog")).to_be_visible()
    expect(ann.page.locator("#friends-body")).to_contain_text("No friends yet")
    ann.page.click("#friend-link-copy")
    link = ann.page.locator("#friend-link")
    expect(link).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/#friend=f\.[\w-]{32}$"))
    url = link.input_value()
    assert ann.page.evaluate("navigator.clipboard.readText()") == url
    ann.page.click("#friends-close")

    # Bea opens it: friends at once, and the link leaves her address bar.
    bea.page.goto(url)
    expect(friend_row(bea.page, "AnnF")).to_be_visible()
    assert "#friend=" not in bea.page.url
    expect(friend_row(bea.page, "AnnF")).to_contain_text("online, not in a room")
    bea.page.click("#friends-close")

    # Ann creates a room and invites Bea from it.
    ann.page.click("#create-btn")  # signed in: no name to give, the handle is it
    expect(ann.page.locator("#room-screen")).to_be_visible()
    code = ann.page.locator("#room-code").inner_text()
    expect(ann.page.locator("#invite-friend")).to_be_visible()
    ann.page.click("#invite-friend")
    invite = friend_row(ann.page, "BeaF").locator("button", has_text="Invite")
    invite.click()
    notice = bea.page.locator("#friend-invite")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text(f"AnnF invites you to room {code}.")
    ann.page.click("#friends-close")

    # Bea looks in her Friends panel: Ann is online in that room. One click joins.
    bea.page.click("#friends-open")
    row = friend_row(bea.page, "AnnF")
    expect(row).to_contain_text(f"online, in room {code}")
    expect(row.locator("button", has_text="Watch")).to_be_visible()
    fits_width(bea.page)
    bea.shot("friends-phone")
    row.locator("button", has_text="Join").click()
    expect(bea.page.locator("#room-screen")).to_be_visible()
    expect(bea.page.locator("#room-code")).to_have_text(code)
    expect(bea.page.locator("#friends-dialog")).to_be_hidden()
    expect(ann.page.locator("#members li.member")).to_have_count(2)

    # Ann sees Bea in her room (nothing to join, nor to invite her to), and their
    # record together (none yet).
    ann.page.click("#invite-friend")
    row = friend_row(ann.page, "BeaF")
    expect(row).to_contain_text("online, in your room")
    expect(row.locator("button", has_text=re.compile("Join|Watch|Invite"))).to_have_count(0)
    records = ann.page.locator('.friend-records tr[data-handle="BeaF"] td')
    expect(records).to_have_text(["0", "0", "0"])
    fits_width(ann.page)
    ann.shot("friends-laptop")

    # Her profile has the same table.
    ann.page.click("#friends-close")
    ann.page.click("#profile-open")
    expect(ann.page.locator('#profile-friends tr[data-handle="BeaF"] td')).to_have_text(
        ["0", "0", "0"]
    )
    no_errors(ann, bea)
