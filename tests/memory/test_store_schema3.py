"""A session store file written by the code before the store moved onto
`kernel.durable.sqlitedb`'s core (schema 3, its checked-in fixture and that code's own export of it)
opens and reads the same."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from yagent.memory import SessionStore, latest_version

DATA = Path(__file__).parent / "data"
SCHEMA_3 = DATA / "sessions_schema3.db"  # written by the store's own connection layer
EXPORTED = DATA / "sessions_schema3.json"  # that code's export_session of its one session


def test_a_file_written_before_the_move_reads_the_same_and_takes_new_writes(tmp_path: Path):
    path = tmp_path / "sessions.db"
    shutil.copyfile(SCHEMA_3, path)
    expected = json.loads(EXPORTED.read_text())
    with SessionStore(path) as store:
        info = store.session_by_key("batch/task")
        assert info is not None
        assert store.export_session(info.id) == expected
        assert store.append_message(info.id, {"role": "user", "content": "go on"}) == 3
        with store.batch():
            store.append_event(info.id, "after", {})
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(latest_version(),)]
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        raw.close()
