"""read_file paging as a property: for any text and any budgets, paging from offset 1 to the end
gives back the file's bytes exactly, every page stays within its budgets, and cut lines are the
only loss."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.conftest import make_surface
from tests.tools.files.conftest import page_texts
from yagent.tools.adapter import ToolContext
from yagent.tools.files import read as rf
from yagent.tools.files.read import read_file
from yagent.toolspec.params import ReadFileArgs

line_text = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "\r", "\t", "é", "日", "🙂"]), max_size=12
)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(line_text, max_size=30),
    final_newline=st.booleans(),
    max_lines=st.integers(1, 6),
    max_bytes=st.integers(4, 40),
    chunk=st.integers(1, 9),
    limit=st.none() | st.integers(1, 8),
)
def test_paging_reconstructs_the_file(
    lines: list[str],
    final_newline: bool,
    max_lines: int,
    max_bytes: int,
    chunk: int,
    limit: int | None,
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    data = text.encode()
    expected = text.split("\n")
    if text.endswith("\n") or not text:
        expected.pop()
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(rf, "MAX_READ_LINES", max_lines)
        mp.setattr(rf, "MAX_READ_BYTES", max_bytes)
        mp.setattr(rf, "CHUNK_BYTES", chunk)
        ws, home = Path(tmp, "ws"), Path(tmp, "home")
        ws.mkdir()
        home.mkdir()
        (ws / "f.txt").write_bytes(data)
        ctx = ToolContext(ws, make_surface(ws, home))
        got: list[str] = []
        offset = 1
        while True:
            args = ReadFileArgs(path="f.txt", offset=offset, limit=limit)
            page = anyio.run(read_file, ctx, args)
            texts = page_texts(page)
            assert len(texts) <= min(max_lines, limit or max_lines)
            assert page["bytes_returned"] <= max_bytes or (
                len(texts) == 1 and page["bytes_returned"] == max_bytes + 1
            )
            for n in page.get("cut_lines", []):
                i = n - offset
                assert " … [line " in texts[i]
                original = expected[n - 1]
                assert original.startswith(texts[i].split(" … [line ")[0])
                texts[i] = original  # the only loss is the cut tail, marked
            got += texts
            if not page["more"]:
                break
            assert page["next_offset"] == offset + len(texts)
            offset = page["next_offset"]
        assert got == expected
        assert page["total_lines"] == len(expected)
