"""HTTP as a careful server does it, over real sockets: GET and HEAD only, headers
that forbid framing and foreign code, the game socket refused to other origins,
/metrics for loopback peers or on a listener of its own."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
import segno
from websockets.asyncio.client import connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Request

from server.net.http import CSP, HttpRoutes
from tests.support.inprocess import running_server
from tests.support.processes import ServerProcess
from tests.support.reference_race import beside_a_race

WEB = {"static_dir": None}


async def http(
    port: int, method: str, path: str, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await reader.read()  # the server closes after one answer
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), fields, body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_only_get_and_head(method: str) -> None:
    async with running_server() as server, beside_a_race(server):
        status, headers, _ = await http(server.port, method, "/")
        assert status == 405
        assert headers["allow"] == "GET, HEAD"
        status, headers, _ = await http(server.port, method, "/ws")
        assert (status, headers["allow"]) == (405, "GET")


async def test_head_is_get_without_a_body() -> None:
    async with running_server(static_dir=None) as server, beside_a_race(server):
        got = await http(server.port, "GET", "/healthz")
        head = await http(server.port, "HEAD", "/healthz")
        assert got[0] == head[0] == 200
        assert head[2] == b""
        assert head[1]["content-length"] == str(len(got[2])) != "0"


async def test_every_answer_forbids_framing_and_foreign_code() -> None:
    async with running_server() as server, beside_a_race(server):
        for path in ("/", "/healthz", "/no-such-file"):
            _, headers, _ = await http(server.port, "GET", path)
            assert headers["content-security-policy"] == CSP
            assert "frame-ancestors 'none'" in CSP and "script-src 'self'" in CSP
            assert headers["referrer-policy"] == "no-referrer"
            assert headers["x-frame-options"] == "DENY"


async def test_the_socket_opens_only_for_its_own_origin() -> None:
    async with (
        running_server(origins=["https://cards.example.org"]) as server,
        beside_a_race(server),
    ):
        own = f"http://127.0.0.1:{server.port}"
        for origin in (None, own, "https://cards.example.org"):
            headers = {"Origin": origin} if origin else {}
            async with connect(server.url, additional_headers=headers) as ws:
                await ws.send(b"\x80")  # any frame: the socket is open
        for origin in ("http://evil.example", f"http://localhost:{server.port + 1}", "null"):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(server.url, additional_headers={"Origin": origin}):
                    pass
            assert refused.value.response.status_code == 403


async def test_an_overlong_address_or_header_is_refused_not_failed(
    server_process: ServerProcess,
) -> None:
    """``serve`` as users run it, the browser client's files on disk: an address
    longer than any of this server's gets 414 whatever it names (a file, a
    player's page, the socket; a name the file system would refuse), one within
    that naming too long a file 404, a header line over 8 KiB or more than 128
    headers 431. The server's log shows none of them as a failure of its own."""
    await asyncio.to_thread(server_process.start)
    port = server_process.port
    for path in (
        "/" + "a" * 5000,
        "/p/" + "a" * 5000,
        "/ws?" + "a" * 5000,
        "/" + "a/" * 3000,
        "/" + "a" * 100_000,  # past what websockets reads of a line
    ):
        status = (await http(port, "GET", path))[0]
        assert status == 414, (path[:8], status)
    _, headers, _ = await http(port, "GET", "/" + "a" * 5000)
    assert headers["content-security-policy"] == CSP  # answered here, as every answer
    assert (await http(port, "GET", "/" + "a" * 300))[0] == 404  # a name over 255 bytes
    assert (await http(port, "GET", "/p/Ann"))[0] == 200  # (the page itself is served)
    assert (await http(port, "GET", "/", X_Long="a" * 9000))[0] == 431
    many = {f"X_Header_{i}": "1" for i in range(200)}
    assert (await http(port, "GET", "/", **many))[0] == 431
    await asyncio.to_thread(server_process.stop)
    log = server_process.log_path.read_text()
    assert "Traceback" not in log and " ERROR " not in log, log[-4000:]


async def test_metrics_answer_loopback_peers() -> None:
    async with running_server() as server, beside_a_race(server):
        status, _, body = await http(server.port, "GET", "/metrics")
        assert status == 200 and b"klondike" in body
    routes = HttpRoutes(dict, lambda: b"m 1\n", None)

    class Peer:
        remote_address = ("203.0.113.7", 40000)  # a documentation address: not loopback

    request = Request("/metrics", Headers())
    answer: Any = routes(Peer(), request)
    assert answer.status_code == 403


async def test_metrics_on_a_listener_of_their_own() -> None:
    async with running_server(metrics_address=("127.0.0.1", 0)) as server, beside_a_race(server):
        assert server.metrics_address is not None
        status, _, body = await http(server.metrics_address[1], "GET", "/metrics")
        assert status == 200 and b"klondike" in body
        assert (await http(server.port, "GET", "/metrics"))[0] == 404
        assert (await http(server.metrics_address[1], "GET", "/"))[0] == 404


def _qr_svg(text: str, code: str) -> bytes:
    out = io.BytesIO()
    segno.make(text, error="m").save(
        out, kind="svg", scale=6, border=2, dark="#000", light="#fff", xmldecl=False,
        title=f"Invite to room {code}",
    )  # fmt: skip
    return out.getvalue()


async def test_the_invite_as_a_qr_code_keeps_the_policy_strict() -> None:
    """A room's invite link as a QR code the server draws: an SVG with no script
    and no style, under the same policy as every answer, naming the link the
    page's Copy gives (/#join=CODE) on the host the request came to."""
    async with running_server() as server, beside_a_race(server):
        status, headers, body = await http(server.port, "GET", "/invite/K7QX2M.svg")
        assert status == 200
        assert headers["content-type"] == "image/svg+xml"
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert body.startswith(b"<svg") and b"<script" not in body and b"style" not in body
        assert body == _qr_svg(f"http://127.0.0.1:{server.port}/#join=K7QX2M", "K7QX2M")
        # Behind the proxy of deploy/ (TLS there), the link is https.
        proxied = await http(server.port, "GET", "/invite/K7QX2M.svg", X_Forwarded_Proto="https")
        assert proxied[2] == _qr_svg(f"https://127.0.0.1:{server.port}/#join=K7QX2M", "K7QX2M")
        for path in ("/invite/k7qx2m.svg", "/invite/K7QX2.svg", "/invite/K7QX2M.png"):
            assert (await http(server.port, "GET", path))[0] == 404, path
    routes = HttpRoutes(dict, lambda: b"", None)
    bad = Request("/invite/K7QX2M.svg", Headers({"Host": "evil.example/<x>"}))
    answer: Any = routes(None, bad)
    assert answer.status_code == 400
