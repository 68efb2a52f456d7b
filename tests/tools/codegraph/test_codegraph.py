"""find_definitions / find_references on real Python, JS, TS, TSX and Go sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tools.codegraph import fixture
from tests.tools.conftest import make_surface
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.codegraph import find_definitions, find_references
from yagent.tools.codegraph import tools as cg
from yagent.tools.files import judged
from yagent.tools.files.judged import Judged
from yagent.toolspec.params import SymbolArgs


@pytest.fixture
def repo(workspace: Path) -> Path:
    return fixture.build(workspace)


@pytest.fixture
def ctx(repo: Path, home: Path) -> ToolContext:
    return ToolContext(repo, make_surface(repo, home))


async def defs(ctx: ToolContext, symbol: str, path: str = ".") -> dict[str, Any]:
    return await find_definitions(ctx, SymbolArgs(symbol=symbol, path=path))


async def refs(ctx: ToolContext, symbol: str, path: str = ".") -> dict[str, Any]:
    return await find_references(ctx, SymbolArgs(symbol=symbol, path=path))


def rows(result: dict[str, Any], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(m[k] for k in keys) for m in result["matches"]]


@pytest.mark.anyio
async def test_python_definitions_nested_classes_methods_and_same_name_in_two_places(
    ctx: ToolContext,
) -> None:
    result = await defs(ctx, "render", "pkg")
    assert rows(result, "path", "line", "kind", "container") == [
        ("pkg/models.py", 9, "method", "Widget.Part"),
        ("pkg/models.py", 12, "method", "Widget"),
        ("pkg/models.py", 29, "function", None),
    ]
    assert result["matches"][1]["signature"].startswith("def render(self, render=None):  #")
    assert result["matches"][0]["signature"] == "def render(self, depth=0):"
    assert result["matches"][0]["language"] == "python"
    assert result["truncated"] is False
    build = await defs(ctx, "build", "pkg")
    assert rows(build, "line", "kind", "container") == [(18, "method", "Widget")]  # decorated


@pytest.mark.anyio
async def test_qualified_symbols_narrow_to_the_container(ctx: ToolContext) -> None:
    assert rows(await defs(ctx, "Widget.Part.render"), "line") == [(9,)]
    assert rows(await defs(ctx, "Part.render"), "line") == [(9,)]
    assert rows(await defs(ctx, "Widget.render"), "line") == [(12,)]
    assert rows(await defs(ctx, "Server.Serve"), "path", "line") == [("srv/server.go", 9)]
    assert (await defs(ctx, "Nope.render"))["matches"] == []


@pytest.mark.anyio
async def test_python_references_calls_versus_mentions(ctx: ToolContext) -> None:
    result = await refs(ctx, "render", "pkg")
    assert rows(result, "path", "line", "is_call", "caller") == [
        ("pkg/models.py", 15, True, "Widget.render"),  # self.Part().render(depth=1)
        ("pkg/models.py", 30, True, "render"),  # widget.render()
        ("pkg/other.py", 1, False, None),  # the import
        ("pkg/other.py", 6, False, "main"),  # handler = render
        ("pkg/other.py", 7, True, "main"),  # render(w)
    ]  # not: docstrings, comments, strings, the `render=None` parameter, the definitions
    helper = await refs(ctx, "helper", "pkg/models.py")
    assert rows(helper, "line", "is_call", "caller") == [
        (10, True, "Widget.Part.render"),
        (24, True, "helper.inner"),
    ]
    assert helper["matches"][0]["text"] == "            return helper(depth)"
    assert helper["matches"][0]["column"] == 20


@pytest.mark.anyio
async def test_javascript_and_typescript_definitions(ctx: ToolContext) -> None:
    js = await defs(ctx, "render", "web/app.js")
    assert rows(js, "line", "kind", "container") == [
        (1, "function", None),
        (5, "method", "View"),
        (9, "method", None),  # an object literal's method
    ]
    arrows = [await defs(ctx, name, "web") for name in ("renderAll", "paint", "handler")]
    assert [rows(r, "line", "kind", "container") for r in arrows] == [
        [(2, "function", None)],
        [(3, "function", None)],
        [(7, "method", "View")],
    ]
    ts = await defs(ctx, "render", "web/types.ts")
    assert rows(ts, "line", "kind", "container") == [
        (1, "method", "Renderer"),
        (4, "method", "Base"),
        (6, "method", "Impl"),
    ]
    kinds = {s: rows(await defs(ctx, s, "web"), "kind") for s in ("Renderer", "RenderFn", "Mode")}
    assert kinds == {"Renderer": [("interface",)], "RenderFn": [("type",)], "Mode": [("enum",)]}
    assert rows(await defs(ctx, "Base"), "kind", "language") == [("class", "typescript")]
    assert rows(await defs(ctx, "Button"), "kind", "language") == [("function", "tsx")]


@pytest.mark.anyio
async def test_javascript_references(ctx: ToolContext) -> None:
    result = await refs(ctx, "render", "web/app.js")
    assert rows(result, "line", "is_call", "caller") == [
        (2, False, "renderAll"),  # passed as a value
        (3, True, "paint"),
        (5, True, "View.render"),
        (7, True, "View.handler"),  # this.render()
    ]
    views = await refs(ctx, "View", "web/app.js")
    assert rows(views, "line", "is_call", "caller") == [(6, True, "View.create")]  # new View()
    used = await refs(ctx, "Renderer", "web/types.ts")
    assert rows(used, "line", "is_call") == [(5, False), (8, False)]
    params = await refs(ctx, "x", "web/types.ts")  # parameters declare, they do not refer
    assert rows(params, "line", "is_call", "caller") == [(6, False, "Impl.render")]
    items = await refs(ctx, "items", "web/app.js")
    assert rows(items, "line", "column") == [(2, 30)]


@pytest.mark.anyio
async def test_go_types_functions_and_methods(ctx: ToolContext) -> None:
    names = ("Server", "Handler", "Alias", "List", "NewServer", "Serve", "Len")
    found = {s: rows(await defs(ctx, s, "srv"), "line", "kind", "container") for s in names}
    assert found == {
        "Server": [(3, "struct", None)],
        "Handler": [(4, "interface", None)],
        "Alias": [(5, "type", None)],
        "List": [(6, "type", None)],
        "NewServer": [(8, "function", None)],
        "Serve": [(4, "method", "Handler"), (9, "method", "Server")],
        "Len": [(11, "method", "List")],  # a generic receiver
    }
    callers = await refs(ctx, "NewServer", "srv")
    assert rows(callers, "line", "column", "is_call", "caller") == [
        (12, 19, True, "run"),
        (12, 62, True, "run"),  # inside a func literal: still run's
    ]
    serve = await refs(ctx, "Serve", "srv")
    assert rows(serve, "line", "is_call", "caller") == [(12, True, "run")]
    helper = await refs(ctx, "helper", "srv")
    assert rows(helper, "line", "is_call", "caller") == [(9, True, "Server.Serve")]


@pytest.mark.anyio
async def test_walk_respects_gitignore_and_lists_what_it_did_not_parse(
    ctx: ToolContext, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pkg" / "big.py").write_text("def render():\n    pass\n" + "# pad\n" * 400)
    size = (repo / "pkg" / "big.py").stat().st_size
    assert size > 1000
    monkeypatch.setattr(cg, "MAX_FILE_BYTES", 1000)
    result = await defs(ctx, "render")
    paths = {m["path"] for m in result["matches"]}
    assert "gen/models.py" not in paths
    assert ".git/HEAD" not in paths
    assert result["skipped"] == [
        {"path": "pkg/big.py", "reason": "larger than 1000 bytes", "bytes": size}
    ]
    assert result["skipped_total"] == 1
    assert result["syntax_errors"] == ["broken.py"]
    assert result["other_files"] == {  # a.txt, notes.txt, README.md, Makefile, .gitignore
        "count": 5,
        "by_extension": {".txt": 2, ".md": 1, "(no extension)": 2},
    }
    assert result["files_parsed_by_language"] == {
        "python": 3, "go": 1, "javascript": 1, "tsx": 1, "typescript": 1,
    }  # fmt: skip
    assert "not parsed" in result["note"]
    assert "syntax_errors" in result["note"]
    explicit = await defs(ctx, "render", "gen/models.py")  # a named file is read even if ignored
    assert rows(explicit, "path", "line") == [("gen/models.py", 1)]


@pytest.mark.anyio
async def test_caps_are_visible(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cg, "MAX_DEFINITIONS", 2)
    monkeypatch.setattr(cg, "MAX_REFERENCES", 1)
    d = await defs(ctx, "render")
    assert d["returned"] == 2
    assert d["total"] > 2
    assert d["truncated"] is True
    assert f"showing the first 2 of {d['total']} definitions" in d["note"]
    r = await refs(ctx, "render", "pkg")
    assert r["returned"] == 1
    assert r["total"] == 5
    assert r["truncated"] is True


@pytest.mark.anyio
async def test_timeout_seam(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cg, "CODEGRAPH_TIMEOUT", 0.0)
    result = await refs(ctx, "render")
    assert result["timed_out"] is True
    assert result["truncated"] is True
    assert "incomplete" in result["note"]


@pytest.mark.anyio
@pytest.mark.parametrize("bad", ["", "two words", "a..b", "x(", "1abc", 'q"uote'])
async def test_non_identifier_symbols_are_invalid_args(ctx: ToolContext, bad: str) -> None:
    with pytest.raises(ToolFailure) as info:
        await defs(ctx, bad)
    assert info.value.kind is Kind.INVALID_ARGS
    assert "not an identifier" in str(info.value)


@pytest.mark.anyio
async def test_missing_path_and_qualified_reference_note(ctx: ToolContext) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        await refs(ctx, "render", "nope")
    result = await refs(ctx, "Widget.render", "pkg")
    assert "matched by the name 'render' only" in result["note"]
    assert result["total"] == 5


def test_unreadable_files_are_listed_as_skipped(tmp_path: Path) -> None:
    root = Judged.of(tmp_path, tmp_path)
    event = cg.threading.Event()
    survey = cg._Survey(root, str(tmp_path), "x", None, "definitions", 10, event, 1e18)
    with judged.anchor(root) as survey.anchor_fd:
        survey.visit(str(tmp_path / "vanished.py"))
    assert survey.skipped == [
        {"path": "vanished.py", "reason": "unreadable: No such file or directory"}
    ]


@pytest.mark.anyio
async def test_bad_ignore_lines_are_reported(ctx: ToolContext, repo: Path) -> None:
    (repo / "pkg" / ".gitignore").write_text("[oops\n")
    result = await defs(ctx, "render", "pkg")
    assert any("unclosed character class" in e for e in result["errors"])


@pytest.mark.anyio
async def test_both_tools_through_the_adapter(repo: Path, home: Path) -> None:
    ctx = ToolContext(repo, make_surface(repo, home))
    adapter = Adapter(
        ctx, {"find_definitions": find_definitions, "find_references": find_references}
    )
    d = await adapter.call("find_definitions", json.dumps({"symbol": "Server"}))
    assert d.ok, d.content
    body = json.loads(d.content)
    assert rows(body, "path", "line", "kind") == [("srv/server.go", 3, "struct")]
    spec = adapter.surface.spec("find_definitions")
    assert spec is not None
    assert spec.result_paths_of(body) == ("srv/server.go",)
    r = await adapter.call("find_references", {"symbol": "helper", "path": "srv"})
    assert r.ok
    assert json.loads(r.content)["matches"][0]["caller"] == "Server.Serve"
    bad = await adapter.call("find_references", {"symbol": "not ok"})
    assert not bad.ok
    assert bad.kind is Kind.INVALID_ARGS


@pytest.mark.anyio
async def test_a_directory_swapped_for_a_link_after_the_check_is_not_read(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    """The ring judges `srv` (inside); before the walk, `srv` becomes a link to a sibling dir
    outside: no outside file is parsed, and each is listed as changed, not read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("def helper():  # OUTSIDE-SECRET\n    pass\n")

    async def swapped(ctx: ToolContext, args: Any) -> Any:
        (repo / "srv").rename(repo / "srv.old")
        (repo / "srv").symlink_to(outside)
        return await find_definitions(ctx, args)

    adapter = Adapter(ToolContext(repo, make_surface(repo, home)), {"find_definitions": swapped})
    res = await adapter.call("find_definitions", {"symbol": "helper", "path": "srv"})
    assert res.ok, res.content
    assert "OUTSIDE-SECRET" not in res.content
    body = json.loads(res.content)
    assert body["matches"] == []
    assert [s["reason"] for s in body["skipped"]] == [
        "changed after the check (a symbolic link on its way); not read"
    ]
