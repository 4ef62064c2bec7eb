"""The tests' child processes: private ``redis-server`` processes, and the server
itself as users run it (``klondike-race serve``), each on a free port.

Tests never touch a Redis they did not start: each :class:`RedisServer` runs on a free
port in its own directory, with ``appendonly yes``/``appendfsync always`` so a
``kill -9`` followed by :meth:`RedisServer.start` on the same port and directory
keeps every acknowledged write. Every process is killed when its test ends.

:func:`command` is a blocking RESP client (a socket, no library), so what a test
checks about Redis does not go through the code under test.

:class:`ServerProcess` is the one launcher of a server process: the client, load,
cluster, recovery and browser tests all start theirs through it (the shared fixtures
in tests/conftest.py among them).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from bench.server import UNCAPPED
from tests.support import ROOT
from tests.support.waiting import TIMEOUT, eventually_blocking

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _ports() -> range:
    """The ports a test may take: below the kernel's ephemeral range, whose ports
    every outgoing connection draws from. A port the kernel handed out by
    ``bind(0)`` was in that range, so between a test's pick and its server's bind
    (or a kill -9 and the restart on the same port) an outgoing connection of any
    process on the machine could take it: on a busy machine, now and then, it did."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(10000, low) if low > 12000 else range(low, 65536)


_HELD: list[int] = []  # the lock files of the ports this process took, held until it exits


