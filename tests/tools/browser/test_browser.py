"""The browser tools against a real headless Chromium and a real website on 127.0.0.1, through the
real Adapter (JSON arguments, guard chain, result serialisation) — one browser for the module."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.browser.conftest import adapter_for
from tests.tools.browser.site import Site
from yagent.kernel.judge.toolfail import Kind
from yagent.tools.adapter import ToolContext
from yagent.tools.browser import observe, session_for
from yagent.tools.browser.interact import report
from yagent.tools.browser.observe import cut_snapshot
from yagent.tools.mcp.content import VISION_KEY
from yagent.tools.toolresult import ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


async def call(ctx: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    result = await adapter_for(ctx).call(name, json.dumps(args), "c")
    assert result.ok, result.content
    data = json.loads(result.content)
    assert isinstance(data, dict)
    return data


async def fail(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    result = await adapter_for(ctx).call(name, json.dumps(args), "c")
    assert not result.ok, result.content
    return result


async def text_of(ctx: ToolContext, selector: str) -> str:
    page = await session_for(ctx).page()
    return await page.locator(selector).inner_text()


async def test_navigate_and_snapshot(shared: ToolContext, site: Site) -> None:
    nav = await call(shared, "browser_navigate", url=site.url("/"))
    assert nav["status"] == 200
    assert nav["title"] == "Test Page"
    assert nav["url"] == site.url("/")
    assert "blocked" not in nav
    snap = await call(shared, "browser_snapshot")
    assert snap["truncated"] is False
    assert 'heading "Hello yagent"' in snap["snapshot"]
    assert 'button "Change"' in snap["snapshot"]
    assert 'link "Other page"' in snap["snapshot"]
    assert "[ref=e" in snap["snapshot"]


async def test_snapshot_is_capped_with_a_visible_note(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/big"))
    snap = await call(shared, "browser_snapshot", max_chars=1000)
    assert snap["truncated"] is True
    assert snap["total_chars"] > 1000
    assert len(snap["snapshot"]) < 1300
    assert "[snapshot truncated: showing" in snap["snapshot"]
    assert f"of {snap['total_chars']} characters" in snap["snapshot"]


def test_cut_snapshot_without_line_breaks() -> None:
    text, cut = cut_snapshot("x" * 50, 10)
    assert cut
    assert text.startswith("x" * 10 + "\n[snapshot truncated: showing 10 of 50")
    assert cut_snapshot("short", 10) == ("short", False)


async def test_click_by_ref_changes_the_page(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    snap = (await call(shared, "browser_snapshot"))["snapshot"]
    line = next(ln for ln in snap.splitlines() if 'button "Change"' in ln)
    ref = line.split("[ref=")[1].split("]")[0]
    out = await call(shared, "browser_click", ref=ref)
    assert out["clicked"] == ref
    assert await text_of(shared, "#status") == "clicked"
    assert re.search(
        r"paragraph \[ref=(f\d+)?e\d+\]: clicked",
        (await call(shared, "browser_snapshot"))["snapshot"],
    )


async def test_type_select_and_submit_the_form(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    await call(shared, "browser_type", selector="#name", text="-more", clear=False)
    page = await session_for(shared).page()
    assert await page.locator("#name").input_value() == "start-more"
    await call(shared, "browser_type", selector="#name", text="Ada")
    selected = await call(shared, "browser_select", selector="#color", values=["Green"])
    assert selected["selected"] == ["g"]
    out = await call(shared, "browser_click", selector="#send")
    assert out["title"] == "Submitted"
    assert await text_of(shared, "#result") == "color=g;name=Ada"


async def test_type_with_submit_presses_enter(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    out = await call(shared, "browser_type", selector="#name", text="Bob", submit=True)
    assert out["submitted"] is True
    assert out["url"].startswith(site.url("/submit?"))
    assert "name=Bob" in await text_of(shared, "#result")


async def test_hover_press_key_wait_and_back(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    await call(shared, "browser_hover", selector="#hov")
    assert await text_of(shared, "#hov") == "hovered"
    waited = await call(shared, "browser_wait_for", text="arrived late", timeout=10)
    assert waited["state"] == "visible"
    gone = await call(shared, "browser_wait_for", selector="#nothing-here", gone=True)
    assert gone["state"] == "hidden"
    await call(shared, "browser_click", selector="#name")
    pressed = await call(shared, "browser_press_key", key="Enter")
    assert pressed["url"].startswith(site.url("/submit?"))
    back = await call(shared, "browser_back")
    assert back["moved"] is True
    assert back["url"] == site.url("/")
    await call(shared, "browser_tabs", action="new")
    nowhere = await call(shared, "browser_back")  # a fresh tab has no history
    assert nowhere["moved"] is False
    await call(shared, "browser_tabs", action="close")


async def test_a_wait_that_never_comes_is_a_timeout(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/other"))
    result = await fail(shared, "browser_wait_for", text="never there", timeout=0.3)
    assert result.kind is Kind.TIMEOUT


async def test_a_selector_matching_nothing_or_many_fails_clearly(
    shared: ToolContext, site: Site
) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    session_for(shared).config  # noqa: B018 - the session exists
    many = await fail(shared, "browser_click", selector="button")
    assert many.kind is Kind.INVALID_ARGS
    assert "strict mode violation" in json.loads(many.content)["error"]
    bad_ref = await fail(shared, "browser_click", ref="x1")
    assert bad_ref.kind is Kind.INVALID_ARGS


async def test_screenshot_lands_in_the_session_directory(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    root = session_for(shared).root.resolve()
    assert root == (shared.state_dir / "browser").resolve()  # type: ignore[operator]
    out = await call(shared, "browser_screenshot", path="page.png")
    assert Path(out["path"]) == root / "page.png"
    assert (await anyio.Path(out["path"]).read_bytes())[:8] == b"\x89PNG\r\n\x1a\n"
    assert "path_note" not in out
    assert out["seen_by_model"] is False, "the model is told it does not see the image"
    assert "browser_snapshot" in out["note"]
    escaped = await call(shared, "browser_screenshot", path="../../etc/x.png", full_page=True)
    assert Path(escaped["path"]) == root / "x.png"
    assert (await anyio.Path(escaped["path"]).stat()).st_size == escaped["bytes"] > 0
    assert escaped["requested"] == "../../etc/x.png"
    assert "outside" in escaped["path_note"]
    assert not await anyio.Path(root.parent.parent / "etc" / "x.png").exists()
    jpeg = await call(shared, "browser_screenshot", path="/tmp/elsewhere/shot.jpg")
    assert jpeg["format"] == "jpeg"
    assert Path(jpeg["path"]) == root / "shot.jpg"
    assert (await anyio.Path(jpeg["path"]).read_bytes())[:2] == b"\xff\xd8"


async def test_screenshot_is_an_image_part_when_the_model_takes_images(
    shared: ToolContext, site: Site, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    shared.services.put(VISION_KEY, True)
    request.addfinalizer(lambda: shared.services.put(VISION_KEY, False))  # the module's browser
    result = await adapter_for(shared).call("browser_screenshot", '{"path": "seen.png"}', "c")
    assert result.ok, result.content
    out = json.loads(result.content)
    assert out["seen_by_model"] is True
    assert "attached" in out["note"]
    saved = await anyio.Path(out["path"]).read_bytes()
    assert len(result.images) == 1
    mime, data = result.images[0]
    assert mime == "image/png"
    assert base64.b64decode(data) == saved, "the model sees exactly the saved file"
    jpeg = await adapter_for(shared).call("browser_screenshot", '{"path": "seen.jpg"}', "c")
    assert jpeg.images[0][0] == "image/jpeg"
    monkeypatch.setattr(observe, "IMAGE_BYTES", 10)
    big = await adapter_for(shared).call("browser_screenshot", "{}", "c")
    assert big.ok
    assert big.images == ()
    over = json.loads(big.content)
    assert over["seen_by_model"] is False
    assert "over the 10 byte limit" in over["note"]
    assert (await anyio.Path(over["path"]).stat()).st_size == over["bytes"]


async def test_screenshot_without_vision_has_no_image_part(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    shared.services.put(VISION_KEY, False)
    result = await adapter_for(shared).call("browser_screenshot", "{}", "c")
    assert result.ok
    assert result.images == ()
    assert json.loads(result.content)["seen_by_model"] is False


async def test_a_refusal_note_keeps_the_result_note(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    session = session_for(shared)
    refused = [{"url": "http://169.254.169.254/x.png", "reason": "metadata", "layer": "proxy"}]
    out = await report(session, await session.page(), {"note": "image attached"}, refused)
    assert out["note"].startswith("image attached; the network guard refused 1 request")


async def test_eval_returns_a_value(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    shared.surface.guard.allow_tool_for_session("browser_eval")  # the person said yes
    assert (await call(shared, "browser_eval", expression="1+1"))["value"] == 2
    title = await call(shared, "browser_eval", expression="() => document.title")
    assert title["value"] == "Test Page"
    obj = await call(shared, "browser_eval", expression="({a: [1, 'x'], d: new Date(0)})")
    assert obj["value"]["a"] == [1, "x"]
    assert obj["value"]["d"].startswith("1970-01-01")
    broken = await fail(shared, "browser_eval", expression="no_such_variable.x")
    assert broken.kind is Kind.INVALID_ARGS
    assert "no_such_variable" in json.loads(broken.content)["error"]


async def test_eval_values_are_capped(
    shared: ToolContext, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(observe, "EVAL_MAX_CHARS", 100)
    shared.surface.guard.allow_tool_for_session("browser_eval")
    out = await call(shared, "browser_eval", expression="'y'.repeat(500)")
    assert out["truncated"] is True
    assert out["total_chars"] == 502
    assert len(out["value_json"]) == 100
    assert "cut at 100" in out["note"]


async def test_console_messages_are_captured(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_console", clear=True)
    await call(shared, "browser_navigate", url=site.url("/"))
    out = await call(shared, "browser_console")
    texts = [(m["type"], m["text"]) for m in out["messages"]]
    assert ("log", "hello from the page") in texts
    assert ("error", "an error line") in texts
    assert all(m["url"] == site.url("/") for m in out["messages"])
    one = await call(shared, "browser_console", limit=1)
    assert len(one["messages"]) == 1
    assert one["older_not_shown"] == len(texts) - 1
    shared.surface.guard.allow_tool_for_session("browser_eval")
    await fail(
        shared, "browser_eval", expression="setTimeout(() => { throw new Error('boom') }) && x.y"
    )
    cleared = await call(shared, "browser_console", clear=True)
    assert cleared["cleared"] is True
    assert (await call(shared, "browser_console"))["messages"] == []


async def test_tabs_list_new_select_close(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    context = session_for(shared)._context
    assert context is not None
    async with context.expect_page():  # the popup opens asynchronously after the click
        await call(shared, "browser_click", selector="#popup")
    listed = await call(shared, "browser_tabs")
    assert len(listed["tabs"]) == 2, "the popup was adopted as a tab"
    assert listed["current"] == 0, "a popup is listed, not selected"
    opened = await call(shared, "browser_tabs", action="new", url=site.url("/other"))
    assert opened["current"] == 2
    assert opened["title"] == "Other"
    selected = await call(shared, "browser_tabs", action="select", index=0)
    assert selected["current"] == 0
    assert selected["url"] == site.url("/")
    assert [t["current"] for t in selected["tabs"]] == [True, False, False]
    closed = await call(shared, "browser_tabs", action="close", index=2)
    assert len(closed["tabs"]) == 2
    assert closed["current"] == 0
    closed = await call(shared, "browser_tabs", action="close")  # the current one
    assert len(closed["tabs"]) == 1
    assert closed["tabs"][0]["title"] == "Other"
    missing = await fail(shared, "browser_tabs", action="select", index=7)
    assert missing.kind is Kind.INVALID_ARGS
    no_index = await fail(shared, "browser_tabs", action="select")
    assert "index" in json.loads(no_index.content)["error"]
    blocked = await fail(shared, "browser_tabs", action="new", url="http://169.254.169.254/")
    assert blocked.kind is Kind.PERMISSION


async def test_netguard_refuses_the_metadata_address(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/other"))
    direct = await fail(shared, "browser_navigate", url="http://169.254.169.254/")
    assert direct.kind is Kind.PERMISSION
    assert "169.254.169.254" in json.loads(direct.content)["error"]
    page = await session_for(shared).page()
    assert page.url == site.url("/other"), "nothing was loaded"
    for url in ("file:///etc/passwd", "javascript:alert(1)", "chrome://settings", "/relative"):
        refused = await fail(shared, "browser_navigate", url=url)
        assert refused.kind is Kind.PERMISSION, url


async def test_netguard_refuses_a_redirect_to_the_metadata_address(
    shared: ToolContext, site: Site
) -> None:
    result = await fail(shared, "browser_navigate", url=site.url("/to-metadata"))
    assert result.kind is Kind.PERMISSION
    error = json.loads(result.content)["error"]
    assert "redirected to http://169.254.169.254/latest/meta-data/" in error
    assert site.hits["/to-metadata"] >= 1
    # a redirect that stays allowed is followed
    ok = await call(shared, "browser_navigate", url=site.url("/to-other"))
    assert ok["url"] == site.url("/other")
    assert "blocked" not in ok


async def test_refused_subrequests_are_reported(shared: ToolContext, site: Site) -> None:
    out = await call(shared, "browser_navigate", url=site.url("/img-metadata"))
    assert out["title"] == "Img"
    assert [b["url"] for b in out["blocked"]] == ["http://169.254.169.254/latest/meta-data/x.png"]
    assert "refused 1 request" in out["note"]
    ws = await call(shared, "browser_navigate", url=site.url("/ws-metadata"))
    # the socket's failure is asynchronous: the page logs it when it arrives
    waited = await call(shared, "browser_wait_for", text="websocket refused")
    later = await call(shared, "browser_snapshot")
    blocked = ws.get("blocked", []) + waited.get("blocked", []) + later.get("blocked", [])
    assert [b["url"] for b in blocked] == ["ws://169.254.169.254/socket"]


async def test_double_click_and_a_key_with_nothing_focused(shared: ToolContext, site: Site) -> None:
    await call(shared, "browser_navigate", url=site.url("/"))
    out = await call(shared, "browser_click", selector="#go", double=True)
    assert out["clicked"] == "#go"
    assert await text_of(shared, "#status") == "clicked"
    await call(shared, "browser_navigate", url=site.url("/other"))
    pressed = await call(shared, "browser_press_key", key="PageDown")
    assert pressed["url"] == site.url("/other")


async def test_a_title_read_between_documents_is_empty() -> None:
    from yagent.tools.browser.interact import title_of

    error = type("Error", (Exception,), {"__module__": "playwright._impl._errors"})

    class Page:
        def __init__(self, exc: Exception) -> None:
            self.exc = exc

        async def title(self) -> str:
            raise self.exc

    assert await title_of(Page(error("Execution context was destroyed"))) == ""  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        await title_of(Page(KeyError("x")))  # type: ignore[arg-type]
