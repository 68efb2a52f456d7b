"""list_dir and print_dir_tree: sorting, markers, visible caps, .gitignore semantics, depth."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.files.conftest import failure
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import listing as ls
from yagent.tools.files.listing import list_dir, print_dir_tree
from yagent.toolspec.params import DirTreeArgs, ListDirArgs

pytestmark = pytest.mark.anyio


def make(root: Path, *paths: str) -> None:
    for rel in paths:
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rel)


async def tree(ctx: ToolContext, path: str = ".", depth: int = 12) -> Any:
    return await print_dir_tree(ctx, DirTreeArgs(path=path, max_depth=depth))


def shown(result: dict[str, Any]) -> set[str]:
    """Tree entries as paths relative to the tree root, rebuilt from the indentation."""
    stack: list[str] = []
    out: set[str] = set()
    for line in result["tree"].split("\n")[1:]:
        if line.startswith("…"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2 - 1
        name = line.strip().split(" -> ")[0]
        stack[depth:] = [name.rstrip("/")]
        out.add("/".join(stack) + ("/" if name.endswith("/") else ""))
    return out


async def test_list_dir_sorted_with_dir_markers(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, "b.txt", "c/", "A.md", ".hidden", "c2/x")
    result = await list_dir(ctx, ListDirArgs(path="."))
    assert result["entries"] == [".hidden", "A.md", "a.txt", "b.txt", "c/", "c2/"]
    assert result["path"] == "."
    assert result["truncated"] is False
    assert result["count"] == result["total"] == 6


async def test_list_dir_cap_is_visible(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ls, "MAX_LIST_ENTRIES", 3)
    make(workspace, "e.txt", "d/", "c.txt", "b/")
    result = await list_dir(ctx, ListDirArgs(path="."))
    assert result["total"] == 5 > ls.MAX_LIST_ENTRIES
    assert result["entries"] == ["a.txt", "b/", "c.txt"]  # the first by name, not any three
    assert result["truncated"] is True
    assert "first 3 of 5 entries" in result["note"]


async def test_list_dir_refusals(ctx: ToolContext, workspace: Path) -> None:
    with pytest.raises(ToolFailure) as exc:
        await list_dir(ctx, ListDirArgs(path="a.txt"))
    assert "not a directory" in failure(exc, Kind.INVALID_ARGS)
    with pytest.raises(ToolFailure) as exc:
        await list_dir(ctx, ListDirArgs(path="nope"))
    assert "no such directory" in failure(exc, Kind.NOT_FOUND)
    with pytest.raises(ToolFailure) as exc:
        await tree(ctx, "nope")
    failure(exc, Kind.NOT_FOUND)


async def test_tree_format_and_depth(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, "src/pkg/mod.py", "src/top.py", "empty/")
    full = await tree(ctx)
    assert full["tree"] == "./\n  a.txt\n  empty/\n  src/\n    pkg/\n      mod.py\n    top.py"
    assert full["entries"] == 6
    assert full["depth_limited"] is False
    one = await tree(ctx, depth=1)
    assert one["tree"] == "./\n  a.txt\n  empty/\n  src/"
    assert one["depth_limited"] is True
    assert one["max_depth"] == 1
    sub = await tree(ctx, "src", depth=1)
    assert sub["tree"].split("\n")[0] == "src/"
    assert sub["path"] == "src"


async def test_tree_always_skips_git(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, ".git/HEAD", ".git/objects/x", "sub/.git", "sub/f.py")
    assert shown(await tree(ctx)) == {"a.txt", "sub/", "sub/f.py"}


async def test_tree_gitignore_semantics(ctx: ToolContext, workspace: Path) -> None:
    make(
        workspace,
        "app.log", "keep.log", "build/out.o", "src/build", "top.txt", "src/top.txt",
        "src/gen/x.py", "docs/a.md", "docs/b.md", "docs/deep/c.md",
    )  # fmt: skip
    (workspace / ".gitignore").write_text(
        "# comment\n*.log\n!keep.log\nbuild/\n/top.txt\n**/gen/\ndocs/*.md\n"
    )
    (workspace / "docs" / ".gitignore").write_text("!b.md\n")  # deeper file overrides
    result = await tree(ctx)
    assert shown(result) == {
        ".gitignore",
        "a.txt",
        "keep.log",  # negation
        "src/",
        "src/build",  # `build/` matches directories only
        "src/top.txt",  # `/top.txt` is anchored at the root
        "docs/",
        "docs/.gitignore",
        "docs/b.md",  # re-included by the nested .gitignore
        "docs/deep/",
        "docs/deep/c.md",  # `docs/*.md` does not reach below docs/
    }
    assert result["ignored"] == 5  # app.log, build/, top.txt, src/gen/, docs/a.md


async def test_tree_agrees_with_git(ctx: ToolContext, workspace: Path) -> None:
    make(
        workspace,
        "a/b/c.tmp", "a/b/d.txt", "a/keep.tmp", "x.tmp", "y/z/w.bak", "y/z/v.txt", "n/m/o.txt",
    )  # fmt: skip
    (workspace / ".gitignore").write_text("*.tmp\n!a/keep.tmp\n*.bak\nn/*\n")
    (workspace / "a" / ".gitignore").write_text("!b/c.tmp\nd.txt\n")
    await anyio.run_process(["git", "init", "-q", str(workspace)])
    listed = await anyio.run_process(
        ["git", "-C", str(workspace), "ls-files", "--others", "--exclude-standard"]
    )
    files = {p for p in shown(await tree(ctx)) if not p.endswith("/")}
    assert files == set(listed.stdout.decode().split())


async def test_tree_comment_only_gitignore_ignores_nothing(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("# nothing yet\n\n")
    assert shown(await tree(ctx)) == {".gitignore", "a.txt"}


async def test_tree_reads_gitignore_above_the_root(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, ".git/HEAD", "pkg/sub/mod.py", "pkg/sub/mod.pyc")
    (workspace / ".gitignore").write_text("*.pyc\n")
    assert shown(await tree(ctx, "pkg/sub")) == {"mod.py"}
    bare = workspace / "plain"  # no repository above: only the tree's own .gitignore files
    make(bare, "k.pyc")
    (workspace / ".git").rename(workspace / "dotgit")
    assert shown(await tree(ctx, "plain")) == {"k.pyc"}


async def test_tree_cap_is_visible(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ls, "MAX_TREE_ENTRIES", 4)
    make(workspace, "d1/f1", "d1/f2", "d1/f3", "z.txt")
    result = await tree(ctx)
    assert result["entries"] == 4 < 6  # 6 entries exist
    assert result["truncated"] is True
    assert result["tree"].endswith("\n… [truncated: showing the first 4 entries]")
    assert shown(result) == {"a.txt", "d1/", "d1/f1", "d1/f2"}


async def test_tree_symlinks_shown_not_followed(ctx: ToolContext, workspace: Path) -> None:
    make(workspace, "real/inner.txt")
    (workspace / "loop").symlink_to(".")
    (workspace / "real" / "up").symlink_to("..")
    result = await tree(ctx)
    assert "  loop -> ." in result["tree"].split("\n")
    assert shown(result) == {"a.txt", "loop", "real/", "real/inner.txt", "real/up"}


async def test_tree_unreadable_directory_is_not_expanded(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(workspace, "locked/secret.txt")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        # The walk lists through descriptors: name the directory behind one by /proc.
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else str(path)
        if where.endswith("locked"):
            raise PermissionError("denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert shown(await tree(ctx)) == {"a.txt", "locked/"}
