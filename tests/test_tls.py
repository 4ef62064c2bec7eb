"""``serve --tls-cert --tls-key``: one process serves HTTPS and WSS on its port.

A real server process with a certificate made for the test (self-signed for
localhost and 127.0.0.1, as mkcert makes one for a LAN name); clients trust it
as their root, as a friend's device trusts mkcert's.
"""

from __future__ import annotations

import re
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from websockets.exceptions import InvalidMessage

from tests.support.certs import self_signed
from tests.support.processes import ServerProcess
from tests.support.raw_client import Client
from tests.test_http_hardening import _qr_svg


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(None, tmp_path / "server.log", tls=self_signed(tmp_path / "tls"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def get(server: ServerProcess, path: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(f"{server.http}{path}", timeout=10, context=server.ssl) as reply:
        return reply.status, reply.headers.get("Content-Type", ""), reply.read()


def test_the_page_and_its_routes_come_over_https(tls_server: ServerProcess) -> None:
    assert tls_server.http.startswith("https://")
    status, ctype, body = get(tls_server, "/")
    assert status == 200 and ctype.startswith("text/html") and b"<!doctype html>" in body.lower()
    status, _ctype, body = get(tls_server, "/net.js")
    # the page's socket follows the page's scheme: wss from an https page
    assert status == 200 and b'"https:" ? "wss:" : "ws:"' in body
    status, ctype, body = get(tls_server, "/healthz")
    assert status == 200 and b'"status": "ok"' in body
    # the invite QR names the https link: the scheme is the one the listener serves
    status, ctype, body = get(tls_server, "/invite/K7QX2M.svg")
    link = f"https://127.0.0.1:{tls_server.port}/#join=K7QX2M"
    assert status == 200 and ctype == "image/svg+xml" and body == _qr_svg(link, "K7QX2M")


async def test_a_game_session_over_wss(tls_server: ServerProcess) -> None:
    a = await Client.open(tls_server.url, ssl=tls_server.ssl)
    b = await Client.open(tls_server.url, ssl=tls_server.ssl)
    try:
        welcome = await a.hello("Ann")
        assert welcome["type"] == "welcome" and welcome["name"] == "Ann"
        code = (await a.ok("create_room"))["room"]["code"]
        await b.hello("Bob")
        await b.ok("join_room", code=code)
        await a.ok("start")
        await b.event("deal_started")
        moved = await b.ok("move", deal=1, move={"kind": "draw"})
        assert moved["type"] == "moved"
        # and a session resumes over wss with its token, as over ws
        token = welcome["token"]
        await a.close()
        again = await Client.open(tls_server.url, ssl=tls_server.ssl)
        try:
            back = await again.request("hello", version=2, token=token)
            assert back["type"] == "welcome" and back["room"]["code"] == code
        finally:
            await again.close()
    finally:
        await b.close()


async def test_nothing_is_served_in_plain_text(tls_server: ServerProcess) -> None:
    plain = tls_server.url.replace("wss://", "ws://")
    with pytest.raises((InvalidMessage, OSError, EOFError)):
        client = await Client.open(plain)
        await client.close()
    # and a client that does not trust the certificate is refused by its own TLS
    with pytest.raises(ssl.SSLCertVerificationError):
        await Client.open(tls_server.url, ssl=ssl.create_default_context())


def test_a_certificate_without_its_key_is_refused_at_start(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path / "tls")
    exe = Path(sys.executable).parent / "klondike-race"
    alone = subprocess.run(
        [str(exe), "serve", "--memory", "--port", "0", "--tls-cert", str(cert)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert alone.returncode != 0 and "--tls-cert and --tls-key go together" in alone.stderr
    wrong = subprocess.run(
        [str(exe), "serve", "--memory", "--port", "0", "--tls-cert", str(key), "--tls-key",
         str(key)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert wrong.returncode != 0 and "are not a certificate and its key" in wrong.stderr


def test_the_page_over_https_plays_over_wss(tls_server: ServerProcess, browser: Browser) -> None:
    """Chromium on the https page (the test's certificate waved through, as a
    device that trusts mkcert's root would accept it): its socket is wss, and the
    lobby works over it."""
    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.goto(f"https://localhost:{tls_server.port}/")
        assert page.evaluate("window.isSecureContext")
        page.fill("#name", "Ann")
        page.click("#create-btn")
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#room-code")).to_have_text(re.compile(r"[0-9A-Z]{6}"))
        assert sockets and all(url.startswith("wss://localhost:") for url in sockets), sockets
    finally:
        context.close()
