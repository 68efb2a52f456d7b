"""read_file's budget ladder and byte faithfulness.

Every fixture that tests a limit first asserts that it really exceeds (or exactly meets) that
limit — otherwise the limit assertion would hold whatever the code does. The seams are lowered
with monkeypatch so no test needs a large real file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.tools.files.conftest import failure, page_texts
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import common
from yagent.tools.files import read as rf
from yagent.tools.files.read import read_file
from yagent.toolspec.params import ReadFileArgs

pytestmark = pytest.mark.anyio

LINES, BYTES = 10, 100


@pytest.fixture(autouse=True)
def small_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rf, "MAX_READ_LINES", LINES)
    monkeypatch.setattr(rf, "MAX_READ_BYTES", BYTES)
    monkeypatch.setattr(rf, "CHUNK_BYTES", 16)  # offsets and long lines cross chunk borders


async def read(ctx: ToolContext, path: str, offset: int = 1, limit: int | None = None) -> Any:
    return await read_file(ctx, ReadFileArgs(path=path, offset=offset, limit=limit))


def put(ws: Path, name: str, data: bytes) -> Path:
    path = ws / name
    path.write_bytes(data)
    return path


def numbered(n: int, width: int = 3) -> bytes:
    return b"".join(b"%0*d\n" % (width, i) for i in range(1, n + 1))


async def read_all(ctx: ToolContext, path: str) -> tuple[list[str], list[dict[str, Any]]]:
    texts: list[str] = []
    pages: list[dict[str, Any]] = []
    offset = 1
    while True:
        page = await read(ctx, path, offset)
        pages.append(page)
        texts += page_texts(page)
        if not page["more"]:
            return texts, pages
        assert page["next_offset"] > offset  # paging always progresses
        offset = page["next_offset"]


async def test_ladder_01_lines_budget_first(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "many.txt", numbered(30))  # 30 lines of 4 bytes: lines run out first
    assert rf.MAX_READ_LINES < 30
    assert path.stat().st_size > rf.MAX_READ_BYTES
    assert rf.MAX_READ_LINES * 4 <= rf.MAX_READ_BYTES
    page = await read(ctx, "many.txt")
    assert page["truncated_by"] == "lines"
    assert page["lines_returned"] == LINES
    assert page_texts(page) == [f"{i:03d}" for i in range(1, LINES + 1)]
    assert page["more"] is True
    assert page["next_offset"] == LINES + 1
    assert "offset=11" in page["note"]


async def test_ladder_02_bytes_budget_first(ctx: ToolContext, workspace: Path) -> None:
    line = b"x" * 29 + b"\n"  # 30 bytes a line: 4 lines = 120 bytes > budget, 4 < line budget
    path = put(workspace, "wide.txt", line * 5)
    assert path.stat().st_size > rf.MAX_READ_BYTES
    assert rf.MAX_READ_LINES > 5
    page = await read(ctx, "wide.txt")
    assert page["truncated_by"] == "bytes"
    assert page["lines_returned"] == 3
    assert page["bytes_returned"] == 90 <= rf.MAX_READ_BYTES
    assert page["next_offset"] == 4
    assert "byte budget" in page["note"]


async def test_ladder_03_limit_first(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "f.txt", numbered(8))
    page = await read(ctx, "f.txt", limit=3)
    assert rf.MAX_READ_LINES > 3
    assert page["truncated_by"] == "limit"
    assert page_texts(page) == ["001", "002", "003"]
    assert page["next_offset"] == 4
    assert "your limit" in page["note"]


async def test_ladder_04_limit_above_budget_is_capped(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "many.txt", numbered(25))
    page = await read(ctx, "many.txt", limit=LINES * 2)
    assert LINES * 2 > rf.MAX_READ_LINES
    assert page["truncated_by"] == "lines"
    assert page["lines_returned"] == LINES


async def test_ladder_05_limit_reaching_the_end_is_no_truncation(
    ctx: ToolContext, workspace: Path
) -> None:
    put(workspace, "f.txt", numbered(3))
    page = await read(ctx, "f.txt", limit=3)
    assert page["truncated_by"] is None
    assert page["more"] is False
    assert page["total_lines"] == 3


async def test_ladder_06_offset_paging_to_the_end(ctx: ToolContext, workspace: Path) -> None:
    data = numbered(23) + b"y" * 45 + b"\n" + b"z" * 60 + b"\n" + numbered(7)
    path = put(workspace, "mixed.txt", data)
    assert path.stat().st_size > 2 * rf.MAX_READ_BYTES
    texts, pages = await read_all(ctx, "mixed.txt")
    assert "\n".join(texts) + "\n" == data.decode()
    assert len(pages) >= 4
    assert all(p["lines_returned"] <= LINES and p["bytes_returned"] <= BYTES for p in pages)
    assert pages[-1]["total_lines"] == 32
    assert pages[-1]["next_offset"] is None


async def test_ladder_07_exact_line_boundary(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "ten.txt", numbered(LINES))
    assert LINES == rf.MAX_READ_LINES
    page = await read(ctx, "ten.txt")
    assert page["lines_returned"] == LINES
    assert page["truncated_by"] is None
    assert page["more"] is False
    assert page["total_lines"] == LINES


async def test_ladder_08_one_line_over(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "eleven.txt", numbered(LINES + 1))
    page = await read(ctx, "eleven.txt")
    assert page["truncated_by"] == "lines"
    assert page["next_offset"] == LINES + 1
    last = await read(ctx, "eleven.txt", page["next_offset"])
    assert page_texts(last) == [f"{LINES + 1:03d}"]
    assert last["more"] is False
    assert last["total_lines"] == LINES + 1


async def test_ladder_09_exact_byte_boundary(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "hundred.txt", (b"a" * 24 + b"\n") * 4)
    assert path.stat().st_size == rf.MAX_READ_BYTES
    page = await read(ctx, "hundred.txt")
    assert page["bytes_returned"] == BYTES
    assert page["lines_returned"] == 4
    assert page["truncated_by"] is None
    assert page["more"] is False


async def test_ladder_10_one_byte_over(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "over.txt", (b"a" * 24 + b"\n") * 4 + b"\n")
    assert path.stat().st_size == rf.MAX_READ_BYTES + 1
    page = await read(ctx, "over.txt")
    assert page["truncated_by"] == "bytes"
    assert page["next_offset"] == 5
    rest = await read(ctx, "over.txt", 5)
    assert page_texts(rest) == [""]
    assert rest["more"] is False


async def test_ladder_11_long_line_cut_with_marker(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "long.txt", b"L" * 250 + b"\nnext\n")
    assert rf.MAX_READ_BYTES < 250
    page = await read(ctx, "long.txt")
    [text] = page_texts(page)
    assert text.startswith("L" * BYTES)
    assert "L" * (BYTES + 1) not in text
    assert text.endswith(f"[line 1 cut: {BYTES} of 250 bytes shown]")
    assert page["cut_lines"] == [1]
    assert page["truncated_by"] == "bytes"
    assert page["more"] is True
    assert page["next_offset"] == 2
    nxt = await read(ctx, "long.txt", 2)
    assert page_texts(nxt) == ["next"]
    assert path.stat().st_size == 256


async def test_ladder_12_long_line_mid_file_starts_next_page(
    ctx: ToolContext, workspace: Path
) -> None:
    put(workspace, "mid.txt", b"a\nb\n" + b"M" * 300 + b"\nc\n")
    assert rf.MAX_READ_BYTES < 300
    first = await read(ctx, "mid.txt")
    assert page_texts(first) == ["a", "b"]
    assert first["next_offset"] == 3
    assert "cut_lines" not in first  # stopped before the long line, did not cut it here
    second = await read(ctx, "mid.txt", 3)
    assert second["cut_lines"] == [3]
    assert second["next_offset"] == 4
    third = await read(ctx, "mid.txt", 4)
    assert page_texts(third) == ["c"]
    assert third["total_lines"] == 4


async def test_ladder_13_long_last_line_without_newline(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "tail.txt", b"X" * 150)
    assert rf.MAX_READ_BYTES < 150
    page = await read(ctx, "tail.txt")
    assert page["cut_lines"] == [1]
    assert "of 150 bytes shown" in page["content"]
    assert page["more"] is False
    assert page["next_offset"] is None
    assert page["truncated_by"] == "bytes"  # something was left out, though no line remains
    assert page["total_lines"] == 1


async def test_ladder_14_cut_respects_utf8_boundaries(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "utf8.txt", "é".encode() * 80 + b"\n")  # 160 bytes, 2 bytes a character
    page = await read(ctx, "utf8.txt")
    monkey_budget = rf.MAX_READ_BYTES
    assert monkey_budget < 160
    [text] = page_texts(page)
    shown = text.split(" … ")[0]
    assert shown == "é" * (BYTES // 2)
    assert "�" not in text


async def test_ladder_15_cut_on_odd_budget_backs_off(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rf, "MAX_READ_BYTES", 7)
    put(workspace, "utf8.txt", "日本語テキスト".encode() + b"\n")  # 3-byte characters
    assert len("日本語テキスト".encode()) > rf.MAX_READ_BYTES
    page = await read(ctx, "utf8.txt")
    assert page_texts(page)[0].startswith("日本 … [line 1 cut: 6 of 21 bytes shown]")


async def test_ladder_16_first_line_whole_when_only_newline_overshoots(
    ctx: ToolContext, workspace: Path
) -> None:
    path = put(workspace, "edge.txt", b"e" * BYTES + b"\nf\n")
    assert path.stat().st_size > rf.MAX_READ_BYTES
    page = await read(ctx, "edge.txt")
    assert page_texts(page) == ["e" * BYTES]
    assert "cut_lines" not in page
    assert page["bytes_returned"] == BYTES + 1
    assert page["next_offset"] == 2


async def test_ladder_17_empty_file(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "empty.txt", b"")
    page = await read(ctx, "empty.txt")
    assert page["content"] == ""
    assert page["lines_returned"] == 0
    assert page["total_lines"] == 0
    assert page["more"] is False
    assert page["truncated_by"] is None
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "empty.txt", 2)
    assert "it has 0 lines" in failure(exc, Kind.INVALID_ARGS)


async def test_ladder_18_no_trailing_newline(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "nonl.txt", b"one\ntwo")
    page = await read(ctx, "nonl.txt")
    assert page_texts(page) == ["one", "two"]
    assert page["total_lines"] == 2
    assert page["bytes_returned"] == 7


async def test_ladder_19_crlf_preserved_byte_exact(ctx: ToolContext, workspace: Path) -> None:
    data = b"a\r\nb\rc\r\n\r\nlast\r"
    put(workspace, "crlf.txt", data)
    page = await read(ctx, "crlf.txt")
    texts = page_texts(page)
    assert texts == ["a\r", "b\rc\r", "\r", "last\r"]  # split on \n only, \r kept
    assert "\n".join(texts).encode() == data.rstrip(b"\n")
    assert page["bytes_returned"] == len(data)


async def test_ladder_20_binary_refused(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "bin.dat", b"PK\x03\x04\x00\x00" + b"x" * 100)
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "bin.dat")
    assert "binary file" in failure(exc, Kind.INVALID_ARGS)


async def test_ladder_21_nul_after_sniff_window_is_text(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "BINARY_SNIFF_BYTES", 8)
    put(workspace, "late.txt", b"abcdefgh\n\x00\n")
    page = await read(ctx, "late.txt")
    assert page_texts(page) == ["abcdefgh", "\x00"]


async def test_ladder_22_invalid_utf8_refused_naming_the_line(
    ctx: ToolContext, workspace: Path
) -> None:
    put(workspace, "latin1.txt", b"ok\ncaf\xe9\n")
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "latin1.txt")
    assert "line 2" in failure(exc, Kind.INVALID_ARGS)
    page = await read(ctx, "latin1.txt", limit=1)  # the clean part is still readable
    assert page_texts(page) == ["ok"]


async def test_ladder_23_over_absolute_size_refused(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rf, "MAX_FILE_SIZE_FOR_READ", 64)
    path = put(workspace, "big.txt", numbered(20))
    assert path.stat().st_size > rf.MAX_FILE_SIZE_FOR_READ
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "big.txt", limit=1)  # even a tiny page of it is refused
    msg = failure(exc, Kind.TOO_LARGE)
    assert "80 bytes" in msg
    assert "64" in msg
    monkeypatch.setattr(rf, "MAX_FILE_SIZE_FOR_READ", 80)
    assert path.stat().st_size == rf.MAX_FILE_SIZE_FOR_READ
    assert (await read(ctx, "big.txt", limit=1))["lines_returned"] == 1  # at the line: allowed


async def test_ladder_24_offset_past_the_end(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "f.txt", numbered(5))
    put(workspace, "g.txt", b"a\nb")
    for name, offset, lines in (("f.txt", 6, 5), ("f.txt", 40, 5), ("g.txt", 3, 2)):
        with pytest.raises(ToolFailure) as exc:
            await read(ctx, name, offset)
        assert f"offset {offset} is past the end" in failure(exc, Kind.INVALID_ARGS)
        assert f"it has {lines} lines" in str(exc.value)
    assert page_texts(await read(ctx, "f.txt", 5)) == ["005"]
    assert page_texts(await read(ctx, "g.txt", 2)) == ["b"]


async def test_ladder_25_offset_numbers_lines(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "f.txt", numbered(40))
    page = await read(ctx, "f.txt", 33, limit=2)
    assert page_texts(page) == ["033", "034"]  # page_texts checks the numbering too
    assert page["content"].startswith("    33\t033\n    34\t")


async def test_total_lines_only_when_cheap(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = put(workspace, "f.txt", numbered(30))
    assert (await read(ctx, "f.txt"))["total_lines"] == 30  # small: counted up front
    monkeypatch.setattr(rf, "COUNT_LINES_MAX_BYTES", 50)
    assert path.stat().st_size > rf.COUNT_LINES_MAX_BYTES
    page = await read(ctx, "f.txt")
    assert page["total_lines"] is None
    assert page["more"] is True
    last = await read(ctx, "f.txt", 21)
    assert last["total_lines"] == 30  # reaching the end makes it known


async def test_not_a_regular_file(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "d")
    assert "is a directory" in failure(exc, Kind.INVALID_ARGS)
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "pipe")
    assert "not a regular file" in failure(exc, Kind.INVALID_ARGS)
    with pytest.raises(ToolFailure) as exc:
        await read(ctx, "missing.txt")
    assert "no such file" in failure(exc, Kind.NOT_FOUND)


async def test_path_is_workspace_relative(
    ctx: ToolContext, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "sub").mkdir()
    put(workspace / "sub", "f.txt", b"x\n")
    assert (await read(ctx, "./sub/../sub/f.txt"))["path"] == "sub/f.txt"
    assert (await read(ctx, str(workspace / "sub" / "f.txt")))["path"] == "sub/f.txt"
    outside = put(tmp_path, "out.txt", b"y\n")
    assert (await read(ctx, str(outside)))["path"] == str(outside.resolve())
