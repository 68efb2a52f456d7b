"""Flow-control, cognitive and meta executors: think, agent_exit, ask_user_for_help, load_tool.

Contract:
- `agent_exit` echoes its arguments, it does not interpret them: every
  key of its schema is copied into the result, plus `finished: true`. Whether that ends the run is
  the exit policy's decision, one layer up.
- `ask_user_for_help` goes through the same authorization loop (the dispatcher's critical queue);
  without a person attached it says so instead of waiting forever.
- `load_tool` loads catalog tools by name or by query through the Surface's `Disclosure`, within the
  load budget, and reports what was added, already there, trimmed or unknown. When the host binds a
  blueprint view (services slot `BLUEPRINT_KEY`, `tools.hostservices`; a callable read on every
  call), a non-empty view comes with the result under `blueprint` (Director constraint C6: the
  cold-tool loader sees it).
"""

from __future__ import annotations

from typing import Any

from yagent.kernel.judge import tooldisclose
from yagent.tools.adapter import ToolContext
from yagent.tools.hostservices import BLUEPRINT_KEY
from yagent.tools.invocation import needs
from yagent.toolspec import params as p

LOAD_BUDGET = tooldisclose.Budget(max_schemas=8)
SEARCH_K = 5


async def think(ctx: ToolContext, args: p.ThinkArgs) -> dict[str, Any]:
    return {"ok": True}


async def agent_exit(ctx: ToolContext, args: p.AgentExitArgs) -> dict[str, Any]:
    echoed = {key: getattr(args, key) for key in p.AgentExitArgs.model_fields}
    return {"finished": True, **echoed}


async def ask_user_for_help(ctx: ToolContext, args: p.AskUserArgs) -> dict[str, Any]:
    if ctx.confirm is None:
        return {
            "answered": False,
            "answer": "",
            "note": "no person is attached to this run; decide yourself and state your assumption",
        }
    answer = await ctx.confirm.ask(
        "question",
        {"question": args.question, "options": args.options or []},
        delegation_id=ctx.delegation_id,
    )
    if answer.timed_out:
        return {"answered": False, "answer": "", "note": answer.text}
    return {"answered": True, "answer": answer.text}


@needs(BLUEPRINT_KEY)
async def load_tool(ctx: ToolContext, args: p.LoadToolArgs) -> dict[str, Any]:
    disclosure = ctx.surface.disclosure
    wanted = list(args.names or [])
    found: list[str] = []
    if args.query:
        hits = disclosure.catalog.search(args.query, SEARCH_K)
        found = [n for n in hits.names if not disclosure.is_visible(n)]
    if not wanted and not args.query:
        return {"error": "give names or a query", "catalog": ctx.surface.catalog_text()}
    result = disclosure.load([*wanted, *found], LOAD_BUDGET)
    out: dict[str, Any] = {
        "loaded": list(result.added),
        "already_loaded": list(result.already),
        "unknown": list(result.unknown),
    }
    if result.trimmed:
        out["trimmed"] = list(result.trimmed)
        out["note"] = (
            f"load budget is {LOAD_BUDGET.max_schemas} tools per call; "
            "load the trimmed ones in another call"
        )
    if args.query and not found and not wanted:
        out["note"] = f"no catalog tool matches {args.query!r}"
    blueprint = ctx.services.get(BLUEPRINT_KEY)
    if blueprint is not None and (shown := blueprint()):
        out["blueprint"] = shown
    return out
