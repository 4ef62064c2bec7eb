"""Plain HTTP on the WebSocket port: /healthz, /metrics and the browser client.

websockets hands every request to ``process_request`` before its handshake; a
request for ``/ws`` goes on to become a WebSocket, anything else is answered here
and the connection closes. Static files come from client/web/ (when it exists),
``/`` being its index.html; paths are resolved and must stay inside that folder.
"""

from __future__ import annotations

import email.utils
import http
import json
import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from prometheus_client import CONTENT_TYPE_LATEST
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

__all__ = ["DEFAULT_STATIC", "WS_PATH", "HttpRoutes"]

WS_PATH = "/ws"
DEFAULT_STATIC = Path(__file__).resolve().parents[2] / "client" / "web"
_MAX_FILE = 16 * 1024 * 1024

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
    ".wasm": "application/wasm",
    ".txt": "text/plain; charset=utf-8",
}


def response(status: int, body: bytes, content_type: str, **headers: str) -> Response:
    code = http.HTTPStatus(status)
    hdrs = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    for name, value in headers.items():
        hdrs[name.replace("_", "-")] = value
    return Response(code.value, code.phrase, hdrs, body)


def _text(status: int, text: str) -> Response:
    return response(status, text.encode(), "text/plain; charset=utf-8")


class HttpRoutes:
    """Answers the plain HTTP requests; ``health`` and ``metrics`` are callbacks
    into the server so this module knows nothing of rooms."""

    def __init__(
        self,
        health: Callable[[], dict[str, Any]],
        metrics: Callable[[], bytes],
        static_dir: Path | None = DEFAULT_STATIC,
    ) -> None:
        self._health = health
        self._metrics = metrics
        self._static = static_dir.resolve() if static_dir is not None else None

    def __call__(self, _connection: Any, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path == WS_PATH:
            return None  # the WebSocket handshake goes on
        if path == "/healthz":
            body = json.dumps(self._health()).encode()
            return response(200, body, "application/json", Cache_Control="no-store")
        if path == "/metrics":
            return response(200, self._metrics(), CONTENT_TYPE_LATEST)
        return self._file(path)

    def _file(self, path: str) -> Response:
        root = self._static
        if root is None or not root.is_dir():
            return _text(404, "no browser client is installed on this server\n")
        rel = unquote(path).lstrip("/")
        if "\x00" in rel or "\\" in rel:
            return _text(404, "not found\n")
        try:
            target = (root / rel).resolve()
        except (OSError, RuntimeError):
            return _text(404, "not found\n")
        if not target.is_relative_to(root):
            return _text(404, "not found\n")
        if target.is_dir():
            target = target / "index.html"
        try:
            if not target.is_file() or target.stat().st_size > _MAX_FILE:
                return _text(404, "not found\n")
            body = target.read_bytes()
        except OSError:
            return _text(404, "not found\n")
        ctype = _TYPES.get(target.suffix.lower()) or (
            mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        )
        return response(200, body, ctype, Cache_Control="no-cache")
