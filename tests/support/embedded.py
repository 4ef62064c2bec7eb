"""``python -m server --data-dir DIR`` as a real process that a test may kill -9 and
start again on the same port and directory, and a reader of what its database holds
(the test's own ``sqlite3`` and ``msgpack``, not the store's code).

The process is awaited on events only: the log line that says it listens, its exit.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from server.store.sqlite import DB_NAME
from tests.support.processes import UNCAPPED

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on ws://[^:]+:(\d+)/ws")


class EmbeddedServer:
    """One server process on the embedded store in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = 0  # 0 until the first start has said which port it took
        self.proc: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []  # everything every run logged
        self._drain: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    stdin: int | None = None  # inherited (tests/support/clocked.py talks to its own)

    def command(self) -> list[str]:
        """The process, before its options (tests/support/clocked.py runs another)."""
        return [sys.executable, "-m", "server"]

    async def start(self) -> None:
        """Start (again, on the port the first run took) and return once it listens."""
        assert self.proc is None or self.proc.returncode is not None, "already running"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("KLONDIKE_REDIS_URL", None)
        env.pop("KLONDIKE_DATA_DIR", None)
        self.proc = proc = await asyncio.create_subprocess_exec(
            *self.command(), "--port", str(self.port),
            "--data-dir", str(self.data_dir), "--rate-limit", "100000", *UNCAPPED,
            cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE, stdin=self.stdin,
        )  # fmt: skip
        assert proc.stderr is not None
        while True:
            raw = await asyncio.wait_for(proc.stderr.readline(), 30)
            if not raw:
                raise RuntimeError("the server exited before listening:\n" + self.log())
            line = raw.decode()
            self.lines.append(line)
            found = LISTENING.search(line)
            if found:
                self.port = int(found.group(1))
                break
        self._drain = asyncio.get_running_loop().create_task(self._read(proc.stderr))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while raw := await stream.readline():
            self.lines.append(raw.decode())

    def kill_now(self) -> None:
        """SIGKILL, synchronously (from a frame callback): no shutdown at all."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()

    async def kill(self) -> None:
        """kill -9 and wait for the exit: only what SQLite committed survives."""
        self.kill_now()
        await self.exited()

    async def exited(self) -> int:
        assert self.proc is not None
        code = await asyncio.wait_for(self.proc.wait(), 30)
        if self._drain is not None:
            await self._drain
        return code

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.exited()

    def log(self) -> str:
        return "".join(self.lines)


def moves_in_log(data_dir: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every move record in the database, per room and player, in log order."""
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        rows = conn.execute("SELECT code, data FROM chunks ORDER BY code, seq").fetchall()
    finally:
        conn.close()
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for code, chunk in rows:  # a chunk: a msgpack array of records, each msgpack
        for data in msgpack.unpackb(chunk, raw=False):
            record = msgpack.unpackb(data, raw=False, strict_map_key=False)
            if record["k"] == "move":
                out.setdefault(code, {}).setdefault(record["p"], []).append(record)
    return out
