"""`search`: rg first, then the Python fallback; same results, caps shown."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tools import searchtree
from tests.tools.conftest import make_surface
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools import search as search_mod
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.search import search
from yagent.tools.searchkit import fallback
from yagent.toolspec.params import SearchArgs

ENGINES = ("ripgrep", "python-fallback")
Run = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
def tree(workspace: Path) -> Path:
    return searchtree.build(workspace)


@pytest.fixture
def ctx(tree: Path, home: Path) -> ToolContext:
    return ToolContext(tree, make_surface(tree, home))


def runner(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> Run:
    real = search_mod.find_rg

    async def run(engine: str, **kwargs: Any) -> dict[str, Any]:
        monkeypatch.setattr(search_mod, "find_rg", real if engine == "ripgrep" else lambda: None)
        result = await search(ctx, SearchArgs(**kwargs))
        assert result["engine"] == engine
        return result

    return run


def by_path(result: dict[str, Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for m in result["matches"]:
        out.setdefault(m["path"], []).append(m["line"])
    return out


# -- both engines, one fixture, identical answers ----------------------------------------------

CASES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "NEEDLE", "ignore_case": True},
    {"pattern": "needle(", "fixed_strings": True},
    {"pattern": "NEEDLE(", "fixed_strings": True, "ignore_case": True},
    {"pattern": r"^needle\b"},
    {"pattern": r"ne+dle\s+\w+$"},
    {"pattern": "needle", "glob": "*.py"},
    {"pattern": "needle", "glob": "!*.py"},
    {"pattern": "needle", "glob": "src/**"},
    {"pattern": "needle", "glob": "*.{md,txt}"},
    {"pattern": "needle", "glob": "**"},
    {"pattern": "needle", "glob": "[!a-k]*"},
    {"pattern": "needle", "path": "src"},
    {"pattern": "needle", "path": "src/sub"},
    {"pattern": "needle", "path": "src", "glob": "src/sub/*"},
    {"pattern": "needle", "path": "build"},
    {"pattern": "needle", "path": "secret.py"},
    {"pattern": "needle", "path": "data.bin"},
    {"pattern": "needle", "max_results": 3},
    {"pattern": "é|ü", "ignore_case": True},
    {"pattern": "nomatch-anywhere"},
    {"pattern": "--files"},  # a pattern that looks like an option stays a pattern (`--`)
    {"pattern": "-e"},
]


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=lambda c: json.dumps(c, ensure_ascii=True))
async def test_both_engines_give_the_same_answer(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]
) -> None:
    run = runner(ctx, monkeypatch)
    rg, py = await run("ripgrep", **case), await run("python-fallback", **case)
    assert rg["matches"] == py["matches"]
    for key in ("total_matches", "truncated", "returned", "path"):
        assert rg[key] == py[key], key


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_ignore_files_hidden_binary_git_and_symlinks(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    result = await runner(ctx, monkeypatch)(engine, pattern="needle")
    # .gitignore (anchored, negated, nested), .ignore, .git/info/exclude, binary, .git, symlink.
    assert by_path(result) == searchtree.VISIBLE_NEEDLES
    assert result["total_matches"] == sum(map(len, searchtree.VISIBLE_NEEDLES.values()))
    assert result["truncated"] is False


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_gitignore_counts_only_inside_a_git_repository(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    (tree / ".git" / "HEAD").unlink()
    (tree / ".git" / "info" / "exclude").unlink()
    (tree / ".git" / "info").rmdir()
    (tree / ".git").rmdir()
    found = by_path(await runner(ctx, monkeypatch)(engine, pattern="needle"))
    assert "secret.py" in found  # .gitignore is git's file: no repository, no effect (as rg)
    assert "excluded.txt" in found
    assert "dot_ignored.txt" not in found  # .ignore counts everywhere


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_narrows_and_never_revives_ignored_files(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    found = by_path(await runner(ctx, monkeypatch)(engine, pattern="needle", glob="*.py"))
    assert sorted(found) == ["src/app.py", "src/sub/kept.py", "src/util/helpers.py"]
    found = by_path(await runner(ctx, monkeypatch)(engine, pattern="needle", glob="**"))
    assert found == searchtree.VISIBLE_NEEDLES  # rg alone would let `**` reach build/ and secret.py


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_cap_is_visible(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    result = await runner(ctx, monkeypatch)(engine, pattern="needle", max_results=2)
    assert result["returned"] == 2
    assert len(result["matches"]) == 2
    assert result["total_matches"] == sum(map(len, searchtree.VISIBLE_NEEDLES.values()))
    assert result["truncated"] is True
    assert "showing the first 2 of" in result["note"]
    assert [m["path"] for m in result["matches"]] == ["docs/a.txt", "docs/b.md"]  # sorted order


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_count_limit_turns_the_total_into_more(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(search_mod, "COUNT_LIMIT", 4)
    result = await runner(ctx, monkeypatch)(engine, pattern="needle", max_results=2)
    assert result["more"] is True
    assert result["total_matches"] is None
    assert result["truncated"] is True
    assert result["returned"] == 2
    assert "counting stopped at 4" in result["note"]
    exact = await runner(ctx, monkeypatch)(engine, pattern="needle", path="notes.md")
    assert exact["total_matches"] == 2
    assert "more" not in exact


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_long_lines_are_clipped_around_the_match(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    (match,) = (await runner(ctx, monkeypatch)(engine, pattern="needle", path="long.txt"))[
        "matches"
    ]
    assert match["column"] == 1002
    assert match["submatches"] == [[1001, 1007]]
    assert match["text"].startswith("[… ")
    assert match["text"].endswith(" more chars]")
    assert "needle" in match["text"]
    assert len(match["text"]) < search_mod.MAX_LINE_CHARS + 60


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_text_columns_crlf_and_undecodable_bytes(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    run = runner(ctx, monkeypatch)
    uni = (await run(engine, pattern="needle", path="unicode.txt", ignore_case=True))["matches"]
    assert uni[0]["submatches"] == [[6, 12], [15, 21]]  # characters, not bytes
    crlf = (await run(engine, pattern=r"here$", path="notes.md"))["matches"]
    assert crlf == []  # like rg without --crlf, `$` does not match before "\r"
    notes = (await run(engine, pattern="needle", path="notes.md"))["matches"]
    assert notes[0]["text"] == "first needle"  # the "\r" is not shown
    latin = (await run(engine, pattern="needle", path="latin1.txt"))["matches"]
    assert latin[0]["text"] == "caf\ufffd needle"


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_many_submatches_are_counted_not_listed(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    (tree / "many.txt").write_text("ab " * 30 + "\n")
    (match,) = (await runner(ctx, monkeypatch)(engine, pattern="ab", path="many.txt"))["matches"]
    assert len(match["submatches"]) == search_mod.MAX_SUBMATCHES
    assert match["more_submatches"] == 30 - search_mod.MAX_SUBMATCHES


@pytest.mark.anyio
async def test_fallback_crosses_block_boundaries_like_rg(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        f"line {i} " + ("needle" if i % 7 == 0 else "hay") + "z" * (i % 50) for i in range(400)
    ]
    (tree / "big.txt").write_text("\n".join(lines))  # no final newline
    (tree / "late_nul.txt").write_bytes(b"needle early\n" + b"pad\n" * 100 + b"\x00needle\n")
    monkeypatch.setattr(fallback, "BLOCK_BYTES", 64)
    run = runner(ctx, monkeypatch)
    rg = await run("ripgrep", pattern="needle", path="big.txt")
    py = await run("python-fallback", pattern="needle", path="big.txt")
    assert py["matches"] == rg["matches"]
    assert py["total_matches"] == 58
    late = await run("python-fallback", pattern="needle", path=".", glob="late_nul.txt")
    assert [m["line"] for m in late["matches"]] == [1]  # stops at the NUL, keeps what came before


@pytest.mark.anyio
async def test_fallback_without_prefilter_for_lookaround(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await runner(ctx, monkeypatch)("python-fallback", pattern=r"(?<=def )needle")
    assert by_path(result) == {"src/app.py": [3]}


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_bad_regex_is_invalid_args_naming_the_problem(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    with pytest.raises(ToolFailure) as info:
        await runner(ctx, monkeypatch)(engine, pattern="needle(")
    assert info.value.kind is Kind.INVALID_ARGS
    assert "regular expression" in str(info.value)
    assert ("unclosed group" if engine == "ripgrep" else "missing )") in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_bad_glob_and_line_breaks_are_refused(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    run = runner(ctx, monkeypatch)
    with pytest.raises(ToolFailure, match="unclosed alternate group") as info:
        await run(engine, pattern="needle", glob="*.{py")
    assert info.value.kind is Kind.INVALID_ARGS
    with pytest.raises(ToolFailure, match="line break"):
        await run(engine, pattern="a\nb")


@pytest.mark.anyio
async def test_missing_path_is_not_found(ctx: ToolContext) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        await search(ctx, SearchArgs(pattern="x", path="nope"))


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_bad_ignore_file_line_is_reported_and_skipped(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    (tree / "docs" / ".gitignore").write_text("{broken\nb.md\n")
    result = await runner(ctx, monkeypatch)(engine, pattern="needle", path="docs")
    assert by_path(result) == {"docs/a.txt": [1]}  # the good line still applies
    assert any("unclosed alternate group" in e for e in result["errors"])


# -- the engine is named; the fallback says it is one ----------------------------------------


@pytest.mark.anyio
async def test_the_fallback_says_it_is_one(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await runner(ctx, monkeypatch)("python-fallback", pattern="needle", path="docs")
    assert "fallback" in result["note"]
    assert "rg" in result["note"]
    assert "engine_source" not in result


@pytest.mark.anyio
async def test_rg_result_names_the_wheel(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    result = await runner(ctx, monkeypatch)("ripgrep", pattern="needle", path="docs")
    assert result["engine_source"].startswith("ripgrep wheel (")
    assert "note" not in result


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ENGINES)
async def test_timeout_seam_gives_a_partial_result_that_says_so(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(search_mod, "SEARCH_TIMEOUT", 0.0)
    result = await runner(ctx, monkeypatch)(engine, pattern="needle")
    assert result["timed_out"] is True
    assert result["truncated"] is True
    assert result["total_matches"] is None
    assert "timed out" in result["note"]


# -- through the real Adapter --------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_through_the_adapter(tree: Path, home: Path) -> None:
    adapter = Adapter(ToolContext(tree, make_surface(tree, home)), {"search": search})
    ok = await adapter.call("search", json.dumps({"pattern": "needle", "glob": "*.py"}))
    assert ok.ok, ok.content
    body = json.loads(ok.content)
    assert body["engine"] == "ripgrep"
    assert by_path(body) == {
        "src/app.py": [3, 6],
        "src/sub/kept.py": [1],
        "src/util/helpers.py": [1, 3],
    }
    spec = adapter.surface.spec("search")
    assert spec is not None
    assert spec.result_paths_of(body) == (
        "src/app.py",
        "src/sub/kept.py",
        "src/util/helpers.py",
    )
    bad = await adapter.call("search", {"pattern": "("})
    assert not bad.ok
    assert bad.kind is Kind.INVALID_ARGS
    missing = await adapter.call("search", {"pattern": "x", "path": "nope"})
    assert not missing.ok
    assert missing.kind is Kind.NOT_FOUND
