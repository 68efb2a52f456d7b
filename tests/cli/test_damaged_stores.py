"""Issue 14, item 4: damaged and empty stores through the real `yagent` process — one line
naming the file and what to do, exit 2, no traceback, the file never written over; `yagent
doctor` checks integrity and writes a salvage copy."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from yagent.memory import SessionStore


def yagent(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "YAGENT_HOME": str(home), "COLUMNS": "400"}
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def refused(done: subprocess.CompletedProcess[str], name: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert name in lines[0]
    assert "yagent doctor --salvage" in lines[0]


@pytest.mark.parametrize("args", [["sessions"], ["resume", "abc"], ["run", "x"]])
def test_random_bytes_in_sessions_db_are_refused_in_one_line(
    world: tuple[Path, Path], args: list[str]
) -> None:
    home, ws = world
    junk = random.Random(1).randbytes(8192)
    (home / "sessions.db").write_bytes(junk)
    refused(yagent(home, ws, *args), "sessions.db")
    assert (home / "sessions.db").read_bytes() == junk, "never written over"


def test_an_empty_sessions_db_is_refused_not_reinitialised(world: tuple[Path, Path]) -> None:
    home, ws = world
    (home / "sessions.db").write_bytes(b"")
    done = yagent(home, ws, "sessions")
    refused(done, "sessions.db")
    assert "empty (0 bytes)" in done.stderr
    assert "no sessions yet" not in done.stdout
    assert (home / "sessions.db").stat().st_size == 0


@pytest.mark.parametrize("name", ["durable.db"])
def test_random_bytes_in_durable_db_are_refused_by_reconcile(
    world: tuple[Path, Path], name: str
) -> None:
    home, ws = world
    junk = random.Random(2).randbytes(8192)
    (home / name).write_bytes(junk)
    refused(yagent(home, ws, "reconcile"), name)
    assert (home / name).read_bytes() == junk


def test_doctor_checks_integrity_and_salvages_what_is_readable(world: tuple[Path, Path]) -> None:
    home, ws = world
    with SessionStore(home / "sessions.db") as store:
        for i in range(300):
            sid = store.create_session(workspace=str(ws), title=f"t{i}").id
            store.append_message(sid, {"role": "user", "content": "x" * 500})
    db = home / "sessions.db"
    with sqlite3.connect(db) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    data = bytearray(db.read_bytes())
    cut = (pages - 3) * 4096
    data[cut : cut + 4096] = random.Random(3).randbytes(4096)  # one page near the end
    db.write_bytes(bytes(data))
    checked = yagent(home, ws, "doctor")
    assert checked.returncode == 1
    assert "sessions.db" in checked.stdout
    assert "--salvage" in checked.stdout
    assert db.read_bytes() == bytes(data), "the check only reads"
    salvaged = yagent(home, ws, "doctor", "--salvage")
    assert "Traceback" not in salvaged.stderr
    [copy] = list(home.glob("sessions.db.salvage-*.db"))
    assert str(copy) in salvaged.stdout
    with sqlite3.connect(copy) as conn:
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert sessions > 100
    assert db.read_bytes() == bytes(data)
