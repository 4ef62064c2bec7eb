"""The fixtures every test module shares; the helpers behind them are in tests/support/.

- ``live_server`` / ``live_url``: one real server process (``klondike-race serve``,
  in memory) for a whole test module, as users run it: the client, load, bot and
  browser tests play against it. It is :class:`~tests.support.processes.ServerProcess`,
  the one launcher of server processes.
- ``server_process``: a server process of the test's own, not started yet, that it
  may kill and start again on the same port (a restart forgets everything); always
  killed at the end.
- ``redis``: a private ``redis-server`` on a free port in the test's own
  directory, that the test may kill -9, freeze (SIGSTOP), thaw and restart on the
  same port and data; always stopped at the end.
- ``browser`` / ``server``: one headless Chromium and the http:// base address of
  ``live_server``, for a whole browser-test module (tests/test_web*.py; the people
  driving pages are tests/support/web.py).

The in-process server (``running_server``) is a context manager rather than a
fixture, because nearly every test starts it with its own clock, store or limits:
see tests/support/inprocess.py. The one way to wait for a condition that no event
announces is ``eventually`` (tests/support/waiting.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from server.store.redis import RedisStore
from tests.support.embedded import EmbeddedServer
from tests.support.processes import RedisServer, ServerProcess, running_redis
from tests.support.web import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, LAPTOP, Client


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(None, tmp_path_factory.mktemp("live") / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live_url(live_server: ServerProcess) -> str:
    return live_server.url


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(None, tmp_path / "server.log")
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with running_redis(tmp_path / "redis") as server:
        yield server


@pytest.fixture
async def redis_store(redis: RedisServer) -> AsyncIterator[RedisStore]:
    """A Redis store on the test's own redis-server (1 s per operation)."""
    store = await RedisStore.from_url(redis.url, timeout=1.0)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedServer]:
    """``serve`` on the embedded store in a data directory of the test's own, as a
    process the test may kill -9 and start again; its log must show no bug."""
    server = EmbeddedServer(tmp_path / "data")
    await server.start()
    try:
        yield server
    finally:
        await server.kill()
    text = server.log()  # a bug shows in the log even when the clients cope
    assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


@pytest.fixture(scope="module")
def server(live_server: ServerProcess) -> str:
    """The module's real server: its http:// base address, for browser pages."""
    return live_server.http


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), (
        f"{CHROMIUM} is missing: the web tests need Debian's chromium "
        "(apt-get install chromium, or scripts/setup.sh --dev)"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def people(browser: Browser, server: str) -> Iterator[Callable[..., Client]]:
    """``people(label, size=LAPTOP)``: a person with a browser page of their own
    (a context each, so pages share no storage) on the module's server; all
    closed after the test."""
    made: list[Client] = []

    def person(label: str, size: tuple[int, int] = LAPTOP) -> Client:
        made.append(Client(browser, server, label, *size))
        return made[-1]

    yield person
    for p in made:
        p.close()


# The files that take longest (minutes of a proof, a benchmark or a browser on a
# busy machine), started first: pytest-xdist hands out whole files in collection
# order (scripts/test.sh), so a long one handed out last would run on alone
# after the others are done.
LONGEST_FIRST = (
    "test_bench.py",
    "test_web.py",
    "test_daily.py",
    "test_web_motion.py",
    "test_web_boards.py",
    "test_redis_winnable.py",
    "test_sqlite_recovery.py",
    "test_engine_properties.py",
    "test_cluster.py",
    "test_web_truth.py",
    "test_web_daily.py",
    "test_flooders.py",
    "test_web_layout.py",
    "test_daily_ghosts.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
