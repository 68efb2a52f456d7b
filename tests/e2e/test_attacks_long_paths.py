"""A path too long to resolve is not "not `.git`": a real `yagent run --json -y` (default preset,
real bubblewrap) against a scripted OpenAI-compatible server on loopback.

The workspace holds real directories nested past `PATH_MAX` (4096 bytes) and, at the bottom, a
link back to the repository's `.git`. `realpath` cannot look at a component past that length, so
it keeps the link as a plain name and the path looked like an ordinary workspace file: the
`.git` protection (asked whatever stands) did not see it. Now a path argument that cannot be
resolved is refused outright, saying why, and no hook is planted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.test_attacks_escapes import _run

SEGMENT = "d" * 200
LEVELS = 25  # 25 × 201 bytes: past PATH_MAX


def _deep_link_to_git(work: Path) -> str:
    """Real directories nested past PATH_MAX with a link to `.git` at the bottom; the path to
    the hooks directory through it, relative to the workspace."""
    fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(LEVELS):
            os.mkdir(SEGMENT, dir_fd=fd)
            inner = os.open(SEGMENT, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.symlink("../" * LEVELS + ".git", "g", dir_fd=fd)
    finally:
        os.close(fd)
    return "/".join([SEGMENT] * LEVELS) + "/g/hooks"


def test_a_path_too_long_to_resolve_is_refused_not_taken_for_a_plain_file(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    hooks = _deep_link_to_git(work)
    assert len(hooks) > 4096
    hook = "#!/bin/sh\necho PWNED\n"
    batch: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": f"{hooks}/pre-commit", "content": hook}),
        ("write_file", {"path": f"{work}/{hooks}/post-merge", "content": hook}),
        ("search_replace_in_file", {"path": f"{hooks}/../config", "old_string": "[core]",
                                    "new_string": "[core]\n\tfsmonitor = echo PWNED"}),
    ]  # fmt: skip
    try:
        _sent, results = _run(tmp_path, work, batch, yes=True)
    finally:  # a tree past PATH_MAX is not left for the shared temp root's cleaners
        shutil.rmtree(work / SEGMENT)
    for (_tool, args), result in zip(batch, results, strict=False):
        assert result["ok"] is False, (args["path"][-40:], result)
        assert "too long to resolve" in result["content"], result["content"][-600:]
    found = {p.name for p in (work / ".git" / "hooks").iterdir() if not p.name.endswith(".sample")}
    assert found == set()
    assert "PWNED" not in (work / ".git" / "config").read_text()
