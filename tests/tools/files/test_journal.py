"""The edit journal the file tools keep for `/diff` and `/undo`: what a file held before each
edit, and the digest of what the tool left (`tools.files.journal`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel.judge.toolfail import ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import journal
from yagent.tools.files.edit import search_replace_in_file
from yagent.tools.files.write import write_file
from yagent.toolspec.params import SearchReplaceArgs, WriteFileArgs


@pytest.fixture
def journaled(ctx: ToolContext, tmp_path: Path) -> ToolContext:
    ctx.state_dir = tmp_path / "state"
    return ctx


@pytest.mark.anyio
async def test_each_edit_keeps_the_bytes_before_and_the_digest_after(
    journaled: ToolContext, tmp_path: Path
) -> None:
    ws = journaled.workspace
    (ws / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    await write_file(journaled, WriteFileArgs(path="new.txt", content="fresh\n"))
    await search_replace_in_file(
        journaled, SearchReplaceArgs(path="a.txt", old_string="two", new_string="TWO")
    )
    await write_file(journaled, WriteFileArgs(path="a.txt", content="over\n"))
    read = journal.entries(tmp_path / "state")
    assert read.problem is None
    created, edited, overwritten = read.edits
    assert (created.tool, created.path, created.before) == ("write_file", "new.txt", None)
    assert created.after_sha256 == journal.digest(b"fresh\n")
    assert edited.before is not None
    assert edited.before.read_bytes() == b"one\r\ntwo\r\n"  # byte for byte, CRLF kept
    assert edited.after_sha256 == journal.digest(b"one\r\nTWO\r\n")
    assert overwritten.before is not None
    assert overwritten.before.read_bytes() == b"one\r\nTWO\r\n"
    assert [e.seq for e in read.edits] == [1, 2, 3]


@pytest.mark.anyio
async def test_a_failed_edit_is_not_journaled(journaled: ToolContext, tmp_path: Path) -> None:
    (journaled.workspace / "a.txt").write_text("one\n")
    with pytest.raises(ToolFailure):
        await search_replace_in_file(
            journaled, SearchReplaceArgs(path="a.txt", old_string="absent", new_string="x")
        )
    assert journal.entries(tmp_path / "state").edits == ()


def test_an_unreadable_line_ends_the_reading_and_says_so(tmp_path: Path) -> None:
    folder = tmp_path / journal.FOLDER
    folder.mkdir()
    (folder / journal.JOURNAL).write_text(
        '{"seq": 1, "call_id": "c", "tool": "write_file", "path": "a", "before": null,'
        ' "after_sha256": "x"}\nnot json\n'
    )
    read = journal.entries(tmp_path)
    assert len(read.edits) == 1
    assert read.problem is not None
    assert "line 2 unreadable" in read.problem
