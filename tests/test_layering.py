"""The layers, enforced by reading every module's imports (TYPE_CHECKING ones too).

The engine (protocol/) and the room core (server/core/) are pure: they read no
clock, draw nothing at random, touch no socket or file, and know nothing of the
asyncio shell. Each server layer imports only the layers below it (the order in
server/__init__.py), no module takes part in an import circle (bench/'s included),
and client/ runs without server/ (the ``klondike-race`` entry point, server/cli.py,
sees both).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("protocol", "server", "client", "bench")
IMPURE = ("asyncio", "time", "socket", "os", "random", "secrets", "threading")

# server/'s layers, lowest first: a module may import its own layer and those
# before it, never one after it.
SERVER_LAYERS = [
    ("server.core",),
    ("server.ratings.model",),  # pure: the rating of a round, below the store that keeps it
    ("server.matchmaking.match",),  # pure: who races whom, from a queue
    ("server.peer", "server.ids"),
    ("server.store",),
    ("server.net",),
    ("server.rooms",),
    ("server.accounts",),
    ("server.ratings",),
    ("server.daily", "server.challenges"),  # a challenge is a daily run's kind of room
    ("server.matchmaking",),  # quick match's queues: rooms made as a handler makes them
    # server/service/'s pieces (server/service/__init__.py), in their own order
    (
        "server.service.tasks",
        "server.service.hooks",
        "server.service.presence",
        "server.service.sessions",
        "server.service.seeding",
    ),
    # Dispatch, and the handlers of accounts and daily deals it routes to: they
    # use the service's pieces (sessions, presence, adoption) and both domains
    # (an export holds one's daily runs; a profile, one's streaks).
    (
        "server.service.adoption",
        "server.service.dispatch",
        "server.accounts.handlers",
        "server.accounts.history_handlers",
        "server.accounts.friend_handlers",
        "server.daily.handlers",
        "server.daily.run_handlers",
        "server.challenges.handlers",
        "server.challenges.takes",
        "server.challenges.requests",
    ),
    ("server.service",),
    ("server.cluster",),
    ("server.app", "server.cli", "server.__main__", "server"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """Every module ``name`` imports, anywhere in its file (function bodies and
    ``if TYPE_CHECKING:`` blocks included), relative imports resolved;
    ``from pkg import mod`` counts as importing ``pkg.mod`` when that is a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                assert node.module is not None
                target = node.module
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            yield from subs or [target]


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: set(imports(name, path, known)) for name, path in mods.items()}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_pure_layers_import_nothing_impure() -> None:
    found = [
        f"{mod} imports {imp}"
        for mod, imps in graph().items()
        if within(mod, "protocol") or within(mod, "server.core")
        for imp in imps
        if any(within(imp, bad) for bad in IMPURE)
    ]
    assert found == []


def test_protocol_and_the_core_know_nothing_of_the_shell() -> None:
    found = []
    for mod, imps in graph().items():
        for imp in imps:
            if within(mod, "protocol") and (within(imp, "server") or within(imp, "client")):
                found.append(f"{mod} imports {imp}")
            if (
                within(mod, "server.core")
                and within(imp, "server")
                and not within(imp, "server.core")
            ):
                found.append(f"{mod} imports {imp}")
    assert found == []


def test_client_imports_nothing_from_server() -> None:
    found = [
        f"{mod} imports {imp}"
        for mod, imps in graph().items()
        if within(mod, "client")
        for imp in imps
        if within(imp, "server")
    ]
    assert found == []


def layer_of(mod: str) -> int:
    best = -1, -1  # (length of the matching prefix, layer)
    for rank, prefixes in enumerate(SERVER_LAYERS):
        for prefix in prefixes:
            if within(mod, prefix) and len(prefix) > best[0]:
                best = len(prefix), rank
    assert best[1] >= 0, f"{mod} is in no layer of SERVER_LAYERS"
    return best[1]


def test_each_server_layer_imports_only_those_below_it() -> None:
    found = [
        f"{mod} (layer {layer_of(mod)}) imports {imp} (layer {layer_of(imp)})"
        for mod, imps in graph().items()
        if within(mod, "server")
        for imp in imps
        if within(imp, "server") and layer_of(imp) > layer_of(mod)
    ]
    assert found == []


def with_packages(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """``edges`` with what Python runs first: importing ``pkg.mod`` from outside
    ``pkg`` runs ``pkg/__init__.py``, and whatever that imports, before ``mod``."""
    out = {m: set(imps) for m, imps in edges.items()}
    for mod, imps in edges.items():
        for imp in imps:
            parts = imp.split(".")
            for n in range(1, len(parts)):
                package = ".".join(parts[:n])
                if package in edges and not within(mod, package):
                    out[mod].add(package)
    return out


def test_no_import_circles() -> None:
    edges = with_packages(graph())
    ours = {m: {i for i in imps if i in edges and i != m} for m, imps in edges.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(mod: str, path: list[str]) -> None:
        state[mod] = 1
        for nxt in sorted(ours[mod]):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[mod] = 2

    for mod in sorted(ours):
        if mod not in state:
            visit(mod, [mod])
    assert circles == []


def test_the_import_reader_sees_what_it_must() -> None:
    """The checks above are only as good as the reader: it resolves relative
    imports, sees TYPE_CHECKING imports and function-level ones."""
    edges = graph()
    assert "server.core.values" in edges["server.core.room"]
    assert "protocol.messages" in edges["server.core.room"]  # from protocol import messages
    assert "client.commands" in edges["server.cli"]  # imported inside a function
    assert "server.store.redis" in edges["server.cli"]
    # a package's __init__ runs first when one of its modules is imported from outside it
    assert "server.service" in with_packages(edges)["server.daily.run_handlers"]
