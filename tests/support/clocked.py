"""``python -m tests.support.clocked START_MS SERVE_ARGS…``: ``python -m server``
as a real process (its store, its sockets, kill -9 and all) on a clock the test
moves, so that a countdown runs out when the test says, not after a wait.

The clock starts at ``START_MS`` and moves only when a line ``advance MS``
arrives on stdin (:class:`ClockedServer` writes them). A process started again
after a kill is given the time the last one had reached.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.embedded import EmbeddedServer
from tests.support.inprocess import FakeClock


class _SharedClock(FakeClock):
    """A :class:`FakeClock` moved from stdin's thread, on the server's loop."""

    def __init__(self, start: int) -> None:
        super().__init__(start)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.started = threading.Event()

    def now(self) -> int:
        if self.loop is None:
            try:
                self.loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                self.started.set()
        return super().now()


def _read_stdin(clock: _SharedClock) -> None:
    for line in sys.stdin:
        word, _, ms = line.partition(" ")
        if word == "advance":
            clock.started.wait()
            assert clock.loop is not None
            clock.loop.call_soon_threadsafe(clock.advance, int(ms))


def main(argv: list[str]) -> int:
    import argparse

    from server.cli import configure, serve_command

    clock = _SharedClock(int(argv[0]))
    parser = argparse.ArgumentParser(prog="python -m tests.support.clocked")
    configure(parser)
    args = parser.parse_args(argv[1:])
    threading.Thread(target=_read_stdin, args=(clock,), daemon=True).start()
    return serve_command(args, clock=clock)


class ClockedServer(EmbeddedServer):
    """An :class:`EmbeddedServer` (the embedded store in ``data_dir``) on a clock
    the test moves with :meth:`advance`; it keeps its time across a kill."""

    stdin = asyncio.subprocess.PIPE

    def __init__(self, data_dir: Path, start: int = 1_764_430_000_000) -> None:
        super().__init__(data_dir)
        self.now = start

    def command(self) -> list[str]:
        return [sys.executable, "-m", "tests.support.clocked", str(self.now)]

    async def advance(self, ms: int) -> None:
        proc: Any = self.proc
        assert proc is not None and proc.stdin is not None
        self.now += ms
        proc.stdin.write(f"advance {ms}\n".encode())
        await proc.stdin.drain()

    async def exited(self) -> int:
        code = await super().exited()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()
        return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
