"""The Python client signs in to an account (docs/client.md, "Accounts"): by a link
code the first time, keeping the device token in a file only its owner reads, and
by that file from then on; against the real server process, through the real
``klondike-race account`` command as well as the library."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from client import ServerError, connect
from client.device_file import DeviceFile, sign_in
from protocol.messages import CloseCode
from tests.support import ROOT
from tests.support.processes import ServerProcess
from tests.support.raw_client import player


async def account_command(url: str, *options: str) -> tuple[int, str, str]:
    """``klondike-race account --url URL …`` as users run it: exit code, out, err."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "account", "--url", url, *options,
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_account_command_signs_in_by_link_code_then_by_its_file(
    live_server: ServerProcess, tmp_path: Path
) -> None:
    url = live_server.url
    ann = await player(url, "Ann")
    await ann.ok("take_handle", handle="AnnCli", label="laptop")
    code = (await ann.ok("link_code"))["code"]
    path = tmp_path / "keys" / "device"
    status, out, err = await account_command(
        url, "--device-file", str(path), "--link", code, "--label", "terminal"
    )
    assert status == 0, err
    assert f"signed in as AnnCli (player {ann.player})" in out
    assert "terminal (this device)" in out and "laptop" in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = path.read_text().strip()
    assert token.startswith("d.")
    # Then the file alone; the link code is used up.
    status, out, err = await account_command(url, "--device-file", str(path))
    assert status == 0 and "signed in as AnnCli" in out, err
    status, _, err = await account_command(url, "--device-file", str(tmp_path / "x"), "--link",
                                           code)  # fmt: skip
    assert status == 1 and "bad_code" in err
    # Signed out, the file signs in no more.
    status, out, err = await account_command(url, "--device-file", str(path), "--sign-out")
    assert status == 0 and "signed out" in out, err
    status, _, err = await account_command(url, "--device-file", str(path))
    assert status == 1 and "unknown_token" in err


async def test_the_library_signs_in_and_keeps_the_token(
    live_server: ServerProcess, tmp_path: Path
) -> None:
    url = live_server.url
    async with connect(url, name="Bea") as guest:
        codes = await guest.take_handle("BeaLib", label="script")
        assert len(codes) == 10 and guest.token == guest.device_token
        assert guest.account is not None and guest.account["handle"] == "BeaLib"
        link = (await guest.link_code())["code"]
    file = DeviceFile(tmp_path / "bea")
    async with await sign_in(url, file, link=link, label="second") as session:
        assert session.device_token == file.read() == session.token
        assert session.account is not None and session.account["player"] == session.player
        labels = [(d["label"], d["current"]) for d in await session.devices()]
        assert labels == [("script", False), ("second", True)]
    async with await sign_in(url, file) as again:
        assert again.device_token is None  # no new device: the file's
        assert again.account is not None and again.account["handle"] == "BeaLib"
        assert await again.sign_out(every=True) == 2
        await again.wait_closed()  # 4011: the session does not try to resume
        assert again.close_code == CloseCode.SIGNED_OUT
    with pytest.raises(ServerError) as refused:
        await sign_in(url, file)
    assert refused.value.code == "unknown_token"
    with pytest.raises(ValueError):
        await sign_in(url, DeviceFile(tmp_path / "none"))
