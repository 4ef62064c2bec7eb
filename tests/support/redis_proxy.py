"""A TCP forwarder in front of a test's redis-server, to provoke network faults.

The nodes under test connect to the proxy instead of Redis. Switches:

- ``swallow``: bytes from Redis to the node are dropped (Redis runs what it is sent,
  the node never hears); :attr:`swallowed` is set once some were. Followed by
  :meth:`cut`, it is the lost reply of a connection that died after Redis wrote.
- ``delay``: seconds each chunk from the node waits before it goes on to Redis.
- :meth:`cut`: reset every connection (both sides) at once.
- :meth:`refuse` / :meth:`accept`: stop listening (new connections are refused, as
  for a Redis that is down) and listen again on the same port.

It runs in the test's event loop, so a test must not block that loop while the
proxy should forward.
"""

from __future__ import annotations

import asyncio
import contextlib


class RedisProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.swallow = False
        self.delay = 0.0
        self.swallowed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def accept(self) -> None:
        """Listen (again, on the same port once it has one)."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def refuse(self) -> None:
        """Stop listening and cut every connection: Redis looks down."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self.cut()

    def cut(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def close(self) -> None:
        await self.refuse()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(self._pump(reader, up_writer, upstream=True)),
            loop.create_task(self._pump(up_reader, writer, upstream=False)),
        ]
        self._tasks.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in (writer, up_writer):
                w.transport.abort()
                self._writers.discard(w)
            for task in tasks:
                task.cancel()
                self._tasks.discard(task)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, upstream: bool
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                if upstream:
                    if self.delay:
                        await asyncio.sleep(self.delay)
                elif self.swallow:
                    self.swallowed.set()
                    continue
                writer.write(data)
                await writer.drain()
