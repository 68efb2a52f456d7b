"""Malformed paths against the real product: a `yagent run --json -y` process (real bubblewrap)
against a scripted OpenAI-compatible server on loopback.

A NUL byte in a path (`a.txt\\0/../../outside`), a path longer than the system takes, one
component over 255 bytes, for every file tool: each is the model's bad argument — an
`invalid_args` failure naming the problem, which tells the model to fix its arguments, never an
"unclassified" failure or a traceback — and nothing outside the workspace is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_attacks_floods import run
from tests.e2e.test_attacks_shapes import cleaned

__all__ = ["cleaned"]  # the fixture: a deep tree a regression leaves is removed with GNU rm

SECRET = "OUTSIDE-5e0c"


def test_malformed_paths_are_the_models_bad_arguments(cleaned: Path) -> None:
    tmp_path = cleaned
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "s.txt").write_text(SECRET + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    nul = "a.txt\x00/../../outside/s.txt"
    deep = "d/" * 3000 + "a.txt"
    wide = "a" * 300
    batch: list[tuple[str, dict[str, Any]]] = []
    for path in (nul, deep, wide):
        batch += [
            ("read_file", {"path": path}),
            ("write_file", {"path": path, "content": "x"}),
            ("list_dir", {"path": path}),
            ("search", {"pattern": "x", "path": path}),
        ]
    sent, results = run(tmp_path, ws, batch)
    for call, result in zip(batch, results, strict=False):
        body = json.loads(result["content"])
        assert body["kind"] == "invalid_args", (call[0], body)
        assert "Traceback" not in body["error"]
        assert SECRET not in result["content"]
    assert (ws / "a.txt").read_text() == "hello\n"
    assert all(SECRET not in json.dumps(b) for b in sent)
    deepest = max((len(p.relative_to(ws).parts) for p in ws.rglob("*")), default=0)
    assert deepest <= 1, "a refused write created no directories"
