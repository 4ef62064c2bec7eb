"""docker-compose.yml, deploy/nginx.conf and the Dockerfile agree with each other and
with the real ``klondike-race serve`` command line.

There is no Docker engine on the test machines, so these checks are what keeps the
deployment files from rotting: every command is parsed by the CLI's own parser, and
every port and address is followed from the load balancer to the nodes to Redis.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from client.commands import add_commands
from server.cli import add_serve
from server.store.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parent.parent
NODES = ("node1", "node2")


def cli() -> argparse.ArgumentParser:
    """The parser ``klondike-race`` builds (server/cli.py), with both sides' commands."""
    parser = argparse.ArgumentParser(prog="klondike-race", exit_on_error=False)
    sub = parser.add_subparsers(dest="command", required=True)
    add_serve(sub)
    add_commands(sub)
    return parser


def serve_args(command: list[str]) -> argparse.Namespace:
    assert command[0] == "klondike-race", command
    assert command[1] == "serve", command
    return cli().parse_args(command[1:])


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


@pytest.fixture(scope="module")
def nginx() -> str:
    # Comments out, so that only directives are matched.
    return re.sub(r"#[^\n]*", "", (ROOT / "deploy" / "nginx.conf").read_text())


def block(text: str, header: str) -> str:
    """The body of the first ``header { ... }`` block (braces balanced)."""
    start = text.index("{", text.index(header)) + 1
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    raise AssertionError(f"unbalanced block {header!r}")


def test_serve_command_exists() -> None:
    exe = Path(sys.executable).parent / "klondike-race"
    out = subprocess.run(
        [str(exe), "serve", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    for flag in ("--host", "--port", "--redis"):
        assert flag in out


def test_services(compose: dict[str, Any]) -> None:
    assert {"redis", *NODES, "lb"} <= set(compose["services"])


def test_nodes_run_serve_on_one_port_with_the_compose_redis(compose: dict[str, Any]) -> None:
    services = compose["services"]
    redis_cmd = services["redis"]["command"]
    redis_port = int(redis_cmd[redis_cmd.index("--port") + 1]) if "--port" in redis_cmd else 6379
    ports = set()
    for name in NODES:
        node = services[name]
        args = serve_args(node["command"])
        assert args.host == "0.0.0.0"
        ports.add(int(args.port))
        assert [str(args.port)] == [str(p) for p in node["expose"]]
        url = urlsplit(args.redis)
        assert url.scheme == "redis" and url.hostname == "redis" and url.port == redis_port
        assert url.path in ("", "/") or url.path.strip("/").isdigit()
        env = node.get("environment", {})
        assert env.get("KLONDIKE_REDIS_URL", args.redis) == args.redis
        assert node["depends_on"]["redis"]["condition"] == "service_healthy"
        assert node.get("restart") in ("unless-stopped", "always")
    assert len(ports) == 1, f"nodes listen on different ports: {ports}"


def test_redis_is_durable(compose: dict[str, Any]) -> None:
    """A move is acknowledged once Redis answers, so Redis must fsync before it does."""
    cmd = compose["services"]["redis"]["command"]
    assert cmd[cmd.index("--appendonly") + 1] == "yes"
    assert cmd[cmd.index("--appendfsync") + 1] == "always"
    assert any(v.endswith(":/data") for v in compose["services"]["redis"]["volumes"])
    assert "healthcheck" in compose["services"]["redis"]


def test_load_balancer_reaches_every_node(compose: dict[str, Any], nginx: str) -> None:
    lb = compose["services"]["lb"]
    (mount,) = [v for v in lb["volumes"] if "nginx.conf" in v]
    source, target = mount.split(":")[:2]
    assert (ROOT / source).resolve() == ROOT / "deploy" / "nginx.conf"
    assert target == "/etc/nginx/nginx.conf"

    node_port = int(serve_args(compose["services"]["node1"]["command"]).port)
    upstreams = dict(re.findall(r"upstream\s+(\w+)\s*\{([^}]*)\}", nginx))
    (name,) = upstreams
    servers = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", upstreams[name], re.M)
    assert sorted(servers) == sorted((n, str(node_port)) for n in NODES)

    (listen,) = re.findall(r"^\s*listen\s+(\d+)\s*;", nginx, re.M)
    published = {str(p).split(":")[-1]: str(p).split(":")[0] for p in lb["ports"]}
    assert listen in published, f"nginx listens on {listen}, compose maps {lb['ports']}"
    assert set(lb["depends_on"]) == set(NODES)


def test_load_balancer_passes_websocket_upgrades(nginx: str) -> None:
    ws = block(nginx, "location /ws")
    assert re.search(r"proxy_pass\s+http://(\w+)\s*;", ws)
    assert re.search(r"proxy_http_version\s+1\.1\s*;", ws)
    assert re.search(r"proxy_set_header\s+Upgrade\s+\$http_upgrade\s*;", ws)
    connection = re.search(r"proxy_set_header\s+Connection\s+(\S+)\s*;", ws)
    assert connection is not None
    value = connection.group(1)
    if value.startswith("$"):  # a map from $http_upgrade, as nginx documents it
        mapping = block(nginx, f"map $http_upgrade {value}")
        assert re.search(r"default\s+upgrade\s*;", mapping)
    else:
        assert value.strip("\"'").lower() == "upgrade"
    timeout = re.search(r"proxy_read_timeout\s+(\d+)([smh]?)\s*;", ws)
    assert timeout is not None
    seconds = int(timeout.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[timeout.group(2)]
    assert seconds > 20, "must outlast the server's 20 s WebSocket ping interval"


def test_dockerfile_matches_the_nodes(compose: dict[str, Any]) -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    cmd = json.loads(re.search(r"^CMD\s+(\[.*\])\s*$", text, re.M).group(1))  # type: ignore[union-attr]
    args = serve_args(cmd)
    node = serve_args(compose["services"]["node1"]["command"])
    assert (args.host, args.port, args.redis) == (node.host, node.port, node.redis)
    (exposed,) = re.findall(r"^EXPOSE\s+(\d+)", text, re.M)
    assert int(exposed) == int(args.port)
    assert f"127.0.0.1:{args.port}/healthz" in text
    assert compose["services"]["node1"]["build"] == "."


def test_dockerfile_keeps_the_embedded_store_in_a_volume(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` without ``--redis`` uses the embedded store in ``KLONDIKE_DATA_DIR``
    (server/store/sqlite.py): the image points it at a declared volume the
    server's user may write, and its comment says so."""
    text = (ROOT / "Dockerfile").read_text()
    (data,) = re.findall(r"\bKLONDIKE_DATA_DIR=(\S+)", text)
    assert re.search(rf"^VOLUME\s+{re.escape(data)}\s*$", text, re.M)
    user = re.search(r"^USER\s+(\S+)", text, re.M).group(1)  # type: ignore[union-attr]
    assert f"chown {user} {data}" in text
    assert re.search(r"^USER", text, re.M).start() > text.index("VOLUME")  # type: ignore[union-attr]
    assert "in memory" not in text
    monkeypatch.setenv("KLONDIKE_DATA_DIR", data)
    assert SqliteStore.default_dir() == Path(data)  # where serve without --redis keeps it


def test_build_context_holds_the_package() -> None:
    """``pip install /src`` in the Dockerfile needs these; .dockerignore must keep them."""
    ignored = [
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    needed = ["pyproject.toml", "README.md", "protocol", "server", "client", "client/web"]
    for path in needed:
        assert (ROOT / path).exists(), path
        assert not any(
            Path(path).match(pattern) or path.startswith(pattern + "/") for pattern in ignored
        ), f"{path} is excluded from the build context"
