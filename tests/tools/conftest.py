"""Fixtures for the tool layer: a real workspace, the real guard, the real surface assembly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

from .egresskit import Servers, servers


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    return ws


@pytest.fixture
async def origin() -> AsyncIterator[Servers]:
    """An HTTP origin and a TCP echo server on loopback (egress tests)."""
    async with servers() as found:
        yield found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def make_surface(
    workspace: Path,
    home: Path,
    *,
    profile_name: str = "coding",
    yolo: Yolo = Yolo.OFF,
    **options: object,
) -> Surface:
    guard = WorkspaceGuard(workspace, settings=Settings(home), yolo=yolo)
    opts = SurfaceOptions(yolo=yolo, **options)  # type: ignore[arg-type]
    return Surface(BUILTIN, profile(profile_name), guard, options=opts)