def free_port() -> int:
    """A port that nobody listens on and that no other test process on this machine
    will take while this one lives (pytest's workers, or a second run of the suite
    beside this one): each port taken is an exclusive lock on a file of its own,
    which the kernel releases when the process exits, however it exits."""
    ports = _ports()
    locks = Path(tempfile.gettempdir()) / "klondike-race-test-ports"
    locks.mkdir(exist_ok=True)
    while True:
        port = random.choice(ports)
        fd = os.open(locks / str(port), os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another test process holds it
            os.close(fd)
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # something outside the tests listens there
                os.close(fd)
                continue
        _HELD.append(fd)
        return port


def command(port: int, *args: str | bytes | int, timeout: float = 5.0) -> Any:
    """Send one command to 127.0.0.1:port and return the decoded reply (bytes,
    int, list or None); an error reply raises RuntimeError."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    payload = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        reader = sock.makefile("rb")
        return _read_reply(reader)


def _read_reply(reader: Any) -> Any:
    line: bytes = reader.readline()
    if not line:
        raise ConnectionError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data: bytes = reader.read(n + 2)[:-2]
        return data
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(reader) for _ in range(n)]
    raise ValueError(f"bad reply {line!r}")


class _Child:
    """A child process a test can kill -9, freeze and thaw."""

    proc: subprocess.Popen[bytes] | None = None

    def kill(self) -> None:
        """kill -9: no shutdown, nothing said to anyone; only what was fsynced survives."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def freeze(self) -> None:
        """SIGSTOP: its sockets stay open but it answers nothing (renews no lease)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


class RedisServer(_Child):
    """One redis-server process that a test may kill, freeze and restart."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart, on the same port and data) and wait until it answers."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.proc = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                str(self.dir),
                "--daemonize",
                "no",
                "--logfile",
                str(self.dir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc = self.proc

        def answers() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.dir / 'redis.log'}")
            try:
                return bool(command(self.port, "PING", timeout=0.5) == b"PONG")
            except (OSError, RuntimeError):  # not listening yet, or -LOADING
                return False

        eventually_blocking(answers, what=f"redis-server on port {self.port}")

    def __call__(self, *args: str | bytes | int) -> Any:
        return command(self.port, *args)

    def keys_without_ttl(self) -> list[bytes]:
        """Every key that would live forever (PTTL -1)."""
        return [k for k in self("KEYS", "*") if self("PTTL", k) == -1]


@contextmanager
def running_redis(directory: Path) -> Iterator[RedisServer]:
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.thaw()
        server.kill()


class ServerProcess(_Child):
    """``klondike-race serve --redis URL`` as a real process that a test may kill -9
    and start again on the same port. With ``redis_url`` None it keeps everything in
    memory, so a restart forgets every session and room."""

    def __init__(
        self,
        redis_url: str | None,
        log_path: Path,
        port: int | None = None,
        options: Sequence[str] = tuple(UNCAPPED),
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.options = options
        self.port = port or free_port()
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        # (certificate, key): served with --tls-cert/--tls-key, the certificate
        # trusted by ``ssl`` (self-signed, tests/support/certs.py)
        self.tls = tls
        self.ssl: ssl.SSLContext | None = None
        if tls is not None:
            self.ssl = ssl.create_default_context(cafile=str(tls[0]))

    @property
    def url(self) -> str:
        scheme = "wss" if self.tls else "ws"
        return f"{scheme}://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self, timeout: float = TIMEOUT) -> None:
        exe = Path(sys.executable).parent / "klondike-race"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("KLONDIKE_REDIS_URL", None)
        store = ["--memory"] if self.redis_url is None else ["--redis", self.redis_url]
        where = ["--host", "127.0.0.1", "--port", str(self.port)]
        if self.tls is not None:
            where += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(exe), "serve", *where, *store, *self.options],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        proc = self.proc

        def healthy() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(
                    f"{self.http}/healthz", timeout=0.5, context=self.ssl
                ) as reply:
                    return bool(reply.status == 200)
            except OSError:
                return False

        eventually_blocking(healthy, timeout, what=f"the server on port {self.port}")

    def stop(self) -> None:
        """SIGTERM: the graceful stop (clients get 1001)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextmanager
def running_servers(
    redis: RedisServer, directory: Path, count: int, options: Sequence[str] = tuple(UNCAPPED)
) -> Iterator[list[ServerProcess]]:
    """``count`` nodes on one Redis, served with ``options``; every one is
    stopped at the end."""
    nodes = [
        ServerProcess(redis.url, directory / f"node{i + 1}.log", options=options)
        for i in range(count)
    ]
    try:
        for node in nodes:
            node.start()
        yield nodes
    finally:
        for node in nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.thaw()
            node.kill()
    for node in nodes:  # a bug on a node shows in its log even when clients cope
        text = node.log_path.read_text()
        assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


async def bot_command(url: str, code: str, *options: str) -> asyncio.subprocess.Process:
    """``klondike-race bot`` into room ``code`` as users run it (``--pace 0
    --rounds 1`` and ``options``), its output piped for the test to read."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "bot", "--url", url, "--room", code,
        *options, "--pace", "0", "--rounds", "1",
        cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


async def watch_command(url: str, code: str, out: Path) -> asyncio.subprocess.Process:
    """``klondike-race watch`` of room ``code`` as users run it, its output sent to
    the file ``out`` (no terminal), its errors piped for the test to read."""
    with open(out, "wb") as sink:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.cli", "watch", "--url", url, "--room", code,
            cwd=ROOT,
            stdout=sink, stderr=subprocess.PIPE,
        )  # fmt: skip


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (its children, theirs, …), read from
    /proc: what a server started, to be found again once the server is gone."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def command_line(pid: int) -> str:
    """The process's command line, its arguments joined by spaces ('' once gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


async def all_exited(pids: set[int], timeout: float = 10.0) -> None:
    """Until every process in ``pids`` has exited, each awaited as an event: its
    pidfd turns readable when it exits (no polling, any process, not only our
    children). Fails the test with those still running after ``timeout``, and
    kills them (-9): they are processes the test started, through its server."""
    loop = asyncio.get_running_loop()
    waits: list[asyncio.Future[None]] = []
    fds: dict[int, int] = {}  # pid: its pidfd
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        fds[pid] = fd
        done: asyncio.Future[None] = loop.create_future()
        loop.add_reader(fd, lambda f=done: f.done() or f.set_result(None))
        waits.append(done)
    try:
        if waits:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
    except TimeoutError:
        alive = {pid: command_line(pid) for pid in fds if command_line(pid)}
        for pid in alive:  # through its pidfd: never another process given its pid since
            with suppress(ProcessLookupError):
                signal.pidfd_send_signal(fds[pid], signal.SIGKILL)
        raise AssertionError(f"still running: {alive}") from None
    finally:
        for fd in fds.values():
            loop.remove_reader(fd)
            os.close(fd)
