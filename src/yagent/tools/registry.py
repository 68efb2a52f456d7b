"""The executor registry: built-in tool name → executor. The only place names meet code.

`executors()` covers every built-in `Spec` exactly (a test checks both directions); external tools
(MCP) bring their own executors. Nothing else in yagent branches on a tool's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yagent.tools import (
    bash,
    browser,
    delegate,
    files,
    flow,
    program,
    search,
    sessionread,
    skills,
    web,
)
from yagent.tools.adapter import Executor, ToolContext
from yagent.tools.codegraph import find_definitions, find_references
from yagent.tools.invocation import needs
from yagent.tools.spillread import read_spill


@needs(program.ADAPTER_KEY, program.OBSERVER_KEY)
async def _run_program(ctx: ToolContext, args: Any) -> Any:
    """run_program with the built-in executors for a context that holds no running adapter."""
    return await program.run_program(ctx, args, builtin=_BUILTIN)


_BUILTIN: Mapping[str, Executor] = {
    "read_file": files.read_file,
    "write_file": files.write_file,
    "search_replace_in_file": files.search_replace_in_file,
    "list_dir": files.list_dir,
    "print_dir_tree": files.print_dir_tree,
    "run_bash": bash.run_bash,
    "list_jobs": bash.list_jobs,
    "stop_job": bash.stop_job,
    "search": search.search,
    "find_definitions": find_definitions,
    "find_references": find_references,
    "think": flow.think,
    "agent_exit": flow.agent_exit,
    "ask_user_for_help": flow.ask_user_for_help,
    "load_tool": flow.load_tool,
    "use_skill": skills.use_skill,
    "web_fetch": web.web_fetch,
    "run_program": _run_program,
    "delegate": delegate.delegate,
    "read_spill": read_spill,
    "browser_navigate": browser.navigate,
    "browser_back": browser.back,
    "browser_snapshot": browser.snapshot,
    "browser_click": browser.click,
    "browser_type": browser.type_text,
    "browser_select": browser.select,
    "browser_hover": browser.hover,
    "browser_press_key": browser.press_key,
    "browser_wait_for": browser.wait_for,
    "browser_screenshot": browser.screenshot,
    "browser_eval": browser.evaluate,
    "browser_tabs": browser.tabs,
    "browser_console": browser.console,
    "browser_close": browser.close,
    "list_sessions": sessionread.list_sessions,
    "read_session": sessionread.read_session,
}


def executors(extra: Mapping[str, Executor] | None = None) -> dict[str, Executor]:
    """Built-in executors plus `extra` (external tools); a name clash keeps the built-in."""
    out = dict(extra or {})
    out.update(_BUILTIN)
    return out
