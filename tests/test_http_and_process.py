"""Plain HTTP on the game port, and the server as a process (CLI, signals)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from tests.support.inprocess import running_server
from tests.support.raw_client import Client, player

ROOT = Path(__file__).resolve().parent.parent


async def http_get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, headers, body


async def test_health_metrics_and_static(tmp_path: Path) -> None:
    web = tmp_path / "web"
    (web / "js").mkdir(parents=True)
    (web / "index.html").write_text("<!doctype html><title>race</title>")
    (web / "js" / "app.js").write_text("export const x = 1;")
    (web / "style.css").write_text("body{}")
    (tmp_path / "secret.txt").write_text("do not serve")
    async with running_server(static_dir=web) as server:
        status, headers, body = await http_get(server.port, "/healthz")
        assert status == 200 and headers["content-type"] == "application/json"
        assert b'"status": "ok"' in body

        a = await player(server, "Ann")
        code = (await a.ok("create_room"))["room"]["code"]
        b = await player(server, "Bob")
        await b.ok("join_room", code=code, role="spectator")
        await a.ok("start")
        await a.event("deal_started")
        await a.ok("move", deal=1, move={"kind": "draw"})
        bad = await a.request("move", deal=1, move={"kind": "recycle"})
        assert bad["code"] == "stock_not_empty"
        status, headers, body = await http_get(server.port, "/metrics")
        text = body.decode()
        assert status == 200 and headers["content-type"].startswith("text/plain")
        assert "klondike_rooms 1.0" in text
        assert 'klondike_connections{role="player"} 1.0' in text
        assert 'klondike_connections{role="spectator"} 1.0' in text
        assert "klondike_moves_accepted_total 1.0" in text
        assert 'klondike_moves_rejected_total{reason="stock_not_empty"} 1.0' in text
        assert "klondike_move_latency_seconds_count 2.0" in text

        for path, ctype, content in (
            ("/", "text/html; charset=utf-8", b"<!doctype html><title>race</title>"),
            ("/index.html?x=1", "text/html; charset=utf-8", None),
            ("/js/app.js", "text/javascript; charset=utf-8", b"export const x = 1;"),
            ("/style.css", "text/css; charset=utf-8", b"body{}"),
        ):
            status, headers, body = await http_get(server.port, path)
            assert status == 200 and headers["content-type"] == ctype, path
            assert content is None or body == content
        for path in (
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/js/../../secret.txt",
            "/..%2fsecret.txt",
            "/%00",
            "/missing.js",
            "/js/%5c..%5c..%5csecret.txt",
        ):
            status, _, body = await http_get(server.port, path)
            assert status == 404, path
            assert b"do not serve" not in body
        await a.close()
        await b.close()


async def test_no_static_folder() -> None:
    async with running_server(static_dir=None) as server:
        status, _, _ = await http_get(server.port, "/")
        assert status == 404
        status, _, _ = await http_get(server.port, "/healthz")
        assert status == 200


async def test_process_port_zero_and_sigterm() -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("KLONDIKE_REDIS_URL", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--port",
        "0",
        "--memory",
        cwd=ROOT,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    port = 0
    while not port:
        line = (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
        assert line, "the server exited before listening"
        found = re.search(
            r"klondike-race listening on ws://127\.0\.0\.1:(\d+)/ws and "
            r"http://127\.0\.0\.1:(\d+)/",
            line,
        )
        if found:
            assert found.group(1) == found.group(2)
            port = int(found.group(1))
    client: Any = await Client.open(f"ws://127.0.0.1:{port}/ws")
    await client.hello("Ann")
    await client.ok("create_room")
    proc.send_signal(signal.SIGTERM)
    assert await client.closed() == 1001
    assert await asyncio.wait_for(proc.wait(), 20) == 0


def test_cli_has_serve() -> None:
    import argparse

    from server.cli import add_serve

    parser = argparse.ArgumentParser()
    add_serve(parser.add_subparsers())
    args = parser.parse_args(["serve", "--port", "0", "--host", "0.0.0.0"])
    assert (args.port, args.host) == (0, "0.0.0.0")
