"""Fixtures for the browser tests: the test website, and tool contexts whose browser session is
configured the way a host would (loopback opened, since the website is on 127.0.0.1).

The event loop lives for the module (`anyio_backend` is module-scoped here), so one real Chromium
serves a whole test module; tests that need their own browser make their own context."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.tools.browser.site import Site, serve
from yagent.kernel.confine.netguard import Allow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.hostservices import BrowserConfig, close_browser, configure_browser
from yagent.tools.registry import executors
from yagent.tools.settings import Settings
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


def make_context(root: Path, allow: Allow | None = None, **config: object) -> ToolContext:
    """A real tool context (browser profile surface, real guard) with the host's browser config."""
    workspace = root / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    home = root / "home"
    home.mkdir(exist_ok=True)
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    surface = Surface(BUILTIN, profile("browser"), guard, options=SurfaceOptions(deferred=False))
    ctx = ToolContext(workspace, surface, state_dir=root / "state")
    allowed = Allow(loopback=True) if allow is None else allow
    configure_browser(ctx, BrowserConfig(allow=allowed, **config))  # type: ignore[arg-type]
    return ctx


def adapter_for(ctx: ToolContext) -> Adapter:
    return Adapter(ctx, executors())


@pytest.fixture(scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolContext]:
    """One browser for the module; closed at the end like the host closes it at shutdown."""
    ctx = make_context(tmp_path_factory.mktemp("browser"))
    yield ctx
    await close_browser(ctx)
