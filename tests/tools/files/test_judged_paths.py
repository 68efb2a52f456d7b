"""The file tools act on the path the ring judged — the same object, not a second resolution.

Every call goes through the real Adapter on the real surface, with nobody to ask: every question
is answered no. "Outside" is a sibling temp dir of the workspace. The swaps happen between the
judgement and the executor (the executor is wrapped), deterministically, by both the `openat2`
and the portable walk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.confine import beneath
from yagent.tools.adapter import Adapter, Executor, ToolContext
from yagent.tools.registry import executors
from yagent.tools.toolresult import ToolResult

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["openat2", "walk"])
def walk_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(beneath, "USE_OPENAT2", request.param == "openat2")
    return str(request.param)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("OUTSIDE-SECRET\n")
    return out


def adapter(workspace: Path, home: Path, before: Callable[[], None] | None = None) -> Adapter:
    """The real adapter; `before` runs after the judgement, right before each executor."""
    found = dict(executors())
    if before is not None:
        for name, run in list(found.items()):
            found[name] = _after(before, run)
    surface = make_surface(workspace, home, deferred=False)
    return Adapter(ToolContext(workspace, surface), found)


def _after(before: Callable[[], None], run: Executor) -> Executor:
    async def wrapped(ctx: ToolContext, args: Any) -> Any:
        before()
        return await run(ctx, args)

    return wrapped


def swap_to_link(path: Path, target: Path) -> Callable[[], None]:
    """Turn the directory `path` into a symbolic link to `target` (once)."""

    def swap() -> None:
        if not path.is_symlink():
            path.rename(path.with_name(path.name + ".old"))
            path.symlink_to(target)

    return swap


def retarget(link: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        tmp = link.with_name(link.name + ".tmp")
        tmp.symlink_to(target)
        tmp.replace(link)

    return swap


def body(res: ToolResult) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(res.content)
    return loaded


def assert_outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"


async def test_a_directory_turned_link_after_the_check_is_a_conflict(
    walk_mode: str, workspace: Path, home: Path, outside: Path
) -> None:
    real = workspace / "real"
    real.mkdir()
    (real / "secret.txt").write_text("inside\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": "real/pwn.txt", "content": "x"}),
        ("write_file", {"path": "real/secret.txt", "content": "x"}),
        (
            "search_replace_in_file",
            {"path": "real/secret.txt", "old_string": "O", "new_string": "0"},
        ),
        ("read_file", {"path": "real/secret.txt"}),
        ("list_dir", {"path": "real"}),
        ("print_dir_tree", {"path": "real"}),
    ]
    for name, args in calls:
        if real.is_symlink():
            real.unlink()
            (workspace / "real.old").rename(real)
        res = await adapter(workspace, home, swap_to_link(real, outside)).call(name, args)
        assert not res.ok, (name, res.content)
        assert body(res)["kind"] == "conflict", res.content
        assert "changed between the check and the use" in body(res)["error"]
        assert "OUTSIDE" not in res.content
        assert "secret.txt" not in json.dumps(body(res).get("entries"))
        assert_outside_untouched(outside)


async def test_the_executor_uses_the_resolution_that_was_judged(
    walk_mode: str, workspace: Path, home: Path, outside: Path
) -> None:
    """`d` points inside when judged and outside when used: the judged target is what is used."""
    inside = workspace / "inside"
    inside.mkdir()
    (inside / "secret.txt").write_text("inside\n")
    link = workspace / "d"
    link.symlink_to(inside)
    flip = retarget(link, outside)
    for name, args in [
        ("write_file", {"path": "d/pwn.txt", "content": "x"}),
        (
            "search_replace_in_file",
            {"path": "d/secret.txt", "old_string": "inside", "new_string": "Inside"},
        ),
        ("read_file", {"path": "d/secret.txt"}),
    ]:
        retarget(link, inside)()
        res = await adapter(workspace, home, flip).call(name, args)
        assert res.ok, res.content
        assert "OUTSIDE" not in res.content
        assert_outside_untouched(outside)
    assert (inside / "pwn.txt").read_text() == "x"
    assert (inside / "secret.txt").read_text() == "Inside\n"


async def test_links_out_ask_and_refusal_touches_nothing(
    walk_mode: str, workspace: Path, home: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (workspace / "sub").mkdir()
    a = adapter(workspace, home)
    for name, args in [
        ("write_file", {"path": "out/pwn.txt", "content": "x"}),
        ("write_file", {"path": "leak.txt", "content": "x"}),
        ("write_file", {"path": "sub/../../outside/pwn.txt", "content": "x"}),
        ("search_replace_in_file", {"path": "leak.txt", "old_string": "O", "new_string": "0"}),
        ("read_file", {"path": "leak.txt"}),
        ("read_file", {"path": "out/secret.txt"}),
        ("read_file", {"path": "sub/../../outside/secret.txt"}),
        ("list_dir", {"path": "out"}),
    ]:
        res = await a.call(name, args)
        assert not res.ok, (name, args)
        assert body(res)["kind"] == "needs_approval"  # nobody could be asked
        assert "outside the workspace" in body(res)["error"]
        assert "OUTSIDE-SECRET" not in res.content
    assert_outside_untouched(outside)


async def test_links_inside_the_workspace_still_work(
    walk_mode: str, workspace: Path, home: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to("real")
    a = adapter(workspace, home)
    res = await a.call("write_file", {"path": "alias/deep/f.txt", "content": "hi\n"})
    assert res.ok, res.content
    assert body(res)["path"] == "real/deep/f.txt"
    assert (workspace / "real" / "deep" / "f.txt").read_text() == "hi\n"
    res = await a.call("read_file", {"path": "alias/../alias/deep/f.txt"})
    assert res.ok
    assert "hi" in body(res)["content"]
    res = await a.call("print_dir_tree", {"path": ".", "max_depth": 3})
    assert res.ok
    assert "alias -> real" in body(res)["tree"]
    assert os.listdir(workspace / "real" / "deep") == ["f.txt"]  # no temporary file left


async def test_wrong_kinds_on_the_way_are_refused_plainly(
    walk_mode: str, workspace: Path, home: Path
) -> None:
    a = adapter(workspace, home)
    res = await a.call("write_file", {"path": "a.txt/inner.txt", "content": "x"})
    assert body(res)["kind"] == "invalid_args"
    assert "a parent of it is a file" in body(res)["error"]
    (workspace / "d").mkdir()
    res = await a.call(
        "search_replace_in_file", {"path": "d", "old_string": "a", "new_string": "b"}
    )
    assert body(res)["kind"] == "invalid_args"
    assert "is a directory" in body(res)["error"]
    res = await a.call("list_dir", {"path": "a.txt"})
    assert body(res)["kind"] == "invalid_args"
    assert "not a directory" in body(res)["error"]
