"""Local docs for a delegation's task (Director constraints C19, G18): the instructions files
of the directories a delegation works in, appended to the task its child agent receives.

Contract:
- `local_docs_for_task(root, areas)` judges by the disk, not by the shape of a path: for each
  area (a workspace-relative file or directory) it walks the area's directory and its ancestors
  up to, but never including, the workspace root (the root's file is already in the system
  context), and takes a directory's file only when one really exists there — by the instruction
  rules per directory (`agents.instructions.directory_file`: AGENTS.override.md, else AGENTS.md,
  else CLAUDE.md, else .claude/CLAUDE.md).
- Confined twice: an area that is absolute or climbs out of the root (`..`) is refused at the
  token side; and every doc is resolved (symlinks followed) and read only when its real path is
  inside the real root — a link out of the workspace is left out, a link to the root's own file
  counts as the root's and is never injected. Each real file is injected once.
- Order is stable: (depth descending, then path), so the nearest docs come first and equal inputs
  give equal text (prefix caches rely on it).
- Budget: at most `max_docs` (3) docs and `max_bytes` (12 000) bytes of text; a doc that does not
  fit is left out whole, and `.left_out` lists every left-out doc or area with why — `.text`
  ends with a visible line saying so, never a silent omission.
- Read fresh on every call: nothing is cached. Texts are repository data: neutralised
  (`agents.untrusted.for_model`) like every untrusted text on its way to a model.
Leaves to the caller (the delegate path): appending `.text` to the child's task.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from yagent.agents import untrusted
from yagent.agents.instructions import MAX_FILE_BYTES, directory_file

MAX_DOCS = 3
MAX_BYTES = 12_000


@dataclass(frozen=True, slots=True)
class LocalDocs:
    text: str  # to append to the child's task ("" when there is nothing to add)
    paths: tuple[str, ...]  # the injected docs, workspace-relative, in order
    left_out: tuple[tuple[str, str], ...]  # (doc or area, why), in order


def _area_dir(real_root: Path, area: str) -> Path | None:
    """The directory an area works in, inside the root; None when the area escapes it."""
    if os.path.isabs(area) or ".." in Path(area).parts:
        return None
    target = (real_root / area).resolve()
    if not target.is_relative_to(real_root):
        return None
    return target if target.is_dir() else target.parent


def _candidates(real_root: Path, folder: Path) -> list[Path]:
    """Instructions files of `folder` and its ancestors below the root (never the root's)."""
    out = []
    while folder != real_root and folder.is_relative_to(real_root):
        found = directory_file(folder)
        if found is not None:
            out.append(found)
        folder = folder.parent
    return out


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        raw = handle.read(MAX_FILE_BYTES)
    return raw.decode("utf-8", "replace")


def local_docs_for_task(
    root: Path,
    areas: Sequence[str],
    *,
    max_docs: int = MAX_DOCS,
    max_bytes: int = MAX_BYTES,
) -> LocalDocs:
    real_root = root.resolve()
    root_doc = directory_file(real_root)
    root_real = root_doc.resolve() if root_doc is not None else None
    left_out: list[tuple[str, str]] = []
    found: dict[Path, str] = {}  # real file -> label (the path it was found at)
    for area in areas:
        folder = _area_dir(real_root, area)
        if folder is None:
            left_out.append((area, "area outside the workspace"))
            continue
        for doc in _candidates(real_root, folder):
            label = doc.relative_to(real_root).as_posix()
            real = doc.resolve()
            if not real.is_relative_to(real_root):
                if (label, "links outside the workspace") not in left_out:
                    left_out.append((label, "links outside the workspace"))
                continue
            if real != root_real:
                found.setdefault(real, label)
    ordered = sorted(found.items(), key=lambda item: (-len(Path(item[1]).parts), item[1]))
    parts: list[str] = []
    paths: list[str] = []
    used = 0
    for real, label in ordered:
        if len(paths) >= max_docs:
            left_out.append((label, f"more than {max_docs} documents"))
            continue
        try:
            body = untrusted.for_model(_read(real)).strip()
        except OSError as exc:
            left_out.append((label, f"unreadable: {exc.strerror or exc}"))
            continue
        section = f"### {label}\n{body}"
        size = len(section.encode())
        if used + size > max_bytes:
            left_out.append((label, f"over the {max_bytes}-byte budget"))
            continue
        used += size
        parts.append(section)
        paths.append(label)
    if left_out:
        named = "; ".join(f"{what} ({why})" for what, why in left_out)
        parts.append(f"[local docs left out: {named} — read them with read_file if needed]")
    text = ""
    if parts:
        text = "Local instructions for the directories of this task:\n\n" + "\n\n".join(parts)
    return LocalDocs(text, tuple(paths), tuple(left_out))
