"""Gate: every service an executor reads is one it declared (`tools.invocation.needs`).

The source of `yagent.tools` is scanned for `….services.get(SLOT)` / `….services.put(SLOT)`. From
each executor (the registry's, and an MCP tool's) the functions it calls are followed — plain
calls and `module.function` calls resolved in the calling module — and every slot read on the
way must be in the executor's declaration. A read site no executor reaches must be listed in
`OUTSIDE` with who answers for it: the host (it sets services on the run's own context), or the
executor whose declaration must cover it (a method called back while that executor's call runs).
So a new read anywhere in tools/ fails here until it is declared.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from yagent.tools import registry
from yagent.tools.invocation import Needs, Slot, declared
from yagent.tools.mcp import client

TOOLS = Path(registry.__file__).resolve().parent
MCP_TOOL = "an MCP tool"
HOST = "host"
# Read sites no executor reaches by a plain call: who answers for each.
OUTSIDE = {
    "yagent.tools.hostservices.configure_web": HOST,
    "yagent.tools.hostservices.configure_browser": HOST,
    "yagent.tools.hostservices.close_browser": HOST,
    "yagent.tools.mcp.inbound.Inbound._said": MCP_TOOL,
    "yagent.tools.mcp.inbound.Inbound._sample": MCP_TOOL,
}


@dataclass
class Fn:
    qualname: str
    module: types.ModuleType
    node: ast.FunctionDef | ast.AsyncFunctionDef
    reads: list[tuple[int, Slot[Any]]] = field(default_factory=list)


def _modules() -> Iterator[types.ModuleType]:
    for path in sorted(TOOLS.rglob("*.py")):
        rel = path.relative_to(TOOLS.parent.parent).with_suffix("")
        name = ".".join(p for p in rel.parts if p != "__init__")
        yield importlib.import_module(name)


def _resolve(module: types.ModuleType, expr: ast.expr) -> Any:
    if isinstance(expr, ast.Name):
        return module.__dict__.get(expr.id)
    if isinstance(expr, ast.Attribute):
        base = _resolve(module, expr.value)
        return getattr(base, expr.attr, None) if base is not None else None
    return None


def _service_arg(node: ast.Call) -> ast.expr | None:
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("get", "put")
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "services"
        and node.args
    ):
        return node.args[0]
    return None


def index() -> dict[tuple[str, int], Fn]:
    """Every function in tools/, keyed by (module, first line incl. decorators)."""
    found: dict[tuple[str, int], Fn] = {}
    for module in _modules():
        tree = ast.parse(inspect.getsource(module))

        def visit(node: ast.AST, prefix: str, module: types.ModuleType = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    fn = Fn(f"{module.__name__}.{prefix}{child.name}", module, child)
                    found[(module.__name__, first)] = fn
                    visit(child, f"{prefix}{child.name}.")
                else:
                    visit(child, prefix)

        visit(tree, "")
        for fn in [f for f in found.values() if f.module is module]:
            for sub in _own_nodes(fn.node):
                if isinstance(sub, ast.Call) and (arg := _service_arg(sub)) is not None:
                    slot = _resolve(module, arg)
                    assert isinstance(slot, Slot), f"{fn.qualname}: {ast.unparse(arg)} is no Slot"
                    fn.reads.append((sub.lineno, slot))
    return found


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of functions or classes defined inside it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield child
        yield from _own_nodes(child)


def _key(obj: object) -> tuple[str, int] | None:
    if isinstance(obj, registry.LazyExecutor):  # declared in the registry, imported when called
        obj = obj.resolve()
    target = inspect.unwrap(obj) if callable(obj) else None
    code = getattr(target, "__code__", None)
    mod = getattr(target, "__module__", "") or ""
    if code is None or not mod.startswith("yagent.tools"):
        return None
    return (mod, code.co_firstlineno)


def reached(start: object, fns: dict[tuple[str, int], Fn]) -> list[Fn]:
    """The function `start` is and every tools function it calls, transitively; a function
    defined inside a reached one (a closure it builds or passes on), and the executor behind a
    `LazyExecutor` it names, count as reached."""
    first = _key(start)
    todo = [fns[first]] if first in fns else []
    seen: dict[str, Fn] = {}
    while todo:
        fn = todo.pop()
        if fn.qualname in seen:
            continue
        seen[fn.qualname] = fn
        for sub in ast.walk(fn.node):
            if isinstance(sub, ast.Call):
                key = _key(_resolve(fn.module, sub.func))
                if key in fns:
                    todo.append(fns[key])
            elif isinstance(sub, ast.Name):  # a lazy executor it resolves and calls
                lazy = fn.module.__dict__.get(sub.id)
                key = _key(lazy) if isinstance(lazy, registry.LazyExecutor) else None
                if key in fns:
                    todo.append(fns[key])
        todo += [f for f in fns.values() if f.qualname.startswith(fn.qualname + ".")]
    return list(seen.values())


def executors() -> dict[str, Callable[..., Any]]:
    out: dict[str, Callable[..., Any]] = dict(registry._BUILTIN)
    out[MCP_TOOL] = client._executor(None, None, "tool", "srv__tool")  # type: ignore[arg-type]
    return out


def violations(fns: dict[tuple[str, int], Fn], execs: dict[str, Callable[..., Any]]) -> list[str]:
    bad: list[str] = []
    covered: set[str] = set()
    for name, executor in execs.items():
        needs: Needs = declared(executor)
        walked = reached(executor, fns)
        assert walked, f"{name}: its executor's source was not found"
        for fn in walked:
            covered.add(fn.qualname)
            bad += [
                f"{name}: {fn.qualname}:{line} reads {slot.label!r}, undeclared"
                for line, slot in fn.reads
                if slot not in needs.slots
            ]
    for fn in fns.values():
        if not fn.reads or fn.qualname in covered:
            continue
        owner = OUTSIDE.get(fn.qualname)
        if owner is None:
            bad.append(f"{fn.qualname} reads services but no executor reaches it (OUTSIDE?)")
        elif owner != HOST and owner not in execs:
            bad.append(f"{fn.qualname} answers to {owner}, which is no executor")
        elif owner != HOST:
            slots = declared(execs[owner]).slots
            bad += [
                f"{owner}: {fn.qualname}:{line} reads {slot.label!r}, undeclared"
                for line, slot in fn.reads
                if slot not in slots
            ]
    return bad


def test_every_service_an_executor_reads_is_declared() -> None:
    assert violations(index(), executors()) == []


def test_the_gate_sees_reads_through_helpers_and_flags_an_undeclared_one() -> None:
    fns = index()
    execs = executors()
    walked = {f.qualname for f in reached(execs["browser_click"], fns)}
    assert "yagent.tools.browser.session.session_for" in walked  # a helper's read is followed
    stripped = dict(execs)

    async def click(ctx: Any, args: Any) -> Any:  # same body, no declaration
        return await execs["browser_click"](ctx, args)

    stripped["browser_click"] = click
    fns[_key(click)] = fns[_key(execs["browser_click"])]  # type: ignore[index]
    found = violations(fns, stripped)
    assert any(v.startswith("browser_click:") and "yagent.browser.config" in v for v in found)


def test_an_unlisted_read_site_nobody_reaches_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    fns, execs = index(), executors()
    monkeypatch.delitem(OUTSIDE, "yagent.tools.hostservices.configure_web")
    found = violations(fns, execs)
    assert found == [
        "yagent.tools.hostservices.configure_web reads services but no executor reaches it "
        "(OUTSIDE?)"
    ]
    del execs[MCP_TOOL]  # the methods it answers for now answer to nobody
    assert any("Inbound._said answers to an MCP tool" in v for v in violations(fns, execs))
