"""The Python fallback never holds a huge line whole: windows, a memory bound, rg's answers."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tools.conftest import make_surface
from yagent.tools import search as search_mod
from yagent.tools.adapter import ToolContext
from yagent.tools.search import search
from yagent.tools.searchkit import fallback
from yagent.toolspec.params import SearchArgs

MIB = 1 << 20
REAL_FIND_RG = search_mod.find_rg


async def _run(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str, **kw: Any) -> Any:
    found = REAL_FIND_RG if engine == "ripgrep" else lambda: None
    monkeypatch.setattr(search_mod, "find_rg", found)
    result = await search(ctx, SearchArgs(**kw))
    assert result["engine"] == engine
    return result


@pytest.fixture
def ctx(workspace: Path, home: Path) -> ToolContext:
    return ToolContext(workspace, make_surface(workspace, home))


@pytest.mark.anyio
async def test_a_200_mib_single_line_is_searched_in_bounded_memory(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = 200 * MIB
    with (workspace / "huge.txt").open("wb") as fh:
        block = b"a" * MIB
        for _ in range(size // MIB - 1):
            fh.write(block)
        fh.write(b"a" * (MIB - 100) + b"needle" + b"b" * 94 + b"\nshort needle\n")
    tracemalloc.start()
    try:
        result = await _run(ctx, monkeypatch, "python-fallback", pattern="needle", path="huge.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * MIB, f"peak {peak / MIB:.1f} MiB"  # never the 200 MiB line
    first, second = result["matches"]
    assert (first["line"], first["column"]) == (1, size - 100 + 1)
    assert "needle" in first["text"]
    assert first["text"].startswith("[… ")
    assert (second["line"], second["column"]) == (2, 7)
    assert result["long_lines"] == ["huge.txt:1"]
    assert "searched in windows" in result["note"]


_PIECES = st.lists(
    st.sampled_from(["a", "é", "needle", "x" * 40, "\n", "ne", "edle", "€€"]), max_size=60
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pieces=_PIECES, pattern=st.sampled_from(["needle", "^a", "edle$", "e+dle", r"é\w"]))
def test_windowed_lines_give_rgs_first_match(
    ctx: ToolContext,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    pieces: list[str],
    pattern: str,
) -> None:
    monkeypatch.setattr(fallback, "BLOCK_BYTES", 16)
    monkeypatch.setattr(fallback, "LONG_LINE_BYTES", 48)
    monkeypatch.setattr(fallback, "OVERLAP_CHARS", 8)
    (workspace / "t.txt").write_text("".join(pieces), encoding="utf-8")

    async def both() -> tuple[Any, Any]:
        rg = await _run(ctx, monkeypatch, "ripgrep", pattern=pattern, path="t.txt")
        py = await _run(ctx, monkeypatch, "python-fallback", pattern=pattern, path="t.txt")
        return rg, py

    rg, py = anyio.run(both)
    assert [(m["line"], m["column"]) for m in py["matches"]] == [
        (m["line"], m["column"]) for m in rg["matches"]
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("pattern", ["needle$", "^a", "^bb", "dle", "e+d", "a$", "ac$"])
async def test_window_edges_are_not_line_edges(  # matches shorter than the overlap
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    monkeypatch.setattr(fallback, "BLOCK_BYTES", 16)
    monkeypatch.setattr(fallback, "LONG_LINE_BYTES", 48)
    monkeypatch.setattr(fallback, "OVERLAP_CHARS", 8)
    lines = [f"{'b' * n}needle{'a' * (n % 7)}{'c' * (n % 3)}" for n in range(120)]
    lines += [f"b{'a' * n}" for n in range(40, 90)]
    (workspace / "edges.txt").write_text("\n".join(lines) + "\n")
    rg = await _run(ctx, monkeypatch, "ripgrep", pattern=pattern, path="edges.txt")
    py = await _run(ctx, monkeypatch, "python-fallback", pattern=pattern, path="edges.txt")
    assert [(m["line"], m["column"]) for m in py["matches"]] == [
        (m["line"], m["column"]) for m in rg["matches"]
    ]
    assert py["long_lines"]
