"""Project and user memories: the files, exact scopes, drops reported, the band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.app.memories import GLOBAL, PROJECT, MemoryFileError, files, inject
from yagent.kernel.context import reminder


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    return home, workspace


def write(path: Path, items: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"memories": items}))


def test_add_writes_a_tagged_item_in_the_right_file(places: tuple[Path, Path]) -> None:
    home, workspace = places
    project, user = files(home, workspace)
    item = project.add("  use tabs  ", now=100.0)
    assert item["text"] == "use tabs"
    assert item["source"] == "user"
    assert item["scope"] == PROJECT
    assert item["at"] == 100.0
    assert item["id"].startswith("mem-")
    assert project.path == workspace / ".yagent" / "memory.json"
    user.add("answer in English")
    assert [m.scope for m in user.load()] == [GLOBAL]
    assert [m.text for m in project.load()] == ["use tabs"]
    with pytest.raises(MemoryFileError, match="needs some text"):
        project.add("  ")


def test_a_broken_file_is_refused_for_writing_and_reported_for_reading(
    places: tuple[Path, Path],
) -> None:
    home, workspace = places
    project, _ = files(home, workspace)
    project.path.parent.mkdir(parents=True)
    project.path.write_text("{not json")
    with pytest.raises(MemoryFileError, match="not valid JSON"):
        project.add("x")
    assert project.path.read_text() == "{not json", "never overwritten"
    injected = inject(home, workspace)
    assert injected.text == ""
    assert "not valid JSON" in injected.problems[0]
    assert injected.worth_reporting
    project.path.write_text("[]")
    with pytest.raises(MemoryFileError, match="expected"):
        project.load()
    project.path.unlink()
    project.path.mkdir()
    with pytest.raises(MemoryFileError, match="cannot read"):
        project.load()


def test_injection_matches_each_file_exactly_and_reports_drops(places: tuple[Path, Path]) -> None:
    home, workspace = places
    project, user = files(home, workspace)
    write(
        project.path,
        [
            {"id": "p1", "text": "run make check", "source": "user", "at": 10, "scope": "project"},
            {"id": "p2", "text": "a guess", "at": 11, "scope": "project"},
            {"id": "g9", "text": "misfiled", "source": "user", "at": 12, "scope": "global"},
            {"id": "p3", "text": "old", "source": "user", "at": 1, "scope": "project"},
            {"id": "p3", "text": "new", "source": "user", "at": 2, "scope": "project"},
            "not an object",
            {"text": "no id", "source": "user", "at": 3, "scope": "project"},
        ],
    )
    write(
        user.path, [{"id": "g1", "text": "be brief", "source": "user", "at": 5, "scope": "global"}]
    )
    injected = inject(home, workspace)
    event = injected.event()
    assert event["injected"] == ["p1", "p3", "g1"]
    reasons = {(d["id"], d["reason"]) for d in event["dropped"]}
    assert ("p2", "no_source") in reasons
    assert ("p3", "superseded") in reasons
    assert "entry 6 is not an object" in event["problems"][0]
    assert ("", "no_id") in reasons
    assert event["out_of_scope"] == 1, "a global item in the project file is not promoted"
    assert event["scopes"] == ["project", "global"]
    body = reminder.unwrap(injected.text) or ""
    assert '<memory id="p1" source="user"' in body
    assert "misfiled" not in body
    assert "new" in body
    assert "old" not in body


def test_the_budget_is_shared_and_trimming_is_said(places: tuple[Path, Path]) -> None:
    home, workspace = places
    project, user = files(home, workspace)
    write(
        project.path,
        [{"id": "p", "text": "p" * 400, "source": "user", "at": 1, "scope": "project"}],
    )
    write(user.path, [{"id": "g", "text": "g" * 400, "source": "user", "at": 1, "scope": "global"}])
    injected = inject(home, workspace, limit=150)
    assert injected.event()["injected"] == ["p"]
    assert injected.injection.trimmed == 1
    assert "did not fit the budget" in (reminder.unwrap(injected.text) or "")


def test_no_files_no_band(places: tuple[Path, Path]) -> None:
    home, workspace = places
    injected = inject(home, workspace)
    assert injected.text == ""
    assert not injected.worth_reporting
