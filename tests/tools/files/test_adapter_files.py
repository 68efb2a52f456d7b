"""Each file tool driven once through the real Adapter on the real surface assembly: argument
validation, the guard chain, execution in a worker thread, json.dumps, failure classification,
and the paths the registry reads from the results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.registry import executors

pytestmark = pytest.mark.anyio


@pytest.fixture
def adapter(workspace: Path, home: Path) -> Adapter:
    surface = make_surface(workspace, home, deferred=False)
    return Adapter(ToolContext(workspace, surface), executors())


async def test_each_file_tool_through_the_adapter(adapter: Adapter, workspace: Path) -> None:
    res = await adapter.call("write_file", {"path": "pkg/m.py", "content": "x = 1\r\ny = 2\r\n"})
    assert res.ok
    assert json.loads(res.content)["action"] == "created"

    res = await adapter.call(
        "search_replace_in_file",
        json.dumps({"path": "pkg/m.py", "old_string": "x = 1\ny = 2", "new_string": "x = 3\nz"}),
    )
    body = json.loads(res.content)
    assert res.ok
    assert body["line_endings"] == "crlf-normalized"
    assert (workspace / "pkg" / "m.py").read_bytes() == b"x = 3\r\nz\r\n"

    res = await adapter.call("read_file", '{"path": "pkg/m.py"}')
    body = json.loads(res.content)
    assert res.ok
    assert body["content"] == "     1\tx = 3\r\n     2\tz\r"
    spec = adapter.surface.spec("read_file")
    assert spec is not None
    assert spec.result_paths is not None
    assert list(spec.result_paths(res.data)) == ["pkg/m.py"]

    res = await adapter.call("list_dir", "{}")
    assert res.ok
    assert json.loads(res.content)["entries"] == ["a.txt", "pkg/"]

    res = await adapter.call("print_dir_tree", '{"path": "pkg", "max_depth": 2}')
    assert res.ok
    assert json.loads(res.content)["tree"] == "pkg/\n  m.py"


async def test_failures_are_classified_for_the_model(adapter: Adapter) -> None:
    res = await adapter.call("read_file", '{"path": "missing.txt"}')
    body = json.loads(res.content)
    assert not res.ok
    assert body["kind"] == "not_found"
    assert "missing.txt: no such file" in body["error"]

    res = await adapter.call(
        "search_replace_in_file", {"path": "a.txt", "old_string": "absent", "new_string": "x"}
    )
    assert json.loads(res.content)["kind"] == "not_found"

    res = await adapter.call("read_file", '{"path": "a.txt", "offset": 0}')
    assert json.loads(res.content)["kind"] == "invalid_args"  # the model's schema check


async def test_outside_the_workspace_still_asks_first(adapter: Adapter, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    res = await adapter.call("write_file", {"path": str(outside), "content": "x"})
    assert not res.ok
    assert not outside.exists()
