"""The one atomic file write: all or nothing, permission bits kept or forced."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from yagent.tools.atomicfile import MISSING, atomic_write, read_json


def test_new_existing_and_forced_modes(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    assert atomic_write(target, b"one") is True
    target.chmod(0o640)
    assert atomic_write(target, b"two") is False
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # kept
    atomic_write(target, b"three", force_mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]  # no temp file left


def test_a_failed_write_leaves_the_target_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_read_json_missing_unreadable_and_broken(tmp_path: Path) -> None:
    assert read_json(tmp_path / "absent.json", ValueError, "the file") is MISSING
    (tmp_path / "ok.json").write_text('{"a": 1}')
    assert read_json(tmp_path / "ok.json", ValueError, "the file") == {"a": 1}
    (tmp_path / "dir.json").mkdir()  # a directory cannot be read as text
    with pytest.raises(ValueError, match="cannot read the file"):
        read_json(tmp_path / "dir.json", ValueError, "the file")
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ValueError, match="yagent trusts nothing, and will not overwrite it"):
        read_json(tmp_path / "bad.json", ValueError, "the file", " trusts nothing")
