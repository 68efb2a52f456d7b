"""browser.shots: where a screenshot may be written — always inside the session's directory.

Contract:
- `converge(root, requested)` returns a path strictly inside `root` (after `realpath`, so neither
  `..` nor a symlink leads out) and a note that is non-empty whenever the requested path was not
  used as given: outside the directory (absolute, `..`, `~`, a symlink out), naming no file, or
  without an image extension. Nothing requested: a generated name, no note. An escaping path
  keeps only its file name; one that still escapes (a symlink by that name) gets a generated one.
- Only `.png`, `.jpg` and `.jpeg` are written; another suffix gets `.png` appended.
Leaves to the caller: creating the file (parents are created here) and reporting the note.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg"})
_counter = itertools.count(1)


def default_name() -> str:
    return f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{next(_counter)}.png"


def _inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip("/") + "/")


def converge(root: Path, requested: str) -> tuple[Path, str]:
    """The file to write for `requested`, and why it differs from what was asked (or "")."""
    base = os.path.realpath(root)
    notes: list[str] = []
    text = requested.strip()
    head, name = os.path.split(text)
    if name in ("", ".", ".."):
        if text:
            notes.append(f"{requested!r} names no file; a name was generated")
        text = os.path.join(head, default_name())
    elif Path(name).suffix.lower() not in IMAGE_SUFFIXES:
        text += ".png"
        notes.append("only .png/.jpg screenshots are written; .png was appended")
    expanded = os.path.expanduser(text)
    joined = expanded if os.path.isabs(expanded) else os.path.join(base, expanded)
    target = os.path.realpath(joined)
    if not _inside(target, base):
        # the name ends in an image suffix, so it is never empty, "." or ".."
        target = os.path.realpath(os.path.join(base, os.path.basename(expanded)))
        if not _inside(target, base):
            target = os.path.join(base, default_name())
        notes.append(
            f"{requested!r} is outside the session's browser directory {base}; "
            "saved inside it instead"
        )
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    return Path(target), "; ".join(notes)
