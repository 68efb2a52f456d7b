"""browser.interact: the executors that act on the current tab — navigate, back, click, type,
select, hover, press a key, wait.

Contract:
- A navigation URL is judged by netguard before the browser sees it (refusal: PERMISSION, with
  netguard's reason and how the person opens a local target; nothing loaded); a redirect hop the
  proxy refuses fails the navigation (PERMISSION, naming the hop).
  Subrequests the proxy refused during any action are listed in the result (`blocked`) with a
  note, never dropped silently.
- Elements are addressed by a snapshot `ref` or a Playwright selector that must match exactly
  one element. A ref that is not on the page any more (the page changed since its snapshot)
  fails at once, NOT_FOUND, asking for a new snapshot. Playwright's errors come back as
  classified tool failures (`session.acting`).
- Every result says where the tab is afterwards (url, title, tab index, tab count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.browser.failures import is_playwright, stale_ref
from yagent.tools.browser.session import BrowserSession, session_for
from yagent.tools.hostservices import USES_BROWSER
from yagent.toolspec import browser as b

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page


async def title_of(page: Page) -> str:
    """The tab's title, or "" while it is between documents (the title is not worth a failure)."""
    try:
        return await page.title()
    except Exception as exc:
        if type(exc).__module__.startswith("playwright."):
            return ""
        raise


async def report(
    session: BrowserSession,
    page: Page,
    out: dict[str, Any],
    refusals: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The common tail of a result: where the tab is now, and what the guard refused meanwhile."""
    blocked = (refusals or []) + session.take_refusals()
    out.update(
        url=page.url,
        title=await title_of(page),
        tab=session.current_index,
        tabs=session.tab_count,
    )
    if blocked:
        out["blocked"] = blocked
        refused = (
            f"the network guard refused {len(blocked)} request(s) the page made; "
            "it may be incomplete"
        )
        out["note"] = f"{out['note']}; {refused}" if out.get("note") else refused
    return out


async def locate(session: BrowserSession, page: Page, args: b.TargetArgs) -> Locator:
    """The element `args` names. A ref no longer on the page fails at once (NOT_FOUND: take a
    new snapshot) instead of waiting out the action timeout for an element that cannot come."""
    if not args.ref:
        return page.locator(args.selector)
    target = page.locator(f"aria-ref={args.ref}")
    async with session.acting():
        try:
            present = await target.count()
        except Exception as exc:  # a ref of a frame that is gone is refused by Playwright
            if not (is_playwright(exc) and "aria-ref" in str(exc)):
                raise
            present = 0
    if present == 0:
        raise stale_ref(args.ref, page.url)
    return target


async def _settle(page: Page) -> None:
    # An action may have started a navigation; let it finish before the result is read.
    await page.wait_for_load_state("load")


@USES_BROWSER
async def navigate(ctx: ToolContext, args: b.NavigateArgs) -> dict[str, Any]:
    session = session_for(ctx)
    await session.check_url(args.url)
    page = await session.page()
    async with session.acting():
        response = await page.goto(args.url, wait_until="load")
    refusals = session.take_refusals()
    if response is not None:
        for refusal in refusals:
            if refusal["url"] == response.url:
                raise ToolFailure(
                    Kind.PERMISSION,
                    f"{args.url} redirected to {response.url}, which the network guard refused: "
                    f"{refusal['reason']}",
                )
    status = response.status if response is not None else None
    return await report(session, page, {"status": status}, refusals)


@USES_BROWSER
async def back(ctx: ToolContext, args: b.NoArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    before = page.url
    async with session.acting():
        await page.go_back(wait_until="load")
    return await report(session, page, {"moved": page.url != before, "from": before})


@USES_BROWSER
async def click(ctx: ToolContext, args: b.ClickArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    target = await locate(session, page, args)
    async with session.acting():
        if args.double:
            await target.dblclick(button=args.button)
        else:
            await target.click(button=args.button)
        await _settle(page)
    return await report(session, page, {"clicked": args.ref or args.selector})


@USES_BROWSER
async def type_text(ctx: ToolContext, args: b.TypeArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    target = await locate(session, page, args)
    async with session.acting():
        prefix = "" if args.clear else await target.input_value()
        await target.fill(prefix + args.text)
        if args.submit:
            await target.press("Enter")
            await _settle(page)
    out = {"typed": len(args.text), "into": args.ref or args.selector, "submitted": args.submit}
    return await report(session, page, out)


@USES_BROWSER
async def select(ctx: ToolContext, args: b.SelectArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    async with session.acting():
        selected = await (await locate(session, page, args)).select_option(args.values)
    return await report(session, page, {"selected": selected})


@USES_BROWSER
async def hover(ctx: ToolContext, args: b.HoverArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    async with session.acting():
        await (await locate(session, page, args)).hover()
    return await report(session, page, {"hovered": args.ref or args.selector})


@USES_BROWSER
async def press_key(ctx: ToolContext, args: b.PressKeyArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    focused = page.locator("*:focus")
    async with session.acting():
        # Through the focused element when there is one: a locator action waits for the
        # navigation it starts (Enter in a form), where a bare keyboard press would not.
        if await focused.count() == 1:
            await focused.press(args.key)
        else:
            await page.keyboard.press(args.key)
        await _settle(page)
    return await report(session, page, {"pressed": args.key})


@USES_BROWSER
async def wait_for(ctx: ToolContext, args: b.WaitForArgs) -> dict[str, Any]:
    session = session_for(ctx)
    page = await session.page()
    target = page.get_by_text(args.text) if args.text else page.locator(args.selector)
    state: Literal["hidden", "visible"] = "hidden" if args.gone else "visible"
    async with session.acting():
        await target.first.wait_for(state=state, timeout=args.timeout * 1000)
    out = {"waited_for": args.text or args.selector, "state": state}
    return await report(session, page, out)
