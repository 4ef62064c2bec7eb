"""Accounts in the browser (client/web/account.js, signin.js, recovery.js), in
Chromium against a real server, the way people use them, on a laptop (1280×800)
and a phone (390×844).

A guest keeps their name mid-round (refused handles told in the form), keeps the
recovery codes the page shows once (downloaded, copied, ticked), and goes on
racing in the same seat under the handle. A second browser signs in with the
sign-in link the first one shows (the code in groups, its QR, a countdown) and
the seat moves there, as an account is one player on every device (the first is
told, and takes it back); the account lists both devices; the first signs the
second out, which is a guest again and says so. A signed-in page reloads signed
in. A recovery code signs a third browser in, and only once. "Sign out
everywhere" asks first, then turns every device back into a guest.
Throughout, no browser receives a secret (device token, session token, sign-in
or recovery code) issued to another: every frame each one received is read.
A page served by a name over plain http (a LAN) says why it has no passkeys.
The device list's words (how long ago, a device named by its browser) are the
page's own, read from words.js in the browser.

Waits on what the pages show (Playwright ``expect``), never on time."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from bench.server import UNCAPPED
from tests.support.processes import ServerProcess
from tests.support.web import CHROMIUM, CHROMIUM_ARGS, Client, no_errors

LAPTOP = (1280, 800)
PHONE = (390, 844)
DEVICE_KEY = "klondike-race.device"
YES = '.confirm [data-confirm="yes"]'


class Person(Client):
    """A Client whose every received frame is kept whole, from before its page opens."""

    def __init__(self, browser: Browser, base: str, label: str, size: tuple[int, int]) -> None:
        super().__init__(browser, base, label, *size)
        self.received: list[str] = []
        self.page.on("websocket", self._keep)

    def _keep(self, ws: Any) -> None:
        ws.on("framereceived", lambda payload: self.received.append(str(payload)))

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(f) for f in self.received if f.startswith("{")]

    def secrets(self) -> set[str]:
        """The secrets the server issued to this browser, read from its own frames."""
        found: set[str] = set()
        for m in self.messages():
            kind = m.get("type")
            if kind == "welcome":
                found |= {m["token"], m.get("device_token") or m["token"]}
            elif kind == "account_made":
                found |= {m["device_token"], *m["recovery_codes"]}
            elif kind == "recovery_codes":
                found |= set(m["codes"])
            elif kind == "link_code":
                found.add(m["code"])
        return found


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The module's server: every browser here comes from one address, which may
    take only so many handles a minute (the limit has tests of its own)."""
    options = [*UNCAPPED, "--sign-ups-per-minute", "1000"]
    server = ServerProcess(
        None, tmp_path_factory.mktemp("accounts") / "server.log", options=options
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def people(browser: Browser, server: str) -> Iterator[Any]:
    made: list[Person] = []

    def person(label: str, size: tuple[int, int] = LAPTOP) -> Person:
        made.append(Person(browser, server, label, size))
        return made[-1]

    yield person
    for p in made:
        p.close()


def fits_width(page: Page) -> None:
    """Nothing on the page is wider than its window (a phone scrolls only down)."""
    over = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert over <= 0, f"{over}px wider than the window"


def take_handle(page: Page, handle: str) -> None:
    page.fill("#handle", handle)
    page.click("#take-handle")


def keep_codes(page: Page) -> list[str]:
    """Read the recovery codes shown once, tick "I have kept them" and close them."""
    panel = page.locator("#codes-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("Each works once; keep them somewhere safe.")
    expect(page.locator("#account-back")).to_be_hidden()  # no way past them but keeping them
    codes = page.locator("#recovery-list li").all_inner_texts()
    assert len(codes) == 10 and len(set(codes)) == 10, codes
    expect(page.locator("#codes-done")).to_be_disabled()
    page.check("#kept-codes")
    page.click("#codes-done")
    expect(panel).to_be_hidden()
    return [c.strip() for c in codes]


def devices(page: Page) -> list[dict[str, str | None]]:
    items = page.locator("#devices li.device")
    return [
        {
            "device": li.get_attribute("data-device"),
            "current": li.get_attribute("data-current"),
            "text": li.inner_text(),
        }
        for li in items.all()
    ]


def is_guest(person: Person, told: str) -> None:
    """The page is a guest's again, in the lobby, saying why; a reload keeps it so."""
    page = person.page
    expect(page.locator("#lobby-screen")).to_be_visible()
    expect(page.locator("#lobby-message")).to_contain_text(told)
    expect(page.locator("#open-account")).to_be_hidden()
    expect(page.locator("#open-keep")).to_be_visible()
    assert page.evaluate(f"localStorage.getItem('{DEVICE_KEY}')") is None


def test_a_guest_keeps_their_name_and_signs_in_elsewhere(
    people: Any, server: str, tmp_path: Path
) -> None:
    ann = people("ann", LAPTOP)
    bob = people("bob", PHONE)
    ann.context.grant_permissions(["clipboard-read", "clipboard-write"])

    # Guests: nothing stands before Create and Join.
    code = ann.create("Ann")
    bob.join("Bob", code)
    ann.page.click("#btn-start")
    for p in (ann, bob):
        expect(p.page.locator("#board-host .board")).to_be_visible()
    ann_id = ann.my_id()

    # Bob keeps his name on a phone, mid-round: the handle is filled in from it.
    bob.page.click("#open-keep")
    expect(bob.page.locator("#account-screen")).to_be_visible()
    expect(bob.page.locator("#handle")).to_have_value("Bob")
    bob.page.click("#take-handle")
    expect(bob.page.locator("#codes-panel")).to_be_visible()
    fits_width(bob.page)
    keep_codes(bob.page)
    expect(bob.page.locator("#me-handle")).to_have_text("Bob")

    # Ann tries a reserved handle, then Bob's (in another case), then her own.
    page = ann.page
    page.click("#open-keep")
    take_handle(page, "admin")
    expect(page.locator("#handle-error")).to_contain_text("That handle won't do")
    take_handle(page, "BOB")
    expect(page.locator("#handle-error")).to_have_text(
        "That handle is someone else's: pick another."
    )
    take_handle(page, "Ann")
    expect(page.locator("#codes-panel")).to_be_visible()
    shown = [c.strip() for c in page.locator("#recovery-list li").all_inner_texts()]
    with page.expect_download() as download:
        page.click("#download-codes")
    saved = tmp_path / "codes.txt"
    download.value.save_as(saved)
    assert all(c in saved.read_text(encoding="utf-8") for c in shown)
    page.click("#copy-codes")
    assert page.evaluate("navigator.clipboard.readText()").split() == shown
    codes = keep_codes(page)
    assert codes == shown

    # Back in the race, in the same seat, under the handle.
    expect(page.locator("#room-screen")).to_be_visible()
    expect(page.locator("#board-host .board")).to_be_visible()
    expect(page.locator("#me-handle")).to_have_text("Ann")
    assert ann.my_id() == ann_id

    # A sign-in code for another device: in groups, as a QR, as a link, counting down.
    page.click("#open-account")
    expect(page.locator("#account-handle")).to_have_text("Ann")
    expect(page.locator("#account-since")).to_contain_text("Yours since")
    page.click("#make-link")
    expect(page.locator("#link-out")).to_be_visible()
    groups = page.locator("#link-code .group").all_inner_texts()
    assert len(groups) >= 5 and all(re.fullmatch(r"[A-Z2-7]{1,5}", g) for g in groups), groups
    qr = page.locator("#link-qr").get_attribute("src") or ""
    assert qr.startswith("data:image/svg+xml,"), qr[:40]
    assert page.locator("#link-qr").evaluate("img => img.complete && img.naturalWidth > 0")
    url = page.locator("#link-url").input_value()
    assert url.startswith(f"{server}/#link="), url
    assert url.split("=", 1)[1].replace("-", "") == "".join(groups)
    expect(page.locator("#link-expires")).to_have_text(re.compile(r"Expires in (10:00|9:[0-5]\d)"))

    # A second browser (a phone) opens the link: the code is filled in, one press
    # signs in, and the account's seat moves there (one player on every device).
    ann2 = people("ann-phone", PHONE)
    ann2.page.goto(url)
    expect(ann2.page.locator("#account-screen")).to_be_visible()
    expect(ann2.page.locator("#link-input")).not_to_have_value("")
    assert "#link=" not in ann2.page.url  # the secret left the address bar at once
    ann2.page.click("#link-sign-in")
    expect(ann2.page.locator("#me-handle")).to_have_text("Ann")
    expect(ann2.page.locator("#room-code")).to_have_text(code)  # the account's room follows it
    fits_width(ann2.page)
    elsewhere = "Your account is playing in another tab or on another device."
    expect(page.locator("#replaced-banner")).to_contain_text(elsewhere)
    page.locator("#replaced-banner button").click()  # "Use it here": the laptop takes it back
    expect(ann2.page.locator("#replaced-banner")).to_contain_text(elsewhere)
    expect(page.locator("#replaced-banner")).to_have_count(0)

    # The account lists both devices, this one marked; the phone's is signed out.
    page.click("#open-account")
    expect(page.locator("#devices li.device")).to_have_count(2)
    listed = devices(page)
    assert [d["current"] for d in listed] == ["yes", "no"]
    assert "this device" in (listed[0]["text"] or "").lower()
    assert "last used just now" in (listed[1]["text"] or "")
    page.locator('#devices li.device[data-current="no"] .device-sign-out').click()
    expect(page.locator("#devices li.device")).to_have_count(1)
    # The phone, asked to take its seat back, finds itself signed out and says so.
    ann2.page.locator("#replaced-banner button").click()
    is_guest(ann2, "This device was signed out.")
    ann2.page.reload()
    expect(ann2.page.locator("#open-keep")).to_be_visible()
    expect(ann2.page.locator("#open-account")).to_be_hidden()

    # A signed-in page stays signed in across a reload, in its seat.
    bob.page.reload()
    expect(bob.page.locator("#me-handle")).to_have_text("Bob")
    expect(bob.page.locator("#room-code")).to_have_text(code)
    expect(bob.page.locator("#board-host .board")).to_be_visible()

    # A recovery code signs a third browser in, once.
    carol = people("ann-third", LAPTOP)
    carol.open()
    carol.page.click("#open-sign-in")
    carol.page.fill("#recovery-input", codes[0].lower())  # as typed, any case
    carol.page.click("#recovery-sign-in")
    expect(carol.page.locator("#me-handle")).to_have_text("Ann")
    expect(page.locator("#replaced-banner")).to_contain_text(elsewhere)
    dave = people("dave", PHONE)
    dave.open()
    dave.page.click("#open-sign-in")
    dave.page.fill("#recovery-input", codes[0])
    dave.page.click("#recovery-sign-in")
    expect(dave.page.locator("#sign-in-error")).to_have_text(
        "That code does not work: it may be mistyped, used already, or expired."
    )
    expect(dave.page.locator("#open-account")).to_be_hidden()

    # Sign out everywhere: asked first; then every browser of Ann's is a guest again.
    carol.page.click("#open-account")
    expect(carol.page.locator("#devices li.device")).to_have_count(2)
    carol.page.click("#sign-out-all")
    expect(carol.page.locator(".confirm")).to_contain_text("Sign out every device, this one too?")
    carol.page.click(YES)
    is_guest(carol, "You signed out on this device.")
    page.locator("#replaced-banner button").click()
    is_guest(ann, "This device was signed out.")

    # No browser received a secret issued to another.
    everyone = [ann, bob, ann2, carol, dave]
    for person in everyone:
        mine = person.secrets()
        received = "\n".join(person.received)
        for other in everyone:
            if other is person:
                continue
            for secret in other.secrets() - mine:
                forms = {secret, secret.replace("-", "")}
                assert not any(f in received for f in forms), (person.label, other.label)
    no_errors(*everyone)


def test_a_visitor_keeps_a_name_and_a_guest_in_a_room_is_asked_first(people: Any) -> None:
    """Keeping a name needs no room: a visitor's first session is opened for it;
    a new set of recovery codes replaces the old, shown once. A guest sitting in
    a room who signs in (a code typed, in any case and spacing) is asked first,
    since the guest's seat goes; Cancel keeps it. Signing out here is at once a
    guest's page again."""
    xena = people("xena", PHONE)
    page = xena.open()
    page.click("#open-keep")
    expect(page.locator("#lobby-screen")).to_be_hidden()
    take_handle(page, "Xena")
    first = keep_codes(page)
    expect(page.locator("#lobby-screen")).to_be_visible()
    expect(page.locator("#playing-as")).to_have_text("You play as Xena, signed in.")
    expect(page.locator("#name")).to_be_hidden()
    page.click("#open-account")
    page.click("#new-codes")  # a new set replaces the old, asked first and shown once
    expect(page.locator(".confirm")).to_contain_text("stop working")
    page.click(YES)
    second = keep_codes(page)
    assert not set(second) & set(first)
    expect(page.locator("#my-account")).to_be_visible()
    page.click("#make-link")
    expect(page.locator("#link-qr")).to_be_visible()
    fits_width(page)
    qr = page.locator("#link-qr").bounding_box()
    assert qr and qr["x"] >= 0 and qr["x"] + qr["width"] <= PHONE[0], qr
    typed = " ".join(page.locator("#link-code .group").all_inner_texts()).lower()

    yuri = people("yuri", LAPTOP)
    code = yuri.create("Yuri")
    zed = people("zed", PHONE)
    zed.join("Zed", code)
    yuri.page.click("#open-sign-in")
    yuri.page.fill("#link-input", typed)
    yuri.page.click("#link-sign-in")
    question = yuri.page.locator(".confirm")
    expect(question).to_contain_text(f"You are playing in room {code} as a guest")
    yuri.page.click('.confirm [data-confirm="no"]')
    expect(yuri.page.locator("#open-keep")).to_be_visible()  # still the guest
    yuri.page.click("#link-sign-in")
    yuri.page.click(YES)
    expect(yuri.page.locator("#me-handle")).to_have_text("Xena")
    expect(yuri.page.locator("#lobby-screen")).to_be_visible()  # Xena sits in no room
    expect(zed.page.locator("li.member")).to_have_count(1)  # the guest left the room, not away
    expect(yuri.page.locator("#playing-as")).to_have_text("You play as Xena, signed in.")

    # Signing out here is a guest's page again at once, with a name to give.
    yuri.page.click("#open-account")
    yuri.page.locator('#devices li.device[data-current="yes"] .device-sign-out').click()
    is_guest(yuri, "You signed out on this device.")
    expect(yuri.page.locator("#name")).to_be_visible()
    # The old set's codes work no more; one of the new set signs in again, and the
    # lobby's "signed out", no longer true, is gone.
    yuri.page.click("#open-sign-in")
    yuri.page.fill("#recovery-input", first[0])
    yuri.page.click("#recovery-sign-in")
    expect(yuri.page.locator("#sign-in-error")).to_contain_text("That code does not work")
    yuri.page.fill("#recovery-input", second[0])
    yuri.page.click("#recovery-sign-in")
    expect(yuri.page.locator("#me-handle")).to_have_text("Xena")
    expect(yuri.page.locator("#lobby-message")).to_be_hidden()
    no_errors(xena, yuri, zed)


def test_a_page_on_the_lan_says_why_it_offers_no_passkeys(browser: Browser, server: str) -> None:
    """Served by a name over plain http (a LAN), the page is not a secure context:
    no passkey button anywhere, and the Account screen says why. The sign-in link
    names the address the page came from; the codes, with no clipboard there,
    are selected for copying (or downloaded)."""
    port = server.rsplit(":", 1)[1]
    lan = f"http://klondike.test:{port}"
    args = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP klondike.test 127.0.0.1"]
    # A browser of its own that finds the name at the test's server.
    on_lan = browser.browser_type.launch(executable_path=str(CHROMIUM), args=args)
    try:
        lena = Person(on_lan, lan, "lena", PHONE)
        page = lena.open()
        assert page.evaluate("window.isSecureContext") is False
        page.click("#open-keep")
        expect(page.locator("#passkey-sign-in")).to_be_hidden()
        take_handle(page, "Lena")
        expect(page.locator("#codes-panel")).to_be_visible()
        page.click("#copy-codes")
        expect(page.locator("#toast")).to_have_text("Select and copy the codes, or download them.")
        assert page.evaluate("getSelection().toString()").split() == [
            c.strip() for c in page.locator("#recovery-list li").all_inner_texts()
        ]
        keep_codes(page)
        page.click("#open-account")
        expect(page.locator("#passkeys-insecure")).to_have_text(
            "Passkeys need a secure page: open this site over HTTPS or on localhost."
        )
        expect(page.locator("#passkeys")).to_be_hidden()
        page.click("#make-link")
        expect(page.locator("#link-url")).to_have_value(re.compile(f"^{lan}/#link="))
        fits_width(page)
        no_errors(lena)
        lena.close()
    finally:
        on_lan.close()


UAS = {
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Mobile Safari/537.36": "Chrome on Android",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1": "Safari on iPhone",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0": (
        "Firefox on Windows"
    ),
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Safari/537.36 Edg/126.0": "Edge on macOS",
    "curl/8.5": "A browser",
}


def test_times_and_devices_in_words(people: Any) -> None:
    """The device list's words, from the page's own words.js: how long ago, the
    code's time left, and a device named by its browser and system."""
    page = people("words", PHONE).open()
    said = page.evaluate(
        """async (uas) => {
          const w = await import("/words.js");
          const now = 1_800_000_000;
          return {
            ago: [0, 59, 60, 3599, 3600, 86399].map((s) => w.agoText(now - s, now)),
            day: w.agoText(now - 86400, now) === w.dateText(now - 86400),
            left: [600_000, 61_500, 1, 0, -5].map((ms) => w.expiresText(ms)),
            labels: Object.fromEntries(uas.map((ua) => [ua, w.deviceLabel(ua)])),
          };
        }""",
        list(UAS),
    )
    assert said["ago"] == ["just now", "just now", "1 min ago", "59 min ago", "1 h ago", "23 h ago"]
    assert said["day"]
    expired = "This code has expired: make a new one."
    assert said["left"] == [
        "Expires in 10:00",
        "Expires in 1:02",
        "Expires in 0:01",
        expired,
        expired,
    ]
    assert said["labels"] == UAS
