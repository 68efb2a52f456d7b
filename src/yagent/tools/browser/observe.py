"""browser.observe: the executors that read the browser or manage it — snapshot, screenshot,
eval, tabs, console, close.

Contract:
- `snapshot` returns the current tab's accessibility outline (with element refs) cut at
  `max_chars` on a line boundary; a cut result says so in the text and in `truncated`.
- `screenshot` writes only inside the session's browser directory (`shots.converge`); the result
  gives the path actually written and, when the requested one was not used, a note and the
  request. When the host says the model takes images (`VISION_KEY`, from `[llm] vision` or the
  provider) the image also travels with the result as an image part (`WithImages`,
  `seen_by_model: true`); otherwise — or when it is over `IMAGE_BYTES` — it is only saved, and
  the result says so (`seen_by_model: false` and a note saying why, pointing to
  `browser_snapshot`).
- `eval` returns the JSON value of the expression (round-tripped through JSON, so the adapter can
  always serialise it), cut at `EVAL_MAX_CHARS` with `truncated` set. The guard has already asked
  the user (the spec's `always_authorize`).
- `tabs` never starts a browser just to list nothing; `console` reads what the session kept and
  says how much was older or dropped; `close` says whether anything was running.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.browser.interact import report
from yagent.tools.browser.session import session_for
from yagent.tools.browser.shots import converge
from yagent.tools.hostservices import BROWSER_CONFIG_KEY, BROWSER_SESSION_KEY, USES_BROWSER
from yagent.tools.invocation import needs
from yagent.tools.mcp.content import IMAGE_BYTES, VISION_KEY
from yagent.tools.toolresult import WithImages
from yagent.toolspec import browser as b

EVAL_MAX_CHARS = 20_000  # seam: the serialised value returned to the model, at most
IMAGE_NOTE = (
    "the image was saved for the person at `path`; this model does not take images (tool "
    "results reach it as text): read the page with browser_snapshot"
)
SHOWN_NOTE = "the image is attached to this result; it is also saved at `path`"
LARGE_NOTE = (
    "the image was saved at `path` but not attached: it is over the {limit} byte limit for "
    "images given to the model; take the viewport (full_page false) or a .jpg, or read the page "
    "with browser_snapshot"
)


def cut_snapshot(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut at a line boundary within `limit` characters, with a visible note when cut."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > 0 else limit
    note = (
        f"\n[snapshot truncated: showing {cut} of {len(text)} characters; ask for a larger "
        "max_chars, or wait for / click into the part you need]"
    )
    return text[:cut] + note, True


@USES_BROWSER
async def snapshot(ctx: ToolContext, args: b.SnapshotArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    async with session.acting():
        text = await page.aria_snapshot(mode="ai")
    shown, truncated = cut_snapshot(text, args.max_chars)
    out = {"snapshot": shown, "truncated": truncated, "total_chars": len(text)}
    return await report(session, page, out)


@needs(BROWSER_CONFIG_KEY, VISION_KEY, optional=(BROWSER_SESSION_KEY,))
async def screenshot(ctx: ToolContext, args: b.ScreenshotArgs) -> dict[str, Any] | WithImages:
    session = session_for(ctx)
    page = await session.page()
    target, note = converge(session.root, args.path)
    fmt: Literal["jpeg", "png"] = "jpeg" if target.suffix.lower() in (".jpg", ".jpeg") else "png"
    async with session.acting():
        data = await page.screenshot(path=target, full_page=args.full_page, type=fmt)
    vision = ctx.services.get(VISION_KEY) is True
    attach = vision and len(data) <= IMAGE_BYTES
    explain = (
        SHOWN_NOTE if attach else LARGE_NOTE.format(limit=IMAGE_BYTES) if vision else IMAGE_NOTE
    )
    out: dict[str, Any] = {
        "path": str(target),
        "bytes": len(data),
        "format": fmt,
        "seen_by_model": attach,
        "note": explain,
    }
    if note:
        out.update(requested=args.path, path_note=note)
    out = await report(session, page, out)
    if not attach:
        return out
    return WithImages(out, ((f"image/{fmt}", base64.b64encode(data).decode("ascii")),))


@USES_BROWSER
async def evaluate(ctx: ToolContext, args: b.EvalArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    async with session.acting():
        value = await page.evaluate(args.expression)
    encoded = json.dumps(value, ensure_ascii=False, default=str)
    if len(encoded) > EVAL_MAX_CHARS:
        out: dict[str, Any] = {
            "value_json": encoded[:EVAL_MAX_CHARS],
            "truncated": True,
            "total_chars": len(encoded),
            "note": f"the value's JSON was cut at {EVAL_MAX_CHARS} characters; "
            "return a smaller part of it",
        }
    else:
        out = {"value": json.loads(encoded), "truncated": False}
    return await report(session, page, out)


@USES_BROWSER
async def tabs(ctx: ToolContext, args: b.TabsArgs) -> dict[str, Any]:
    session = session_for(ctx)
    if args.action == "list" and not session.running:
        return {"tabs": [], "current": None, "running": False}
    page = await session.page()
    if args.action == "new":
        if args.url:
            await session.check_url(args.url)
        page = await session.new_tab()
        if args.url:
            async with session.acting():
                await page.goto(args.url, wait_until="load")
    elif args.action == "select":
        if args.index is None:
            raise ToolFailure(Kind.INVALID_ARGS, "select needs the tab index")
        page = session.select_tab(args.index)
        async with session.acting():
            await page.bring_to_front()
    elif args.action == "close":
        index = session.current_index if args.index is None else args.index
        async with session.acting():
            await session.close_tab(index)
        page = await session.page()
    listing = await session.tabs()
    out = await report(session, page, {"action": args.action})
    out.update(tabs=listing, current=session.current_index, running=True)
    return out


@USES_BROWSER
async def console(ctx: ToolContext, args: b.ConsoleArgs) -> dict[str, Any]:
    session = session_for(ctx)
    kept = list(session.console)
    shown = kept[-args.limit :]
    out = {
        "messages": shown,
        "older_not_shown": len(kept) - len(shown),
        "dropped": session.console_dropped,
        "cleared": args.clear,
        # the browser's own background requests are refused too; only the count is kept
        "network_refusals_total": session.proxy_refused,
    }
    if args.clear:
        session.console.clear()
        session.console_dropped = 0
    return out


@USES_BROWSER
async def close(ctx: ToolContext, args: b.NoArgs) -> dict[str, Any]:
    return {"closed": await session_for(ctx).close()}
