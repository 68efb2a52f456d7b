"""Fixtures every CLI test shares."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh yagent home (`YAGENT_HOME`), with no provider chosen by the environment."""
    h = tmp_path / "home"
    monkeypatch.setenv("YAGENT_HOME", str(h))
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return h
