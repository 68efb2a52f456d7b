"""The seven line-ending gates for search_replace_in_file (docs/tools.md).

Each gate is named after the mutation it catches: fallback applied unconditionally, mixed endings
converted too, new_string not converted on exact hits, fallback without the uniqueness check,
CRLF not restored after the fallback, receipts silent about the conversion, LF files touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tools.files.conftest import failure
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files.edit import plan_replacement, search_replace_in_file
from yagent.tools.files.lineends import Endings, to_crlf, to_lf
from yagent.toolspec.params import SearchReplaceArgs

pytestmark = pytest.mark.anyio


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> Any:
    args = SearchReplaceArgs(path=path, old_string=old, new_string=new)
    return await search_replace_in_file(ctx, args)


def put(ws: Path, name: str, data: bytes) -> Path:
    path = ws / name
    path.write_bytes(data)
    return path


def uniform_crlf(data: bytes) -> bool:
    return b"\r\n" in data and data.count(b"\n") == data.count(b"\r\n") == data.count(b"\r")


async def test_gate_1_fallback_applies_only_to_uniform_crlf(
    ctx: ToolContext, workspace: Path
) -> None:
    crlf = put(workspace, "crlf.txt", b"def f():\r\n    return 1\r\n")
    await edit(ctx, "crlf.txt", "def f():\n    return 1\n", "def f():\n    return 2\n")
    assert crlf.read_bytes() == b"def f():\r\n    return 2\r\n"
    # An LF file gets no line-ending-insensitive retry for a CRLF old_string.
    lf = put(workspace, "lf.txt", b"def f():\n    return 1\n")
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "lf.txt", "def f():\r\n    return 1\r\n", "x")
    assert "contains \\r but the file has LF" in failure(exc, Kind.NOT_FOUND)
    assert lf.read_bytes() == b"def f():\n    return 1\n"


async def test_gate_2_mixed_endings_refused_with_the_reason(
    ctx: ToolContext, workspace: Path
) -> None:
    original = b"one\r\ntwo\nthree\r\n"
    path = put(workspace, "mixed.txt", original)
    assert Endings.of(original.decode()).mixed
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "mixed.txt", "one\ntwo\n", "1\n2\n")
    msg = failure(exc, Kind.NOT_FOUND)
    assert "mixed line endings (2 CRLF, 1 LF, 0 bare CR)" in msg
    assert "never normalised" in msg
    assert "would match if line endings were ignored" in msg
    assert path.read_bytes() == original  # nothing rewritten
    stray = put(workspace, "stray.txt", b"a\r\nb\rc\r\n")  # a bare CR makes it non-uniform too
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "stray.txt", "a\nb", "x")
    assert "1 bare CR" in failure(exc, Kind.NOT_FOUND)
    assert stray.read_bytes() == b"a\r\nb\rc\r\n"


async def test_gate_3_exact_hit_in_crlf_file_converts_new_string(
    ctx: ToolContext, workspace: Path
) -> None:
    path = put(workspace, "crlf.txt", b"a = 1\r\nb = 2\r\n")
    receipt = await edit(ctx, "crlf.txt", "a = 1", "a = 1\nextra = 3\n# note")  # single line: exact
    data = path.read_bytes()
    assert data == b"a = 1\r\nextra = 3\r\n# note\r\nb = 2\r\n"
    assert uniform_crlf(data)
    assert receipt["line_endings"] == "crlf-applied"


async def test_gate_4_fallback_requires_a_unique_hit(ctx: ToolContext, workspace: Path) -> None:
    original = b"x = 1\r\ny = 2\r\nz\r\nx = 1\r\ny = 2\r\n"
    path = put(workspace, "dup.txt", original)
    with pytest.raises(ToolFailure) as exc:
        await edit(ctx, "dup.txt", "x = 1\ny = 2", "w = 0")
    msg = failure(exc, Kind.INVALID_ARGS)
    assert "occurs 2 times" in msg
    assert "lines 1, 4" in msg
    assert "CRLF" in msg
    assert path.read_bytes() == original


async def test_gate_5_crlf_restored_after_fallback(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "crlf.txt", b"head\r\nold 1\r\nold 2\r\ntail\r\n")
    await edit(ctx, "crlf.txt", "old 1\nold 2\n", "new 1\nnew 2\nnew 3\n")
    data = path.read_bytes()
    assert data == b"head\r\nnew 1\r\nnew 2\r\nnew 3\r\ntail\r\n"
    assert uniform_crlf(data)
    assert b"\n" not in data.replace(b"\r\n", b"")


async def test_gate_6_receipts_name_the_conversion(ctx: ToolContext, workspace: Path) -> None:
    put(workspace, "a.txt", b"p\r\nq\r\n")
    fallback = await edit(ctx, "a.txt", "p\nq", "P\nQ")
    assert fallback["line_endings"] == "crlf-normalized"
    exact = await edit(ctx, "a.txt", "P", "PP")
    assert exact["line_endings"] == "crlf-applied"
    put(workspace, "b.txt", b"p\nq\n")
    assert (await edit(ctx, "b.txt", "p\nq", "P\nQ"))["line_endings"] == "lf"
    put(workspace, "c.txt", b"p\r\nq\n")
    assert (await edit(ctx, "c.txt", "p", "P\nP"))["line_endings"] == "mixed"


async def test_gate_7_lf_file_untouched(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "lf.txt", b"alpha\nbeta\ngamma\n")
    receipt = await edit(ctx, "lf.txt", "beta\n", "BETA\nmore\n")
    assert path.read_bytes() == b"alpha\nBETA\nmore\ngamma\n"
    assert receipt["line_endings"] == "lf"
    nonl = put(workspace, "one.txt", b"single line")  # no endings at all: not CRLF
    await edit(ctx, "one.txt", "single", "two\nlines,")
    assert nonl.read_bytes() == b"two\nlines, line"


async def test_mixed_file_exact_hit_inserts_verbatim(ctx: ToolContext, workspace: Path) -> None:
    path = put(workspace, "mixed.txt", b"one\r\ntwo\n")
    await edit(ctx, "mixed.txt", "two", "2a\n2b")
    assert path.read_bytes() == b"one\r\n2a\n2b\n"  # the rest of the file keeps its endings


def test_split_crlf_pair_is_repaired() -> None:
    # old_string starting at the `\n` of a CRLF pair must not leave `\r\r\n` behind.
    plan = plan_replacement("a\r\nb\r\n", "\nb", "\nc", "f")
    assert plan.text == "a\r\nc\r\n"
    assert plan.line_endings == "crlf-applied"


crlf_lines = st.lists(st.text(alphabet="xyz ", max_size=4), min_size=1, max_size=8)


@given(crlf_lines, st.integers(0, 7), st.text(alphabet="XY\n", max_size=8))
def test_crlf_file_stays_uniform_after_any_edit(lines: list[str], pick: int, new: str) -> None:
    text = "".join(f"L{i}{line}\r\n" for i, line in enumerate(lines))
    target = f"L{pick % len(lines)}{lines[pick % len(lines)]}\n"  # LF form: the fallback path
    plan = plan_replacement(text, target, new, "f")
    assert plan.line_endings == "crlf-normalized"
    assert plan.text == to_crlf(to_lf(text).replace(target, to_lf(new), 1))
    assert Endings.of(plan.text).lf == 0
    assert Endings.of(plan.text).cr == 0
