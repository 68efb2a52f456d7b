"""Small file helpers for the app tests."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> None:
    """`text` at `path`, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
