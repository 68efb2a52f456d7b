"""files.common: what every file executor shares — resolving paths, refusing the wrong kind of
file, recognising binary content, and writing atomically.

Contract:
- Every path goes through the guard's `resolve` (realpath: symlinks followed, `..` collapsed) —
  under `Adapter.call` that is the resolution the ring pinned and judged for this call — and is
  then used through descriptors walked beneath it (`files.judged`), so the executor acts on
  exactly the file the guard judged; a path that changed in between is a CONFLICT failure.
- Results name a file by `shown_path`: workspace-relative when inside the workspace, the resolved
  absolute path otherwise — one spelling per file, so evidence sets do not count `./a` and `a`
  as two files.
- A file name that is not valid UTF-8 (its undecodable bytes arrive from the OS as lone
  surrogates, PEP 383) becomes text through `name_text` only: each such byte is written `\\xNN`
  and, in that name only, a backslash is doubled — visible, storable as UTF-8, and reversible
  (`name_of`, both in `tools.fsnames`). Valid names are shown as they are. A path given back in
  that spelling resolves to the file when the spelling itself names nothing (the guard's one
  resolution does it, so what is judged is that file).
- Failures are `ToolFailure`s with a kind from `toolfail` and a message that says what to do
  instead (missing → NOT_FOUND, wrong kind of file or binary content → INVALID_ARGS).
- Writes are atomic and happen inside the judged directory's descriptor
  (`atomicfile.atomic_write_at`): a temporary file beside the target, fsynced, renamed over it
  within that one directory. An existing target keeps its permission bits; a new file gets the
  usual `0o666 & ~umask`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files.judged import Judged
from yagent.tools.fsnames import name_of, name_text

__all__ = ["name_of", "name_text"]

# Git's heuristic: a NUL byte in the first 8 KiB means binary.
BINARY_SNIFF_BYTES = 8192


def resolve(ctx: ToolContext, path: str) -> Judged:
    guard = ctx.surface.guard
    return Judged.of(guard.workspace, guard.resolve(path))


def shown_path(ctx: ToolContext, resolved: Path) -> str:
    workspace = ctx.surface.guard.workspace
    try:
        rel = resolved.relative_to(workspace)
    except ValueError:
        return name_text(str(resolved))
    return name_text(rel.as_posix()) or "."


def is_a_directory(given: str) -> ToolFailure:
    return ToolFailure(Kind.INVALID_ARGS, f"{given} is a directory; use list_dir or print_dir_tree")


def no_such_file(given: str) -> ToolFailure:
    return ToolFailure(Kind.NOT_FOUND, f"{given}: no such file")


def check_regular_file(st: os.stat_result, given: str) -> os.stat_result:
    """`st` when it is a regular file's, or a ToolFailure saying what `given` is instead."""
    if stat.S_ISDIR(st.st_mode):
        raise is_a_directory(given)
    if not stat.S_ISREG(st.st_mode):
        # FIFOs and devices could block forever or never end; only regular files are read.
        raise ToolFailure(Kind.INVALID_ARGS, f"{given} is not a regular file")
    return st


def not_a_directory(given: str) -> ToolFailure:
    return ToolFailure(Kind.INVALID_ARGS, f"{given} is not a directory; use read_file")


def looks_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def binary_refusal(given: str) -> ToolFailure:
    return ToolFailure(
        Kind.INVALID_ARGS,
        f"{given} is a binary file (NUL byte in its first {BINARY_SNIFF_BYTES} bytes); "
        "it is not shown as text — inspect it with run_bash (e.g. `file`, `xxd | head`)",
    )


def not_utf8_refusal(given: str, line: int) -> ToolFailure:
    return ToolFailure(
        Kind.INVALID_ARGS,
        f"{given} is not UTF-8 text (line {line} does not decode); it is not shown with altered "
        "bytes — inspect or convert it with run_bash (e.g. `file`, `iconv`)",
    )
