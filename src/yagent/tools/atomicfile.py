"""Atomic file replacement: the one way yagent rewrites a file a reader may be reading.

Guarantees: `atomic_write` writes the whole content to a temporary file beside the target,
fsyncs it, gives it the target's permission bits (a new file: the umask's, or `force_mode`) and
renames it over the target — a reader sees the old file or the new one, never half; on any
failure the temporary file is removed and the target is untouched. Standard library only (a
leaf: settings, trust, rules and the file tools all use it).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


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
