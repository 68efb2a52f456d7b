"""Fixtures the app tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A yagent home (not created) and an existing, empty workspace."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    return home, ws
