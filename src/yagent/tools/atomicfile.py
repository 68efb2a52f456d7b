"""Files yagent keeps for the person: read strictly, replaced atomically.

Guarantees:
- `read_json` reads a JSON file: missing ⇒ `MISSING`; unreadable or not JSON ⇒ the caller's
  error naming the file and saying it will not be overwritten (a person's file is never
  silently replaced by defaults).
- `atomic_write` writes the whole content to a temporary file beside the target, fsyncs it,
  gives it the target's permission bits (a new file: the umask's, or `force_mode`) and renames
  it over the target — a reader sees the old file or the new one, never half; on any failure
  the temporary file is removed and the target is untouched.
- `atomic_write_at` does the same inside one open directory (`dir_fd`): the temporary file is
  created there (`O_EXCL | O_NOFOLLOW`) and renamed within it, so the file written is in the
  directory that was opened, whatever its path names now. A target that is a symbolic link there
  is refused (`kernel.confine.beneath.SymlinkMetError`), a directory is `IsADirectoryError`.
Standard library and `kernel.confine.beneath`'s error only (a leaf: settings, trust, rules, memories
and the file tools use it).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yagent.kernel.confine.beneath import SymlinkMetError

MISSING: Any = object()
"""What `read_json` returns for a file that does not exist."""


def read_json(path: Path, error: Callable[[str], Exception], what: str, why: str = "") -> Any:
    """The JSON value in `path`; `MISSING` when there is no file; `error(message)` raised when
    it cannot be read or parsed (`what` names the file for the person, `why` adds the stakes)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        stakes = f"{why}, and" if why else ""
        raise error(
            f"{what} {path} is not valid JSON ({exc}); fix or remove it — yagent{stakes} will "
            "not overwrite it"
        ) from exc


def _umask() -> int:
    # os.umask can only be read by setting it; set it back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(target: Path, data: bytes, *, force_mode: int | None = None) -> bool:
    """Replace `target` with `data` atomically; True when the file did not exist before. The
    file keeps its permission bits (a new one gets the umask's), or gets `force_mode`."""
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        chosen = force_mode if force_mode is not None else mode
        os.chmod(tmp, chosen if chosen is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return mode is None


_TMP_TRIES = 8


def _create_tmp(dir_fd: int, name: str) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_TMP_TRIES):
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o600, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def atomic_write_at(dir_fd: int, name: str, data: bytes, *, force_mode: int | None = None) -> bool:
    """Replace `name` in the directory `dir_fd` with `data` atomically; True when it did not
    exist before. Permission bits as `atomic_write`; the rename stays inside `dir_fd`."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        mode: int | None = None
    else:
        if stat.S_ISLNK(st.st_mode):
            raise SymlinkMetError(errno.ELOOP, "a symbolic link is in the way (not followed)", name)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        mode = stat.S_IMODE(st.st_mode)
    fd, tmp = _create_tmp(dir_fd, name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            chosen = force_mode if force_mode is not None else mode
            os.fchmod(out.fileno(), chosen if chosen is not None else 0o666 & ~_umask())
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return mode is None
