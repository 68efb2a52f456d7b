"""A store that cannot be opened is not a damaged one: a healthy session store in a directory
SQLite may not write beside it in (a read-only bind mount: bubblewrap, so it holds for root
too) raises `StoreUnavailableError` naming the file, never `DamagedStoreError` — and the file is
not modified. A file that is not a database is still called damaged."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import yagent as yagent_package
from yagent.memory import DamagedStoreError, SessionStore, schema

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
BWRAP = shutil.which("bwrap")
PROBE = """
import json, sys
from yagent.memory import SessionStore
try:
    SessionStore(sys.argv[1]).close()
    print(json.dumps({"opened": True}))
except Exception as exc:
    print(json.dumps({"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__],
                      "text": str(exc), "path": getattr(exc, "path", None)}))
"""


def _open_read_only(store: Path) -> dict[str, object]:
    assert BWRAP is not None, "bwrap is installed (scripts/setup-system.sh)"
    folder = str(store.parent)
    env = dict(os.environ, PYTHONPATH=SRC)
    mounts = [BWRAP, "--dev-bind", "/", "/", "--ro-bind", folder, folder]
    done = subprocess.run(
        [*mounts, sys.executable, "-c", PROBE, str(store)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    said: dict[str, object] = json.loads(done.stdout)
    return said


def test_a_healthy_store_in_a_read_only_directory_is_unavailable_not_damaged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home" / "sessions.db"
    store = SessionStore(path)
    store.create_session(workspace="/w", title="t", model="m", meta={})
    store.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    said = _open_read_only(path)
    assert said.get("type") == "StoreUnavailableError", said
    assert "DamagedStoreError" not in said["mro"]  # type: ignore[operator]
    assert said["path"] == str(path)
    assert "unable to open database file" in str(said["text"])
    assert "damaged" not in str(said["text"])
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert len(SessionStore(path).list_sessions()) == 1  # writable again: all there


def test_a_file_that_is_not_a_database_is_still_damaged(tmp_path: Path) -> None:
    import sqlite3

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(DamagedStoreError):
        schema.read_version(sqlite3.connect(junk), str(junk))
