"""write_file: exact bytes, parent directories, atomic replacement, created vs overwrote."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.tools.files.conftest import failure
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import write as wr
from yagent.tools.files.write import write_file
from yagent.toolspec.params import WriteFileArgs

pytestmark = pytest.mark.anyio


async def write(ctx: ToolContext, path: str, content: str) -> Any:
    return await write_file(ctx, WriteFileArgs(path=path, content=content))


async def test_creates_parents_and_reports(ctx: ToolContext, workspace: Path) -> None:
    receipt = await write(ctx, "deep/er/new.txt", "héllo\r\nworld")
    path = workspace / "deep" / "er" / "new.txt"
    assert path.read_bytes() == "héllo\r\nworld".encode()  # no conversion, no final newline added
    assert receipt == {
        "path": "deep/er/new.txt",
        "bytes_written": 13,
        "lines": 2,
        "created": True,
        "action": "created",
    }
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_overwrite_replaces_everything_but_mode(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.chmod(0o700)
    receipt = await write(ctx, "a.txt", "")
    assert path.read_bytes() == b""
    assert receipt["created"] is False
    assert receipt["action"] == "overwrote"
    assert receipt["bytes_written"] == 0
    assert receipt["lines"] == 0
    assert path.stat().st_mode & 0o777 == 0o700
    assert os.listdir(workspace) == ["a.txt"]  # the temporary file is gone


async def test_replacement_is_atomic(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace / "a.txt"
    before = target.read_bytes()

    def broken_rename(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "rename", broken_rename)
    with pytest.raises(OSError, match="disk gone"):
        await write(ctx, "a.txt", "new content")
    assert target.read_bytes() == before  # old content intact
    assert os.listdir(workspace) == ["a.txt"]  # and no temporary file left behind


async def test_write_refusals(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "d").mkdir()
    with pytest.raises(ToolFailure) as exc:
        await write(ctx, "d", "x")
    assert "is a directory" in failure(exc, Kind.INVALID_ARGS)
    with pytest.raises(ToolFailure) as exc:
        await write(ctx, "a.txt/inner.txt", "x")
    assert "a parent of it is a file" in failure(exc, Kind.INVALID_ARGS)
    monkeypatch.setattr(wr, "MAX_WRITE_BYTES", 4)
    content = "12345"
    assert len(content.encode()) > wr.MAX_WRITE_BYTES
    with pytest.raises(ToolFailure) as exc:
        await write(ctx, "n.txt", content)
    assert "5 bytes, over the write limit of 4 bytes" in failure(exc, Kind.TOO_LARGE)
    assert not (workspace / "n.txt").exists()


async def test_write_through_symlink_replaces_the_target(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "link").symlink_to("a.txt")
    receipt = await write(ctx, "link", "via link\n")
    assert (workspace / "a.txt").read_text() == "via link\n"
    assert (workspace / "link").is_symlink()
    assert receipt["path"] == "a.txt"
