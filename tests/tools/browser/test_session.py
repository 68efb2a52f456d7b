"""The browser session's life and its process: lazy start, close and restart, the argv Chromium
really runs with (no shell, every request through the guard's proxy, loopback included), the
host's Allow, and failures the model can read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.browser.conftest import adapter_for, make_context
from tests.tools.browser.site import Site, serve
from yagent.kernel.confine.netguard import Allow
from yagent.kernel.judge.toolfail import Kind
from yagent.tools.adapter import ToolContext
from yagent.tools.browser import BrowserSession, session_for
from yagent.tools.browser.refusals import RefusalLog, tunnel_key
from yagent.tools.browser.session import BASE_FLAGS, chromium_args, failure
from yagent.tools.hostservices import close_browser

pytestmark = pytest.mark.anyio


async def call(ctx: ToolContext, name: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await adapter_for(ctx).call(name, json.dumps(args), "c")
    data = json.loads(result.content)
    if not result.ok:
        data["kind"] = result.kind
    return result.ok, data


def _cmdlines_with(needle: str) -> list[list[str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if needle in args:
            found.append(args)
    return found


def test_the_argv_is_a_fixed_list_with_the_proxy() -> None:
    argv = chromium_args(4321)
    assert argv[: len(BASE_FLAGS)] == list(BASE_FLAGS)
    assert "--proxy-server=http://127.0.0.1:4321" in argv
    assert "--proxy-bypass-list=<-loopback>" in argv, "loopback must not bypass the guard"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic"):
        assert flag in argv
    assert all(isinstance(a, str) and a.startswith("--") for a in argv)


def test_tunnel_keys_name_the_origin() -> None:
    assert tunnel_key("wss://h.example/x") == "https://h.example:443/"
    assert tunnel_key("ws://h.example/x") == "https://h.example:80/"
    assert tunnel_key("https://[::1]:8443/") == "https://[::1]:8443/"
    assert tunnel_key("http://h:99999/") == ""


def test_failures_are_classified_for_the_model() -> None:
    refused = [{"url": "https://x/", "reason": "r", "layer": "address"}]
    net = failure(
        RuntimeError("net::ERR_TUNNEL_CONNECTION_FAILED at x\nCall log:\n- noise"), refused
    )
    assert net.kind is Kind.PERMISSION
    assert "noise" not in str(net)
    other = failure(RuntimeError("Element is not visible"), refused)
    assert other.kind is Kind.INVALID_ARGS
    assert "meanwhile the network guard refused" in str(other)

    class TimeoutError_(Exception):
        pass

    assert failure(TimeoutError_("slow"), []).kind is Kind.TIMEOUT
    gone = failure(RuntimeError("Target page, context or browser has been closed"), [])
    assert gone.kind is Kind.TRANSIENT
    assert "starts afresh" in str(gone)
    assert len(str(failure(RuntimeError("x" * 10_000), []))) < 2_100


@pytest.mark.browser
async def test_lazy_start_close_and_restart(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path)
    session = session_for(ctx)
    assert session_for(ctx) is session, "one session per tool context"
    assert not session.running
    ok, tabs = await call(ctx, "browser_tabs")
    assert ok
    assert tabs == {"tabs": [], "current": None, "running": False}
    assert session.starts == 0, "listing tabs does not start a browser"
    assert (await call(ctx, "browser_close"))[1] == {"closed": False}

    ok, nav = await call(ctx, "browser_navigate", url=site.url("/other"))
    assert ok
    assert nav["title"] == "Other"
    assert session.running
    assert session.starts == 1
    port = session._proxy.port if session._proxy else 0
    [argv] = _cmdlines_with(f"--proxy-server=http://127.0.0.1:{port}")
    assert "--proxy-bypass-list=<-loopback>" in argv
    profile = next(a.split("=", 1)[1] for a in argv if a.startswith("--user-data-dir="))
    assert Path(profile).parent == session.root
    assert await anyio.Path(profile).is_dir()
    assert not {"sh", "-c", "/bin/sh"} & set(argv[:2]), "started without a shell"

    assert (await call(ctx, "browser_close"))[1] == {"closed": True}
    assert not session.running
    assert not await anyio.Path(profile).exists(), "the profile is deleted on close"
    assert _cmdlines_with(f"--proxy-server=http://127.0.0.1:{port}") == []

    ok, again = await call(ctx, "browser_navigate", url=site.url("/"))
    assert ok
    assert again["title"] == "Test Page"
    assert session.starts == 2, "a closed session starts afresh on its next use"
    assert await close_browser(ctx) is True
    assert await close_browser(ctx) is False


@pytest.mark.browser
async def test_a_browser_that_died_is_reported_then_replaced(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path)
    session = session_for(ctx)
    await call(ctx, "browser_navigate", url=site.url("/"))
    assert session._context is not None
    await session._context.close()  # behind the session's back
    assert not session.running
    ok, said = await call(ctx, "browser_navigate", url=site.url("/other"))
    assert not ok, "never a silent fresh about:blank"
    assert said["kind"] == Kind.TRANSIENT
    assert "crashed or was killed" in said["error"]
    assert site.url("/") in said["error"], "the lost page is named"
    ok, nav = await call(ctx, "browser_navigate", url=site.url("/other"))
    assert ok
    assert nav["title"] == "Other"
    assert session.starts == 2
    await close_browser(ctx)


@pytest.mark.browser
async def test_the_default_allow_is_strict(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path, allow=Allow())
    before = site.hits["/"]
    ok, data = await call(ctx, "browser_navigate", url=site.url("/"))
    assert not ok
    assert data["kind"] is Kind.PERMISSION
    assert "loopback" in data["error"]
    assert site.hits["/"] == before
    bare = ToolContext(ctx.workspace, ctx.surface, state_dir=tmp_path / "s2")
    assert session_for(bare).config.allow == Allow(), "no host config: strict"
    await close_browser(ctx)


@pytest.mark.browser
async def test_loopback_subrequests_pass_the_guard_too(tmp_path: Path) -> None:
    with serve() as other, serve(other_port=other.port) as site:
        ctx = make_context(tmp_path, allow=Allow(hosts=frozenset({f"127.0.0.1:{site.port}"})))
        ok, nav = await call(ctx, "browser_navigate", url=site.url("/img-other-port"))
        await close_browser(ctx)
    assert ok
    assert nav["title"] == "Cross"
    assert [b["url"] for b in nav["blocked"]] == [other.url("/pixel")]
    assert other.hits["/pixel"] == 0, "a refused subrequest never reaches its server"


@pytest.mark.browser
async def test_a_redirect_to_tls_metadata_is_refused(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path)
    ok, data = await call(ctx, "browser_navigate", url=site.url("/to-metadata-tls"))
    await close_browser(ctx)
    assert not ok
    assert data["kind"] is Kind.PERMISSION
    assert "https://169.254.169.254/" in data["error"]


@pytest.mark.browser
async def test_console_keeps_the_newest_and_counts_the_dropped(tmp_path: Path, site: Site) -> None:
    ctx = make_context(tmp_path, console_limit=1)
    await call(ctx, "browser_navigate", url=site.url("/"))
    ok, out = await call(ctx, "browser_console")
    await close_browser(ctx)
    assert ok
    assert len(out["messages"]) == 1
    assert out["dropped"] >= 1, "the page logs at least two messages"


async def test_a_missing_chromium_is_reported(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, executable=str(tmp_path / "no-chromium"))
    ok, data = await call(ctx, "browser_snapshot")
    assert not ok
    assert data["kind"] is Kind.INTERNAL
    assert "apt-get install chromium" in data["error"]
    assert not session_for(ctx).running


async def test_without_a_state_dir_the_session_gets_its_own_directory(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    ctx.state_dir = None
    root = session_for(ctx).root
    other = make_context(tmp_path / "b")
    other.state_dir = None
    other_root = session_for(other).root
    assert root != other_root
    assert await anyio.Path(root).is_dir()
    assert isinstance(session_for(ctx), BrowserSession)
    # a directory made for the session goes with it (it was left in /tmp: yagent-browser-*)
    await close_browser(ctx)
    await session_for(other).close()
    assert not await anyio.Path(root).exists()
    assert not await anyio.Path(other_root).exists()


async def test_a_state_dir_session_directory_is_kept_on_close(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    root = session_for(ctx).root
    await anyio.Path(root).mkdir(parents=True, exist_ok=True)
    await close_browser(ctx)
    assert await anyio.Path(root).is_dir(), "the host's state directory is the host's"


@pytest.mark.browser
async def test_a_chromium_that_does_not_start_is_reported(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, executable="/bin/false", launch_timeout=20)
    ok, data = await call(ctx, "browser_snapshot")
    assert not ok
    assert data["kind"] is Kind.INTERNAL
    assert "did not start" in data["error"]
    session = session_for(ctx)
    assert not session.running
    assert [p.name for p in session.root.iterdir()] == [], "the fresh profile was removed"


def test_refusals_are_remembered_boundedly_and_matched_by_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from yagent.tools.browser import refusals as module
    from yagent.tools.browser.proxy import Refusal

    monkeypatch.setattr(module, "KEPT", 2)
    log = RefusalLog()
    for url in ("http://a/", "https://b:443/", "http://c/", "http://a/"):
        log.record(Refusal(url, f"no {url}", "address"))
    assert log.total == 4
    assert log.remembered() == ["http://c/", "http://a/"]
    log.attribute("http://elsewhere/")  # not refused by the proxy: not reported
    log.attribute("wss://b/socket")  # tunnel evicted: no longer matched
    log.attribute("http://a/")
    assert log.take() == [{"url": "http://a/", "reason": "no http://a/", "layer": "address"}]
    assert log.take() == []


async def test_acting_leaves_other_errors_alone(tmp_path: Path) -> None:
    session = BrowserSession(tmp_path)
    with pytest.raises(KeyError):
        async with session.acting():
            raise KeyError("not playwright's")
