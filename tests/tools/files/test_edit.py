"""search_replace_in_file: exact unique matching, its refusals, the 10 MiB caps and the receipt."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.tools.files.conftest import failure
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import edit as ed
from yagent.tools.files.edit import search_replace_in_file
from yagent.toolspec.params import SearchReplaceArgs

pytestmark = pytest.mark.anyio


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> Any:
    args = SearchReplaceArgs(path=path, old_string=old, new_string=new)
    return await search_replace_in_file(ctx, args)


def put(ws: Path, name: str, data: bytes) -> Path:
    path = ws / name
    path.write_bytes(data)
    return path


async def test_unique_exact_match_is_replaced(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "m.py", b"a = 1\nb = 2\nc = 3\n")
    receipt = await edit(ctx, "m.py", "b = 2", "b = 20")
    assert path.read_bytes() == b"a = 1\nb = 20\nc = 3\n"
    assert receipt["path"] == "m.py"
    assert receipt["line"] == 2
    assert receipt["replaced"] == 1
    assert receipt["bytes_written"] == len(path.read_bytes())


async def test_zero_hits_is_not_found(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "m.py", b"a = 1\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "m.py", "a = 2", "a = 3")
    msg = failure(exc, Kind.NOT_FOUND)
    assert "old_string was not found in m.py" in msg
    assert path.read_bytes() == b"a = 1\n"


async def test_crlf_file_zero_hits_says_it_tried_without_cr(
    ctx: ToolContext, workspace: Path
) -> None:
    put(workspace, "w.txt", b"a\r\nb\r\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "w.txt", "a\nc", "x")
    assert "not even with \\r ignored" in failure(exc, Kind.NOT_FOUND)


async def test_several_hits_give_count_and_lines(ctx: ToolContext, workspace: Path) -> None:
    original = b"x()\ny()\nx()\n\nx()\n"
    path = put(workspace, "m.py", original)
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "m.py", "x()", "z()")
    msg = failure(exc, Kind.INVALID_ARGS)
    assert "occurs 3 times" in msg
    assert "(lines 1, 3, 5)" in msg
    assert path.read_bytes() == original


async def test_overlapping_hits_are_ambiguous(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "a.txt", b"aaa\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", "aa", "b")
    assert "occurs 2 times" in failure(exc, Kind.INVALID_ARGS)


async def test_many_hits_list_is_capped(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "a.txt", b"k\n" * 30)
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", "k", "j")
    msg = failure(exc, Kind.INVALID_ARGS)
    assert "occurs 30 times" in msg
    assert "20, …)" in msg
    assert ", 21" not in msg


async def test_empty_and_identical_strings_refused(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "a.txt", b"x\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", "", "y")
    assert "old_string is empty" in failure(exc, Kind.INVALID_ARGS)
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", "x", "x")
    assert "identical" in failure(exc, Kind.INVALID_ARGS)


@pytest.mark.parametrize("which", ["old_string", "new_string"])
async def test_edit_strings_capped(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    monkeypatch.setattr(ed, "MAX_EDIT_BYTES", 16)
    big = "é" * 9  # 18 bytes in UTF-8 although 9 characters: the cap counts bytes
    assert len(big.encode()) > ed.MAX_EDIT_BYTES >= len(big)
    path = put(workspace, "a.txt", big.encode() + b"\n")
    old, new = (big, "y") if which == "old_string" else ("é", big)
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", old, new)
    msg = failure(exc, Kind.TOO_LARGE)
    assert msg.startswith(f"{which} is 18 bytes, over the edit limit of 16 bytes")
    assert path.read_bytes() == big.encode() + b"\n"
    at_cap = "é" * 8
    assert len(at_cap.encode()) == ed.MAX_EDIT_BYTES  # exactly at the cap: allowed
    put(workspace, "b.txt", at_cap.encode() if which == "old_string" else b"x")
    old, new = (at_cap, "z") if which == "old_string" else ("x", at_cap)
    assert (await edit(ctx, "b.txt", old, new))["replaced"] == 1


def test_edit_cap_is_ten_mebibytes() -> None:
    assert ed.MAX_EDIT_BYTES == 10 * 1024 * 1024


async def test_file_over_edit_size_refused(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ed, "MAX_EDIT_FILE_BYTES", 10)
    path = put(workspace, "a.txt", b"0123456789ab\n")
    assert path.stat().st_size > ed.MAX_EDIT_FILE_BYTES
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "a.txt", "0", "1")
    assert "over the edit limit of 10 bytes for a file" in failure(exc, Kind.TOO_LARGE)


async def test_binary_and_non_utf8_refused(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "b.bin", b"ab\x00cd")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "b.bin", "ab", "x")
    assert "binary file" in failure(exc, Kind.INVALID_ARGS)
    put(workspace, "l.txt", b"one\ntwo\ncaf\xe9\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "l.txt", "one", "1")
    assert "line 3 does not decode" in failure(exc, Kind.INVALID_ARGS)


async def test_missing_and_directory_refused(ctx: ToolContext, workspace: Path) -> None:
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "nope.txt", "a", "b")
    failure(exc, Kind.NOT_FOUND)
    (workspace / "d").mkdir()
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "d", "a", "b")
    assert "is a directory" in failure(exc, Kind.INVALID_ARGS)


async def test_receipt_diff_has_file_line_numbers(ctx: ToolContext, workspace: Path) -> None:
    lines = [f"line {i}" for i in range(1, 101)]
    put(workspace, "big.txt", ("\n".join(lines) + "\n").encode())
    receipt = await edit(ctx, "big.txt", "line 50\n", "line fifty\nline 50.5\n")
    assert receipt["diff"].splitlines() == [
        "--- a/big.txt",
        "+++ b/big.txt",
        "@@ -47,7 +47,8 @@",
        " line 47",
        " line 48",
        " line 49",
        "-line 50",
        "+line fifty",
        "+line 50.5",
        " line 51",
        " line 52",
        " line 53",
    ]
    assert receipt["diff_truncated"] is False
    assert receipt["line"] == 50


async def test_receipt_diff_at_file_edges(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "e.txt", b"first\nlast")
    receipt = await edit(ctx, "e.txt", "first\n", "")
    assert receipt["diff"].splitlines()[2:] == ["@@ -1,2 +1 @@", "-first", " last"]
    receipt = await edit(ctx, "e.txt", "last", "last\nadded")
    assert receipt["diff"].splitlines()[2:] == ["@@ -1 +1,2 @@", " last", "+added"]


async def test_receipt_diff_is_capped_visibly(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(workspace, "a.txt", b"start\nend\n")
    new = "".join(f"added line {i}\n" for i in range(40))
    full, cut = ed.unified_diff("start\nend\n", new + "end\n", "a.txt")
    assert not cut
    monkeypatch.setattr(ed, "MAX_DIFF_CHARS", 120)
    assert len(full) > ed.MAX_DIFF_CHARS
    receipt = await edit(ctx, "a.txt", "start\n", new)
    diff = receipt["diff"]
    body, marker = diff.rsplit("\n", 1)
    assert len(body) <= ed.MAX_DIFF_CHARS
    assert full.startswith(body)
    dropped = full.count("\n") - body.count("\n")
    assert marker == f"… [diff truncated: {dropped} more lines]"
    assert receipt["diff_truncated"] is True


async def test_edit_keeps_mode_and_leaves_no_temp_files(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "run.sh", b"#!/bin/sh\necho hi\n")
    path.chmod(0o751)
    await edit(ctx, "run.sh", "hi", "ho")
    assert path.stat().st_mode & 0o777 == 0o751
    assert sorted(os.listdir(workspace)) == ["a.txt", "run.sh"]


async def test_edit_through_a_symlink_edits_the_target(ctx: ToolContext, workspace: Path) -> None:
    target = put(workspace, "real.txt", b"v1\n")
    (workspace / "link.txt").symlink_to("real.txt")
    receipt = await edit(ctx, "link.txt", "v1", "v2")
    assert target.read_bytes() == b"v2\n"
    assert (workspace / "link.txt").is_symlink()
    assert receipt["path"] == "real.txt"
