"""`files.shellwatch`: what a command changed, found by comparing two bounded walks, journaled
with before-images where they were kept — and every bound said in the journal, never silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.tools.files import journal, shellwatch


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.txt").write_text("alpha\n")
    (root / "gone.txt").write_text("bye\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    return root


def test_changed_created_and_removed_files_are_journaled_with_their_images(
    tmp_path: Path, ws: Path
) -> None:
    state = tmp_path / "state"
    before = shellwatch.take(ws)
    (ws / "src" / "a.txt").write_text("ALPHA\n")
    (ws / "new.txt").write_text("fresh\n")
    (ws / "gone.txt").unlink()
    (ws / ".git" / "HEAD").write_text("moved\n")  # VCS data: not the workspace's files
    assert shellwatch.settle(state, "c1", "run_bash", before, ws) == 3
    edits = {e.path: e for e in journal.entries(state).edits}
    assert sorted(edits) == ["gone.txt", "new.txt", "src/a.txt"]
    changed, created, removed = edits["src/a.txt"], edits["new.txt"], edits["gone.txt"]
    assert changed.before is not None
    assert changed.before.read_bytes() == b"alpha\n"
    assert changed.after_sha256 == journal.digest(b"ALPHA\n")
    assert created.before is None
    assert created.before_kept
    assert removed.gone
    assert removed.before is not None
    assert removed.before.read_bytes() == b"bye\n"


def test_a_file_over_the_image_budget_is_marked_not_kept(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shellwatch, "IMAGE_FILE", 3)
    before = shellwatch.take(ws)
    (ws / "src" / "a.txt").write_text("ALPHA\n")
    shellwatch.settle(tmp_path / "state", "c1", "run_bash", before, ws)
    [edit] = journal.entries(tmp_path / "state").edits
    assert not edit.before_kept
    assert edit.before is None


def test_the_bounds_are_said_in_the_journal(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shellwatch, "MAX_CHANGES", 1)
    monkeypatch.setattr(shellwatch, "MAX_FILES", 2)
    (ws / "x.txt").write_text("x\n")
    before = shellwatch.take(ws)  # gone.txt and x.txt: src/a.txt is past the bound
    (ws / "gone.txt").write_text("changed\n")
    (ws / "x.txt").write_text("changed\n")
    shellwatch.settle(tmp_path / "state", "c1", "run_bash", before, ws)
    notes = [e.note for e in journal.entries(tmp_path / "state").edits if e.note]
    assert notes == [
        "1 more changed file(s) not recorded",
        "the workspace has over 2 files: changes past them were not checked",
    ]


def test_the_named_directory_is_not_walked(tmp_path: Path, ws: Path) -> None:
    home = ws / "home"
    home.mkdir()
    before = shellwatch.take(ws, home)
    (home / "sessions.db").write_text("written by yagent itself\n")
    assert shellwatch.settle(tmp_path / "state", "c1", "run_bash", before, ws, home) == 0


def test_the_next_take_reuses_only_images_of_files_unchanged_since(
    tmp_path: Path, ws: Path
) -> None:
    state = tmp_path / "state"
    before = shellwatch.take(ws, key=str(state))
    (ws / "new.txt").write_text("by the command\n")
    shellwatch.settle(state, "c1", "run_bash", before, ws)
    (ws / "src" / "a.txt").write_text("the person's\n")  # between two commands
    again = shellwatch.take(ws, key=str(state))
    assert again.images["src/a.txt"] == b"the person's\n"  # read again: its stat moved
    assert again.images["new.txt"] == b"by the command\n"  # what the command left
    assert again.images["gone.txt"] == b"bye\n"
