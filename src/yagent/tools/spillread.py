"""The `read_spill` executor: pages a cut tool output back from the run's `spill` store.

Contract:
- The output is looked up under the run's session (`ToolContext.session_id`, or `DEFAULT_SESSION`
  when the run has none — the same key the loop stored it under) and the model's locator.
- Page and count are the kernel's: count ≤ 0 ⇒ the default page size, above the cap ⇒ the cap,
  a page below 1 ⇒ page 1; the result repeats what was clamped and names the next page.
- Failures are classified, never empty: no spill store in this run ⇒ `not_found`; an unsafe
  locator (a path, `..`, separators) ⇒ `invalid_args`; an unknown or cleaned-up locator ⇒
  `not_found` saying so.
"""

from __future__ import annotations

from typing import Any

from yagent.kernel.context import spill
from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.toolspec import params as p

DEFAULT_SESSION = "run"


def spill_session(ctx: ToolContext) -> str:
    """The key a run's cut outputs are stored under (shared with the loop's economy)."""
    return ctx.session_id or DEFAULT_SESSION


async def read_spill(ctx: ToolContext, args: p.ReadSpillArgs) -> dict[str, Any]:
    store = ctx.spill
    if store is None:
        raise toolfail.ToolFailure(
            toolfail.Kind.NOT_FOUND, "no cut outputs are stored in this run: nothing to page"
        )
    try:
        page = store.fetch(spill_session(ctx), args.locator, args.page, args.count)
    except spill.BadNameError as exc:
        raise toolfail.ToolFailure(toolfail.Kind.INVALID_ARGS, str(exc)) from exc
    except spill.NotFoundError as exc:
        raise toolfail.ToolFailure(
            toolfail.Kind.NOT_FOUND,
            f"{exc}: the locator is wrong or the stored output was cleaned up",
        ) from exc
    first = (page.page - 1) * page.count + 1
    shown = max(0, min(page.count, page.total_lines - first + 1))
    out: dict[str, Any] = {
        "locator": args.locator,
        "page": page.page,
        "count": page.count,
        "lines": f"{first}-{first + shown - 1}" if shown else "none",
        "total_lines": page.total_lines,
        "has_more": page.has_more,
        "text": page.text,
    }
    if page.has_more:
        out["next"] = {"page": page.page + 1, "count": page.count}
    if page.clamped:
        out["clamped"] = page.clamped
    return out
