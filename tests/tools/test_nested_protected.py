"""Nested repositories and tool configuration are protected like the root's (issue 13, item 3).

Through the real judgement ring under -Y (every standing permission granted): a file tool writing
into any `.git` (directory or gitfile, any depth, any case) or `.yagent`, or writing a
`.gitmodules`, `.gitattributes` or `.envrc` anywhere, is asked every time — the person says no
and nothing is written. In the sandbox, every nested `.git` / `.yagent` is read-only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.tools.yolo import Yolo

from .test_command_chain import Harness, answering, bash, home, nobody, text, ws

__all__ = ["home", "ws"]  # the fixtures, shared with the command-chain tests

ASKED = [
    "vendor/lib/.git/hooks/post-checkout",
    "vendor/lib/.GIT/hooks/post-checkout",
    "a/b/c/d/.git/config",
    "sub/.git",
    "tools/x/.yagent/shell-rules.toml",
    "tools/x/.YAGENT/config.toml",
    ".gitmodules",
    "vendor/lib/.gitmodules",
    ".gitattributes",
    "docs/.GitAttributes",
    ".envrc",
    "svc/.envrc",
]


@pytest.mark.anyio
@pytest.mark.parametrize("target", ASKED)
async def test_writing_a_nested_protected_path_is_asked_even_under_y(
    ws: Path, home: Path, target: str
) -> None:
    (ws / "vendor" / "lib" / ".git" / "hooks").mkdir(parents=True)
    h = Harness(ws, home, yolo=Yolo.FULL)
    [res] = await h.run(answering(False), ("write_file", {"path": target, "content": "evil"}))
    assert not res.ok
    assert h.questions
    assert "protected path" in h.questions[-1]["reason"]
    assert not (ws / target).exists() or (ws / target).is_dir()


@pytest.mark.anyio
async def test_ordinary_files_of_a_nested_repository_are_not_asked(ws: Path, home: Path) -> None:
    (ws / "vendor" / "lib" / ".git").mkdir(parents=True)
    h = Harness(ws, home, yolo=Yolo.FULL)
    calls = [
        ("write_file", {"path": "vendor/lib/code.py", "content": "x = 1\n"}),
        ("write_file", {"path": "notes/.gitignore", "content": "*.o\n"}),
        ("write_file", {"path": "src/git_helpers.py", "content": "y = 2\n"}),
    ]
    results = await h.run(nobody, *calls)
    assert all(r.ok for r in results), [r.content for r in results]
    assert not h.questions


@pytest.mark.anyio
async def test_the_sandbox_keeps_every_nested_git_read_only(ws: Path, home: Path) -> None:
    hooks = ws / "vendor" / "lib" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (ws / "pkg" / ".yagent").mkdir(parents=True)
    h = Harness(ws, home, yolo=Yolo.YOLO)
    [res] = await h.run(
        nobody,
        bash(
            "echo evil > vendor/lib/.git/hooks/post-checkout; echo evil > pkg/.yagent/x; "
            "echo fine > vendor/lib/code.py"
        ),
    )
    assert text(res).count("Read-only file system") == 2, text(res)
    assert not (hooks / "post-checkout").exists()
    assert not (ws / "pkg" / ".yagent" / "x").exists()
    assert (ws / "vendor" / "lib" / "code.py").read_text() == "fine\n"
