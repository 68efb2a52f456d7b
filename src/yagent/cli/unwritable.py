"""A directory yagent must write in and cannot — a read-only or foreign-owned `YAGENT_HOME`, a
read-only workspace's `.yagent/` — said in one line (exit 2) instead of a traceback or a wrong
diagnosis.

Contract:
- `blocked(exc)` finds, in `exc` or its causes, a write the file system refused: an `OSError`
  EACCES, EPERM or EROFS, or SQLite unable to open or write a store (SQLITE_CANTOPEN,
  SQLITE_READONLY, SQLITE_PERM) whose file or directory is in fact not writable. It returns the
  place to name — the directory when the directory cannot be written (never a temporary file's
  name), else the file — and why (read-only file system / permission denied). None otherwise: a
  store that cannot be opened in a writable directory is left to its own diagnosis.
- A store in a read-only directory is not damaged and is never called so: the command's refusal
  checks `blocked` before its damaged-store advice (`cli.root`).
- `line(place, why, home)` says what happened and what to do; a place in the yagent home, or
  one it would be created in, names `YAGENT_HOME`. Nothing is retried or created elsewhere:
  where to write is the person's choice.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_DENIED_WHY = "permission denied"
_SQLITE_CODES = frozenset({sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _why(directory: Path) -> str:
    try:
        read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "read-only file system" if read_only else _DENIED_WHY


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def refusing(target: Path) -> tuple[Path, str] | None:
    """The directory (or, in a writable one, the file) that refuses writes to `target`, and why;
    None if none does (`yagent doctor` asks it of the home before anything has to write)."""
    directory = target if target.is_dir() else target.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent  # not created yet: its nearest existing ancestor refuses
    if not _writable(directory):
        return directory, _why(directory)
    if target.exists() and not target.is_dir() and not _writable(target):
        return target, _why(directory)
    return None


def blocked(exc: BaseException) -> tuple[Path, str] | None:
    """Where a write was refused, and why, when `exc` (or a cause) is such a refusal."""
    store: str | None = None  # the store a SQLite error is about, from an outer error's `path`
    for current in _chain(exc):
        named = getattr(current, "path", None)
        if isinstance(named, str | os.PathLike) and store is None:
            store = os.fspath(named)
        if isinstance(current, OSError) and current.errno in _REFUSED:
            if current.filename is None:
                continue
            target = Path(os.fsdecode(current.filename))
            reason = "read-only file system" if current.errno == errno.EROFS else _DENIED_WHY
            return refusing(target) or (target, reason)
        code = getattr(current, "sqlite_errorcode", None)
        refused = isinstance(code, int) and code & 0xFF in _SQLITE_CODES
        if isinstance(current, sqlite3.Error) and refused and store is not None:
            return refusing(Path(store))
    return None


def line(place: Path, why: str, home: Path) -> str:
    """One line: what cannot be written (or, permission denied, used), and what to do."""
    resolved, home_dir = place.resolve(), home.resolve()
    in_home = resolved == home_dir or home_dir in resolved.parents or resolved in home_dir.parents
    if why == _DENIED_WHY:
        said, fix = f"yagent: permission denied on {place}", "check its owner and permissions"
    else:
        said = f"yagent: cannot write {'in ' if place.is_dir() else ''}{place} ({why})"
        fix = "make it writable"
    if in_home:
        return (
            f"{said}: yagent keeps its sessions, settings and trust in {home} (YAGENT_HOME); "
            f"{fix}, or set YAGENT_HOME to a writable directory"
        )
    return f"{said}: {fix}, or run the command where yagent may write"
