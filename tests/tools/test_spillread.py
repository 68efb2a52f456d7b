"""The read_spill executor through the Adapter: paging, clamping and classified failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.context.spill import Spill
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.spillread import DEFAULT_SESSION, spill_session

TEXT = "".join(f"line {n}\n" for n in range(1, 26))


def adapter(workspace: Path, home: Path, store: Spill | None, session: str = "s1") -> Adapter:
    ctx = ToolContext(workspace, make_surface(workspace, home), session_id=session, spill=store)
    return Adapter(ctx, registry.executors())


def stored(tmp_path: Path, session: str = "s1") -> tuple[Spill, str]:
    store = Spill(tmp_path / "spill", limit=20, page_size=10, page_cap=10)
    spilled = store.offer(session, TEXT)
    assert spilled.locator is not None
    return store, spilled.locator


@pytest.mark.anyio
async def test_pages_come_back_with_their_range_and_the_next_page(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    store, locator = stored(tmp_path)
    result = await adapter(workspace, home, store).call(
        "read_spill", json.dumps({"locator": locator, "page": 2, "count": 10})
    )
    assert result.ok, result.content
    body = json.loads(result.content)
    assert body["text"] == "".join(f"line {n}\n" for n in range(11, 21))
    assert body["lines"] == "11-20"
    assert body["total_lines"] == 25
    assert body["next"] == {"page": 3, "count": 10}
    assert "clamped" not in body
    last = await adapter(workspace, home, store).call(
        "read_spill", json.dumps({"locator": locator, "page": 3, "count": 50})
    )
    tail = json.loads(last.content)
    assert tail["lines"] == "21-25"
    assert tail["has_more"] is False
    assert "next" not in tail
    assert tail["clamped"] == "count clamped to the cap 10"
    beyond = await adapter(workspace, home, store).call(
        "read_spill", json.dumps({"locator": locator, "page": 9})
    )
    assert json.loads(beyond.content)["lines"] == "none"


@pytest.mark.anyio
async def test_failures_are_classified(workspace: Path, home: Path, tmp_path: Path) -> None:
    store, locator = stored(tmp_path)
    unsafe = await adapter(workspace, home, store).call(
        "read_spill", json.dumps({"locator": "../../etc/passwd"})
    )
    assert json.loads(unsafe.content)["kind"] == "invalid_args"
    unknown = await adapter(workspace, home, store).call(
        "read_spill", json.dumps({"locator": "sp-0000"})
    )
    assert json.loads(unknown.content)["kind"] == "not_found"
    assert "cleaned up" in json.loads(unknown.content)["error"]
    other = await adapter(workspace, home, store, session="s2").call(
        "read_spill", json.dumps({"locator": locator})
    )
    assert json.loads(other.content)["kind"] == "not_found", "another session's outputs"
    none = await adapter(workspace, home, None).call("read_spill", json.dumps({"locator": locator}))
    assert json.loads(none.content)["kind"] == "not_found"


def test_a_run_without_a_session_uses_the_default_key(workspace: Path, home: Path) -> None:
    ctx = ToolContext(workspace, make_surface(workspace, home))
    assert spill_session(ctx) == DEFAULT_SESSION
