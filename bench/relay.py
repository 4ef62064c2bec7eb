"""The baseline for bench/server.py: a bare WebSocket relay with no game logic.

Each connection names its room in the query string (``/ws?room=N``); every frame
it sends goes to every connection of that room, itself included (its own copy is
its acknowledgement). It uses the same websockets settings as the race server
(no compression, 64 KiB frames), and ``broadcast``, the cheapest fan-out
websockets offers, so the comparison flatters the baseline, not the server. It
keeps its collector as the server does (server/collector.py: what is alive frozen
ten times a second): left to itself, at 5,000 players its collector's passes made
its p99 hundreds of ms, a stall the race server no longer has.

Usage: python -m bench.relay [--host H] [--port 0]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from collections import defaultdict
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, broadcast, serve

from server.collector import collect_garbage

log = logging.getLogger("bench.relay")


async def main(host: str, port: int) -> None:
    rooms: dict[str, set[ServerConnection]] = defaultdict(set)

    async def handler(ws: ServerConnection) -> None:
        assert ws.request is not None
        room = parse_qs(urlsplit(ws.request.path).query).get("room", ["0"])[0]
        members = rooms[room]
        members.add(ws)
        try:
            async for frame in ws:
                broadcast(members, frame)
        finally:
            members.discard(ws)

    async with serve(
        handler, host, port, compression=None, max_size=64 * 1024, max_queue=64
    ) as server:
        real = next(iter(server.sockets)).getsockname()[1]
        log.info("relay listening on ws://%s:%d/ws", host, real)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        collector = loop.create_task(collect_garbage())
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        collector.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    asyncio.run(main(args.host, args.port))
