"""`app.fulldisk`: the first full-disk write seals the run's record and halts the run once;
later writes are skipped (the stored record stays a prefix); other failures propagate."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from yagent.app.fulldisk import FullDisk
from yagent.kernel.durable import sqlitefile
from yagent.kernel.durable.sideeffect import StoreError
from yagent.memory import StoreFullError


def sqlite_full() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    return exc


def test_disk_full_is_found_anywhere_in_the_cause_chain() -> None:
    outer = StoreError("sideeffect: transaction failed")
    outer.__cause__ = sqlite_full()  # what `raise StoreError(...) from exc` leaves
    assert sqlitefile.disk_full(outer)
    assert sqlitefile.disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert sqlitefile.disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not sqlitefile.disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not sqlitefile.disk_full(sqlite3.OperationalError("database is locked"))


def test_the_first_full_write_seals_and_halts_once(tmp_path: Path) -> None:
    halts: list[str] = []
    full = FullDisk(halts.append)
    written: list[int] = []
    assert full.write(tmp_path / "a.db", written.append, 1) is None
    assert written == [1]
    assert full.hit is None

    def fails() -> None:
        raise StoreFullError(str(tmp_path / "sessions.db")) from sqlite_full()

    assert full.write(tmp_path / "sessions.db", fails) is None
    assert full.hit is not None
    assert full.hit.path == str(tmp_path / "sessions.db")
    assert len(halts) == 1
    assert "sessions.db is full" in halts[0]
    full.write(tmp_path / "a.db", written.append, 2)
    assert written == [1], "a later write is not attempted: the record stays a prefix"
    assert full.skipped == 1
    assert full.note(tmp_path / "x", OSError(errno.ENOSPC, "again"))
    assert len(halts) == 1, "halted once"
    assert full.line("SID") == (
        f"yagent: the disk holding {tmp_path / 'sessions.db'} is full; free space and run "
        "`yagent resume SID`"
    )


def test_any_other_failure_propagates_and_seals_nothing(tmp_path: Path) -> None:
    full = FullDisk(lambda _: None)

    def fails() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError):
        full.write(tmp_path / "a.db", fails)
    assert full.hit is None
