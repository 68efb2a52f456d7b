"""Gate: every service an executor reads is one it declared (`tools.invocation.needs`).

The source of `yagent.tools` is scanned for `….services.get(SLOT)` / `….services.put(SLOT)`. From
each executor (the registry's, and an MCP tool's) the functions it calls are followed — plain
calls and `module.function` calls resolved in the calling module, a class's constructor
(`__init__`, `__post_init__`) when the class is called, `self.m()` / `cls.m()` to the method of
the enclosing class, and `obj.m()` on any other object to every method named `m` of the classes
of the calling module (a call graph over the module's functions: which object it is, is not
known, so each is taken) — and every slot read on the way must be in the executor's
declaration. A read site no executor reaches must be listed in
`OUTSIDE` with who answers for it: the host (it sets services on the run's own context), or the
executor whose declaration must cover it (a method called back while that executor's call runs).
So a new read anywhere in tools/ fails here until it is declared.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from collections.abc import Callable, Iterable, Iterator
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


def index(modules: Iterable[types.ModuleType] | None = None) -> dict[tuple[str, int], Fn]:
    """Every function in tools/ (or in `modules`), keyed by (module, first line incl.
    decorators)."""
    found: dict[tuple[str, int], Fn] = {}
    for module in _modules() if modules is None else modules:
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
    if code is None:
        return None
    return (mod, code.co_firstlineno)


CONSTRUCTORS = ("__init__", "__post_init__")


def _callees(fn: Fn, call: ast.Call, fns: dict[tuple[str, int], Fn]) -> list[Fn]:
    """The functions of the index `call` (inside `fn`) may run."""
    target = _resolve(fn.module, call.func)
    if inspect.isclass(target):  # a class called: its constructor runs
        found = [_key(target.__dict__.get(name)) for name in CONSTRUCTORS]
        return [fns[k] for k in found if k in fns]
    key = _key(target)
    if key in fns:
        return [fns[key]]
    func = call.func
    if not isinstance(func, ast.Attribute):
        return []
    owner = fn.qualname.rsplit(".", 1)[0]  # the enclosing class, for a method
    on_self = isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    prefix = f"{fn.module.__name__}."
    methods = [
        f
        for f in fns.values()
        if f.module is fn.module
        and f.qualname.startswith(prefix)
        and f.qualname.count(".") - prefix.count(".") == 1  # Class.method, not a function
        and f.qualname.rsplit(".", 1)[1] == func.attr
    ]
    if on_self:  # the enclosing class's own method, else the same name elsewhere in the module
        own = [f for f in methods if f.qualname.rsplit(".", 1)[0] == owner]
        return own or methods
    return methods


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
                todo += _callees(fn, sub, fns)
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


def test_reads_through_methods_in_the_module_are_followed() -> None:
    """A read inside a method an executor calls — on self, on an object it made or was handed,
    in a constructor — is the executor's read (tests/gate_services_fixture.py)."""
    from tests import gate_services_fixture as fx

    fns = index([fx])
    execs: dict[str, Callable[..., Any]] = {
        "method": fx.through_a_method,
        "handed": fx.through_an_object_handed_on,
        "made": fx.through_a_constructor,
        "declared": fx.declared_both,
    }
    found = violations(fns, execs)
    where = [re.match(r"(\w+): (\S+):\d+ reads 'fixture: read through a method'", v) for v in found]
    assert sorted(f"{m[1]} {m[2]}" for m in where if m) == [
        "handed tests.gate_services_fixture.Reader.read_for",
        "made tests.gate_services_fixture.Opener.__init__",
        "method tests.gate_services_fixture.Helper._hidden",
    ]
    assert len(found) == 3
