"""The executor registry: built-in tool name → executor. The only place names meet code.

`executors()` covers every built-in `Spec` exactly (a test checks both directions); external tools
(MCP) bring their own executors. Nothing else in yagent branches on a tool's name.

Contract:
- Each built-in executor is a `LazyExecutor`: its module and attribute, imported at its first
  call (a run that never calls the browser, the web, programs or search never loads them). A
  module that cannot be imported, or an attribute that is not there, fails that call — a failed
  tool result, like any executor's failure — and nothing else.
- The services each executor reads are declared twice, checked equal: on the executor
  (`tools.invocation.needs`, with the slots of `tools.hostservices`), so it can be used without
  the registry, and here beside its name, so the host's check before the first call
  (`Adapter.require_services`) and the per-call scoping of services need no executor module
  loaded. An executor whose own declaration differs from the registry's is not run: its first
  call fails naming both (`DeclarationMismatchError`). `tests/test_gate_services.py` follows
  every executor's code and fails when it reads a slot not declared.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from yagent.tools.adapter import Executor, ToolContext
from yagent.tools.hostservices import (
    ADAPTER_KEY,
    BLUEPRINT_KEY,
    BROWSER_CONFIG_KEY,
    BROWSER_SESSION_KEY,
    OBSERVER_KEY,
    READER_KEY,
    RUNNER_KEY,
    USES_BROWSER,
    WEB_CONFIG_KEY,
)
from yagent.tools.invocation import PUBLISH, Needs, declared, needs
from yagent.tools.mcp.content import VISION_KEY


class DeclarationMismatchError(RuntimeError):
    """An executor declares other services than the registry says it reads."""


def _labels(wanted: Needs) -> str:
    required = sorted(s.label for s in wanted.required)
    optional = sorted(s.label for s in wanted.optional)
    return f"required {required}, optional {optional}"


class LazyExecutor:
    """An executor named by module and attribute; the module is imported at the first call."""

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute
        self._found: Executor | None = None

    def resolve(self) -> Executor:
        """The executor itself (importing its module the first time); see the module contract."""
        if self._found is None:
            found: Executor = getattr(importlib.import_module(self.module), self.attribute)
            if declared(found) != declared(self):
                raise DeclarationMismatchError(
                    f"{self!r}: the registry declares {_labels(declared(self))}, the executor "
                    f"{_labels(declared(found))}"
                )
            self._found = found
        return self._found

    async def __call__(self, ctx: ToolContext, args: Any) -> Any:
        return await self.resolve()(ctx, args)

    def __repr__(self) -> str:
        return f"LazyExecutor({self.module}.{self.attribute})"


def _at(module: str, attribute: str) -> LazyExecutor:
    return LazyExecutor(f"yagent.tools.{module}", attribute)


_PROGRAM = needs(ADAPTER_KEY, OBSERVER_KEY)(_at("program", "run_program"))


@needs(ADAPTER_KEY, OBSERVER_KEY)
async def _run_program(ctx: ToolContext, args: Any) -> Any:
    """run_program with the built-in executors for a context that holds no running adapter."""
    run: Any = _PROGRAM.resolve()
    return await run(ctx, args, builtin=_BUILTIN)


_BUILTIN: Mapping[str, Executor] = {
    "read_file": _at("files.read", "read_file"),
    "write_file": _at("files.write", "write_file"),
    "search_replace_in_file": _at("files.edit", "search_replace_in_file"),
    "list_dir": _at("files.listing", "list_dir"),
    "print_dir_tree": _at("files.listing", "print_dir_tree"),
    "run_bash": needs(PUBLISH)(_at("bash", "run_bash")),
    "list_jobs": _at("bash", "list_jobs"),
    "stop_job": _at("bash", "stop_job"),
    "search": _at("search", "search"),
    "find_definitions": _at("codegraph", "find_definitions"),
    "find_references": _at("codegraph", "find_references"),
    "think": _at("flow", "think"),
    "agent_exit": _at("flow", "agent_exit"),
    "ask_user_for_help": _at("flow", "ask_user_for_help"),
    "load_tool": needs(BLUEPRINT_KEY)(_at("flow", "load_tool")),
    "use_skill": _at("skills", "use_skill"),
    "web_fetch": needs(WEB_CONFIG_KEY)(_at("web", "web_fetch")),
    "run_program": _run_program,
    "delegate": needs(RUNNER_KEY)(_at("delegate", "delegate")),
    "read_spill": _at("spillread", "read_spill"),
    "browser_navigate": USES_BROWSER(_at("browser.interact", "navigate")),
    "browser_back": USES_BROWSER(_at("browser.interact", "back")),
    "browser_snapshot": USES_BROWSER(_at("browser.observe", "snapshot")),
    "browser_click": USES_BROWSER(_at("browser.interact", "click")),
    "browser_type": USES_BROWSER(_at("browser.interact", "type_text")),
    "browser_select": USES_BROWSER(_at("browser.interact", "select")),
    "browser_hover": USES_BROWSER(_at("browser.interact", "hover")),
    "browser_press_key": USES_BROWSER(_at("browser.interact", "press_key")),
    "browser_wait_for": USES_BROWSER(_at("browser.interact", "wait_for")),
    "browser_screenshot": needs(BROWSER_CONFIG_KEY, VISION_KEY, optional=(BROWSER_SESSION_KEY,))(
        _at("browser.observe", "screenshot")
    ),
    "browser_eval": USES_BROWSER(_at("browser.observe", "evaluate")),
    "browser_tabs": USES_BROWSER(_at("browser.observe", "tabs")),
    "browser_console": USES_BROWSER(_at("browser.observe", "console")),
    "browser_close": USES_BROWSER(_at("browser.observe", "close")),
    "list_sessions": needs(READER_KEY)(_at("sessionread", "list_sessions")),
    "read_session": needs(READER_KEY)(_at("sessionread", "read_session")),
}


def executors(extra: Mapping[str, Executor] | None = None) -> dict[str, Executor]:
    """Built-in executors plus `extra` (external tools); a name clash keeps the built-in."""
    out = dict(extra or {})
    out.update(_BUILTIN)
    return out
