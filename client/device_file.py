"""A device's token kept in a file the user names, so a command signs in again
without anyone typing a code.

The first time, a link code from a signed-in device (its account page, or
``link_code``) signs this device in; the server's ``welcome`` carries the new
device token, which is written to the file, readable by its owner only (0600), by
a rename so that a crash leaves the old file or the new one, never half of one.
From then on the file alone signs in. Signing the device out (on any device)
makes the file worthless: the server answers ``unknown_token``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .session import Session, connect

__all__ = ["DeviceFile", "sign_in"]


class DeviceFile:
    """One device token in one file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def read(self) -> str | None:
        """The token, or None when there is no file yet."""
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return text or None

    def write(self, token: str) -> None:
        """Keep ``token``: created 0600 before a byte is written, then renamed over
        the old file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}.new")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(token + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(fresh, self.path)
        except BaseException:
            fresh.unlink(missing_ok=True)
            raise


async def sign_in(
    url: str,
    device_file: DeviceFile,
    *,
    link: str | None = None,
    recovery: str | None = None,
    label: str = "cli",
    **options: Any,
) -> Session:
    """A signed-in session: by a ``link`` (or ``recovery``) code as a new device
    whose token is then kept in ``device_file``, or else by the token the file
    keeps. ``ValueError`` when there is neither a code nor a file."""
    if link is not None or recovery is not None:
        session = await connect(url, link=link, recovery=recovery, label=label, **options)
        assert session.device_token is not None  # a code always makes a device
        device_file.write(session.device_token)
        return session
    token = device_file.read()
    if token is None:
        raise ValueError(f"{device_file.path} holds no device token: sign in with a link code")
    return await connect(url, device=token, **options)
