"""What the model reads when the browser or the page goes wrong, against a real headless Chromium:
a stale element ref fails at once asking for a new snapshot (not a timeout), a browser killed
with SIGKILL and a crashed tab are reported — never a silent fresh about:blank."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.tools.browser.conftest import adapter_for, make_context
from tests.tools.browser.site import Site
from yagent.kernel.judge.toolfail import Kind
from yagent.tools.adapter import ToolContext
from yagent.tools.browser import session_for
from yagent.tools.hostservices import close_browser

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


async def call(ctx: ToolContext, name: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await adapter_for(ctx).call(name, json.dumps(args), "c")
    data = json.loads(result.content)
    if not result.ok:
        data["kind"] = result.kind
    return result.ok, data


async def ref_of(ctx: ToolContext, label: str) -> str:
    ok, snap = await call(ctx, "browser_snapshot")
    assert ok, snap
    line = next(ln for ln in snap["snapshot"].splitlines() if label in ln)
    return line.split("[ref=")[1].split("]")[0]


def browser_pids(profile: Path) -> list[int]:
    """The main Chromium process of `profile` (the one without a --type= child role)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if f"--user-data-dir={profile}" in argv and not any(a.startswith("--type=") for a in argv):
            pids.append(int(entry.name))
    return pids


async def test_a_ref_from_before_a_navigation_fails_at_once(tmp_path: Path, site: Site) -> None:
    # a long action timeout: a ref that waited for its element would come back as a timeout
    ctx = make_context(tmp_path, timeout=60.0)
    await call(ctx, "browser_navigate", url=site.url("/"))
    ref = await ref_of(ctx, 'button "Change"')
    await call(ctx, "browser_navigate", url=site.url("/other"))
    for tool, extra in (("browser_click", {}), ("browser_type", {"text": "x"})):
        ok, said = await call(ctx, tool, ref=ref, **extra)
        assert not ok
        assert said["kind"] == Kind.NOT_FOUND, said
        assert "Take a new snapshot" in said["error"]
        assert ref in said["error"]
    await close_browser(ctx)


async def test_refs_of_older_documents_fail_the_same_way(tmp_path: Path, site: Site) -> None:
    # after a few navigations Playwright names refs by frame (`f2e2`) and refuses a gone frame's
    ctx = make_context(tmp_path, timeout=60.0)
    for _ in range(3):
        await call(ctx, "browser_navigate", url=site.url("/"))
        ref = await ref_of(ctx, 'button "Change"')
        ok, out = await call(ctx, "browser_click", ref=ref)
        assert ok, out
        await call(ctx, "browser_navigate", url=site.url("/other"))
        ok, said = await call(ctx, "browser_click", ref=ref)
        assert not ok
        assert said["kind"] == Kind.NOT_FOUND, said
        assert "Take a new snapshot" in said["error"]
    await close_browser(ctx)


async def test_a_ref_whose_element_was_removed_fails_at_once(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path, timeout=60.0)
    await call(ctx, "browser_navigate", url=site.url("/"))
    ref = await ref_of(ctx, 'button "Change"')
    page = await session_for(ctx).page()
    await page.evaluate("document.getElementById('go').remove()")
    ok, said = await call(ctx, "browser_hover", ref=ref)
    assert not ok
    assert said["kind"] == Kind.NOT_FOUND
    assert "new snapshot" in said["error"]
    fresh = await ref_of(ctx, 'link "Other page"')  # a ref of the current snapshot still works
    ok, out = await call(ctx, "browser_hover", ref=fresh)
    assert ok, out
    await close_browser(ctx)


async def test_a_killed_browser_is_reported_to_the_model(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path)
    session = session_for(ctx)
    await call(ctx, "browser_navigate", url=site.url("/other"))
    assert session._profile is not None
    pids = browser_pids(session._profile)
    assert pids, "the browser process is found by its profile"
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    ok, said = await call(ctx, "browser_snapshot")
    assert not ok, "not a snapshot of a fresh about:blank"
    assert said["kind"] == Kind.TRANSIENT
    assert "crashed or was killed" in said["error"]
    assert site.url("/other") in said["error"]
    ok, nav = await call(ctx, "browser_navigate", url=site.url("/"))
    assert ok, nav
    assert nav["title"] == "Test Page"
    assert session.starts == 2
    await close_browser(ctx)


async def test_a_crashed_tab_is_reported_and_closed(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path)
    session = session_for(ctx)
    await call(ctx, "browser_navigate", url=site.url("/other"))
    page = await session.page()
    with contextlib.suppress(Exception):  # the renderer dies under the navigation
        await page.goto("chrome://crash", timeout=10_000)
    ok, said = await call(ctx, "browser_snapshot")
    assert not ok
    assert said["kind"] == Kind.TRANSIENT
    assert "crashed" in said["error"]
    ok, nav = await call(ctx, "browser_navigate", url=site.url("/"))
    assert ok, nav
    assert session.starts == 1, "a tab crash keeps the browser"
    await close_browser(ctx)
