"""sqlitefile: a SQLite file's life outside its stores — created whole, judged, salvaged.

Guarantees:
- `create(path)` makes a new database file that is never seen empty: it is built under a
  private temporary name in the same directory (owner-only permissions, WAL header written) and
  linked into place atomically; when another process won the race, its file is used. An
  existing file of 0 bytes is refused (`UnusableFileError`): it was truncated, and opening it
  would silently start an empty store over what it held.
- `probe(path)` is `create` plus a cheap read of the schema: `UnusableFileError` for a file that
  is not a readable database at all. Read-only.
- `check(path)` opens the file read-only and runs `PRAGMA quick_check`: "ok", or what is wrong.
  It never writes to the file.
- `salvage(path, dest)` copies what can still be read — the schema, then every table row by row
  until its first unreadable page — into a new file `dest`, and reports what it copied and what
  it could not. The damaged file is only read.
- `disk_full(exc)` says whether an error — or anything in its cause chain, so a store's own error
  raised `from` SQLite's counts — is the disk (or the quota) being full: SQLITE_FULL, ENOSPC,
  EDQUOT. SQLite rolls such a transaction back whole; what a failed plain file write left is the
  writer's business.
Refuses: to overwrite an existing `dest` (`FileExistsError`). Leaves to the host: when to check,
where salvage copies go, and what to tell a person.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path


class UnusableFileError(Exception):
    """The file is not a usable SQLite database (empty, damaged, or not one); it was left as is."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(f"{os.fspath(path)!r} {why}; it was not modified")
        self.path = os.fspath(path)
        self.why = why


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def disk_full(exc: BaseException) -> bool:
    """True when `exc` or one of its causes says the disk (or the quota) is full."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error) and (
            getattr(current, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        ):
            return True
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return True
        current = current.__cause__ or current.__context__
    return False


def create(path: str | os.PathLike[str]) -> None:
    """An initialised (header-only) database at `path`, unless one is there (see the contract)."""
    target = Path(path)
    if target.exists():
        if target.stat().st_size == 0:
            raise UnusableFileError(target, "is empty (0 bytes): it was truncated")
        return
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.new")
    os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    try:
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        with contextlib.suppress(FileExistsError):  # another process created it first
            os.link(temp, target)
    finally:
        for leftover in (temp, *(Path(f"{temp}{s}") for s in ("-wal", "-shm"))):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def probe(path: str | os.PathLike[str]) -> None:
    """Cheaply (its schema only, read-only) refuse a file that is not a readable database."""
    create(path)
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise UnusableFileError(path, f"is not a readable SQLite database ({exc})") from exc


def check(path: str | os.PathLike[str]) -> str:
    """'ok', or what `PRAGMA quick_check` (or opening the file at all) found wrong."""
    where = Path(path)
    if where.stat().st_size == 0:
        return "empty (0 bytes): it was truncated"
    try:
        conn = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return f"cannot be opened: {exc}"
    try:
        rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as exc:
        return f"not a readable SQLite database: {exc}"
    finally:
        conn.close()
    return "ok" if rows == ["ok"] else "; ".join(rows[:5])


@dataclass
class Salvage:
    """What `salvage` copied: rows per table, and what it could not read."""

    dest: str
    rows: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def salvage(path: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Salvage:
    """Copy what is readable of `path` into the new file `dest` (see the contract)."""
    out = Path(dest)
    os.close(os.open(out, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    report = Salvage(os.fspath(out))
    source = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(out, isolation_level=None)
    try:
        try:
            schema = source.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                " AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index'"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            report.problems.append(f"the schema is unreadable ({exc}): nothing could be copied")
            return report
        target.execute("BEGIN")
        for kind, name, sql in schema:
            try:
                target.execute(sql)
            except sqlite3.Error as exc:
                report.problems.append(f"{kind} {name}: not recreated ({exc})")
                continue
            if kind == "table":
                report.rows[name] = _copy_rows(source, target, name, report.problems)
        target.execute("COMMIT")
    finally:
        source.close()
        target.close()
    return report


def _copy_rows(
    source: sqlite3.Connection, target: sqlite3.Connection, table: str, problems: list[str]
) -> int:
    copied = 0
    quoted = '"' + table.replace('"', '""') + '"'
    try:
        for row in source.execute(f"SELECT * FROM {quoted}"):
            marks = ", ".join("?" * len(row))
            target.execute(f"INSERT OR IGNORE INTO {quoted} VALUES ({marks})", row)
            copied += 1
    except sqlite3.DatabaseError as exc:
        problems.append(f"table {table}: stopped after {copied} rows ({exc})")
    return copied
