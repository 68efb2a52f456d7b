"""files.common: what every file executor shares — resolving paths, refusing the wrong kind of
file, recognising binary content, and writing atomically.

Contract:
- Every path goes through the guard's `resolve` (realpath: symlinks followed, `..` collapsed), so
  the executor acts on exactly the file the guard judged.
- Results name a file by `shown_path`: workspace-relative when inside the workspace, the resolved
  absolute path otherwise — one spelling per file, so evidence sets do not count `./a` and `a`
  as two files.
- A file name that is not valid UTF-8 (its undecodable bytes arrive from the OS as lone
  surrogates, PEP 383) becomes text through `name_text` only: each such byte is written `\\xNN`
  and, in that name only, a backslash is doubled — visible, storable as UTF-8, and reversible
  (`name_of`). Valid names are shown as they are. A path given back in that spelling resolves to
  the file when the spelling itself names nothing (`resolve`).
- Failures are `ToolFailure`s with a kind from `toolfail` and a message that says what to do
  instead (missing → NOT_FOUND, wrong kind of file or binary content → INVALID_ARGS).
- `atomic_write` never leaves a half-written file: it writes a temporary file beside the target,
  fsyncs it and `os.replace`s it over the target. An existing target keeps its permission bits;
  a new file gets the usual `0o666 & ~umask`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from yagent.kernel.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.atomicfile import atomic_write as atomic_write

# Git's heuristic: a NUL byte in the first 8 KiB means binary.
BINARY_SNIFF_BYTES = 8192


_ESCAPED = re.compile(r"\\(\\|x[89a-fA-F][0-9a-fA-F])")


def name_text(name: str) -> str:
    """`name` as UTF-8-safe text: undecodable bytes as `\\xNN` (see module contract)."""
    if not any("\udc80" <= ch <= "\udcff" for ch in name):
        return name
    return "".join(
        f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else "\\\\" if ch == "\\" else ch
        for ch in name
    )


def name_of(text: str) -> str:
    """The name `name_text` spelled as `text` (text without escapes is returned as is)."""
    return _ESCAPED.sub(lambda m: "\\" if m[1] == "\\" else chr(0xDC00 + int(m[1][1:], 16)), text)


def resolve(ctx: ToolContext, path: str) -> Path:
    resolved = Path(ctx.surface.guard.resolve(path))
    raw = name_of(path)
    if raw != path and not os.path.lexists(resolved):
        return Path(ctx.surface.guard.resolve(raw))  # judged again, as the name it spells
    return resolved


def shown_path(ctx: ToolContext, resolved: Path) -> str:
    workspace = ctx.surface.guard.workspace
    try:
        rel = resolved.relative_to(workspace)
    except ValueError:
        return name_text(str(resolved))
    return name_text(rel.as_posix()) or "."


def stat_regular_file(resolved: Path, given: str) -> os.stat_result:
    """The stat of an existing regular file, or a ToolFailure saying what `given` is instead."""
    try:
        st = resolved.stat()
    except FileNotFoundError:
        raise ToolFailure(Kind.NOT_FOUND, f"{given}: no such file") from None
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            Kind.INVALID_ARGS, f"{given} is a directory; use list_dir or print_dir_tree"
        )
    if not stat.S_ISREG(st.st_mode):
        # FIFOs and devices could block forever or never end; only regular files are read.
        raise ToolFailure(Kind.INVALID_ARGS, f"{given} is not a regular file")
    return st


def stat_directory(resolved: Path, given: str) -> None:
    try:
        st = resolved.stat()
    except FileNotFoundError:
        raise ToolFailure(Kind.NOT_FOUND, f"{given}: no such directory") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ToolFailure(Kind.INVALID_ARGS, f"{given} is not a directory; use read_file")


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
