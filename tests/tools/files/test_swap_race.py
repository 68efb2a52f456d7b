"""The swap race of issue 13, item 1, with a real background process.

A separate process flips the symbolic link `ws/d` between a directory inside the workspace and a
sibling temp dir outside it, as fast as it can, while hundreds of file-tool calls name `d/…`
through the real Adapter and judgement ring with nobody to ask (every question is answered no).
Whatever the interleaving, nothing may be written outside, outside content may not change, and no
outside content may be returned. Each call is judged inside (and then acts there), judged outside
(refused), or finds the path changed (a conflict) — never anything else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import make_surface
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.registry import executors

pytestmark = pytest.mark.anyio

CALLS = 300
OUTSIDE_TEXT = "OUTSIDE-SECRET A\n"
INSIDE_TEXT = "inside A\n"

FLIPPER = """
import os, sys
link, inside, outside = sys.argv[1:4]
tmp = link + ".flip"
sys.stdout.write("r")
sys.stdout.flush()
while True:
    for target in (inside, outside):
        try:
            os.symlink(target, tmp)
        except FileExistsError:
            os.unlink(tmp)
            os.symlink(target, tmp)
        os.replace(tmp, link)
"""


@pytest.fixture
def sides(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    inside, outside = workspace / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "t.txt").write_text(INSIDE_TEXT)
    (outside / "t.txt").write_text(OUTSIDE_TEXT)
    (workspace / "d").symlink_to(inside)
    return inside, outside


@pytest.fixture
def flipper(workspace: Path, sides: tuple[Path, Path]) -> Iterator[None]:
    inside, outside = sides
    args = [str(workspace / "d"), str(inside), str(outside)]
    proc = subprocess.Popen([sys.executable, "-c", FLIPPER, *args], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.read(1) == b"r", "the flipper did not start"  # its loop runs next
        yield
        assert proc.poll() is None, "the flipper stopped before the calls ended"
    finally:
        proc.kill()
        proc.wait()


def refusing_adapter(workspace: Path, home: Path) -> Adapter:
    """Nobody to ask: every authorization question is answered no."""
    surface = make_surface(workspace, home, deferred=False)
    return Adapter(ToolContext(workspace, surface), executors())


def outcome(content: str, ok: bool) -> str:
    if ok:
        return "ok"
    body: dict[str, Any] = json.loads(content)
    return str(body["kind"])


def assert_outside_intact(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["t.txt"]
    assert (outside / "t.txt").read_text() == OUTSIDE_TEXT


async def test_writes_never_land_outside(
    workspace: Path, home: Path, sides: tuple[Path, Path], flipper: None
) -> None:
    inside, outside = sides
    a = refusing_adapter(workspace, home)
    seen: Counter[str] = Counter()
    for i in range(CALLS):
        res = await a.call("write_file", {"path": f"d/pwn{i}.txt", "content": "x"})
        seen[outcome(res.content, res.ok)] += 1
    assert_outside_intact(outside)
    assert set(seen) <= {"ok", "needs_approval", "conflict"}, seen
    assert seen["ok"] == len(list(inside.glob("pwn*.txt")))
    assert seen["ok"], f"the race did not happen: {seen}"
    assert seen["needs_approval"], f"the race did not happen: {seen}"


async def test_edits_never_change_outside(
    workspace: Path, home: Path, sides: tuple[Path, Path], flipper: None
) -> None:
    _, outside = sides
    a = refusing_adapter(workspace, home)
    seen: Counter[str] = Counter()
    for i in range(CALLS):
        old, new = ("A", "B") if i % 2 == 0 else ("B", "A")
        args = {"path": "d/t.txt", "old_string": old, "new_string": new}
        res = await a.call("search_replace_in_file", args)
        assert "OUTSIDE" not in res.content
        seen[outcome(res.content, res.ok)] += 1
    assert_outside_intact(outside)
    assert set(seen) <= {"ok", "needs_approval", "conflict", "not_found"}, seen
    assert seen["ok"], f"the race did not happen: {seen}"
    assert seen["needs_approval"], f"the race did not happen: {seen}"


async def test_reads_never_return_outside_content(
    workspace: Path, home: Path, sides: tuple[Path, Path], flipper: None
) -> None:
    _, outside = sides
    a = refusing_adapter(workspace, home)
    seen: Counter[str] = Counter()
    for _ in range(CALLS):
        res = await a.call("read_file", {"path": "d/t.txt"})
        assert "OUTSIDE" not in res.content
        if res.ok:
            assert "inside A" in json.loads(res.content)["content"]
        seen[outcome(res.content, res.ok)] += 1
    assert_outside_intact(outside)
    assert set(seen) <= {"ok", "needs_approval", "conflict"}, seen
    assert seen["ok"], f"the race did not happen: {seen}"
    assert seen["needs_approval"], f"the race did not happen: {seen}"
