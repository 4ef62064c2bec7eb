"""A live server for the client tests: ``python -m server`` on a free port.

A subprocess rather than an in-process server so the client is tested exactly as
users run it, and so each test's event loop is its own. Import ``live_url`` into a
test module to use it.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from client import Session
from client.room import RoomState

ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"listening on (ws://\S+/ws)")


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--host", "127.0.0.1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    url: list[str] = []
    found = threading.Event()

    def pump() -> None:  # read the log for the URL, then keep draining the pipe
        assert proc.stdout is not None
        for line in proc.stdout:
            if not url and (match := LISTENING.search(line)):
                url.append(match.group(1))
                found.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 20
    while not found.wait(0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the server did not start (python -m server)")
    try:
        yield url[0]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def until(
    session: Session, check: Callable[[RoomState], bool], timeout: float = 15.0
) -> RoomState:
    """Wait until the session's room satisfies ``check``; fail the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        room = session.room
        if room is not None and check(room):
            return room
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"timed out waiting; room is {room}")
        await session.wait_update(timeout=left)


async def drain(events: object, quiet: float = 0.2) -> list[object]:
    """Everything an event stream holds now (stops after ``quiet`` s of silence)."""
    out = []
    try:
        while True:
            out.append(await asyncio.wait_for(events.__anext__(), quiet))  # type: ignore[attr-defined]
    except TimeoutError:
        return out
