"""files.write: `write_file` — create or overwrite a file with exactly the given content.

Contract:
- The content is written as UTF-8, byte for byte as given: no line-ending conversion, no added
  final newline. Missing parent directories are created.
- The write is atomic (temporary file beside the target, fsync, rename — all inside the judged
  directory's descriptor, `files.judged`): a reader sees the old file or the new one, never a
  mix, and a path whose directories turned into symbolic links after the check is a CONFLICT
  failure with nothing written. Overwriting keeps the file's permission bits; nothing
  else of the old file is kept.
- The receipt says how many bytes were written and whether the file was created or overwritten.
- What the file held before is kept in the session's edit journal (`files.journal`), read through
  the same directory descriptor (never following a link), for `/diff` and `/undo`.
- Refused: content over `MAX_WRITE_BYTES` (TOO_LARGE), a path that is a directory, a parent path
  that is a file (INVALID_ARGS).
"""

from __future__ import annotations

import functools
import os
import stat
from typing import Any

import anyio.to_thread

from yagent.kernel.confine.beneath import SymlinkMetError
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.atomicfile import atomic_write_at
from yagent.tools.files import common, journal, judged
from yagent.tools.files.judged import Judged
from yagent.toolspec.params import WriteFileArgs

MAX_WRITE_BYTES = 10 * 1024 * 1024


def _earlier(dir_fd: int, name: str) -> bytes | None:
    """The bytes a regular file `name` holds now; None when there is none (or not a file)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None  # absent, a link, a directory: atomic_write_at says what is wrong
    with os.fdopen(fd, "rb") as f:
        return f.read() if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else None


def _write_sync(
    target: Judged, given: str, shown: str, data: bytes
) -> tuple[dict[str, Any], bytes | None]:
    try:
        with judged.parent(target, make=True) as (dir_fd, name):
            before = _earlier(dir_fd, name)
            created = atomic_write_at(dir_fd, name, data)
    except IsADirectoryError:
        raise ToolFailure(Kind.INVALID_ARGS, f"{given} is a directory; give a file path") from None
    except NotADirectoryError:
        raise ToolFailure(
            Kind.INVALID_ARGS, f"cannot create {given}: a parent of it is a file, not a directory"
        ) from None
    except SymlinkMetError as exc:
        raise judged.changed(given, exc, "nothing was written") from None
    receipt = {
        "path": shown,
        "bytes_written": len(data),
        "lines": data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0),
        "created": created,
        "action": "created" if created else "overwrote",
    }
    return receipt, None if created else before


async def write_file(ctx: ToolContext, args: WriteFileArgs) -> dict[str, Any]:
    data = args.content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise ToolFailure(
            Kind.TOO_LARGE,
            f"content is {len(data)} bytes, over the write limit of {MAX_WRITE_BYTES} bytes; "
            "write the file in parts (write_file, then search_replace_in_file or run_bash)",
        )
    target = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, target.resolved)
    work = functools.partial(_write_sync, target, args.path, shown, data)
    receipt, before = await anyio.to_thread.run_sync(work)
    await anyio.to_thread.run_sync(journal.record, ctx, "write_file", shown, before, data)
    return receipt
