"""Test helper: trust a workspace's project files as the person would with `yagent trust --yes`.

Tests that configure a run through `<ws>/.yagent/config.toml` must trust it explicitly, exactly
like a person does: an untrusted project file is applied only in part (app.projectkeys).
"""

from __future__ import annotations

from pathlib import Path

from yagent.app import trust


def trust_project(home: Path, ws: Path) -> None:
    """Record the current content of `ws`'s project files as trusted under `home`."""
    digests = {
        name: trust.digest((ws / name).read_bytes())
        for name in trust.PROJECT_FILES
        if (ws / name).is_file()
    }
    trust.Store(home).trust(ws, digests)


def write_trusted(home: Path, ws: Path, text: str) -> None:
    """Write `ws/.yagent/config.toml` and trust it."""
    path = ws / ".yagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    trust_project(home, ws)
