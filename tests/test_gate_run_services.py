"""Gate: a run module reads only the app services its bundle declares (`app.services`).

A run module is any module of `yagent.app` that imports `yagent.app.services` (bar `services`
itself and `assemble`, which builds the app). Its bundle is the one `app.services` protocol its
`services` parameters (and its `self.services` attributes) are annotated with — the same one
throughout the module. Every `services.X` and
`self.services.X` read in the module (also through a local alias of `self.services`) must be a
member of that bundle, its bases included; `services` used any other way than a member read or
as an argument handed on (`getattr(services, ...)`, a subscript) fails too, and so does reaching
the services another object holds (`runner.services.board`: a read past the bundle). Handing
`services` on to another run module is judged by mypy (the callee's bundle must be a base of the
caller's).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

import yagent.app

APP = Path(yagent.app.__file__).resolve().parent
SERVICES = APP / "services.py"
NOT_RUN_MODULES = {"services", "assemble"}


@dataclass
class Bundle:
    name: str
    own: set[str]
    bases: list[str]


def bundles(source: str) -> dict[str, Bundle]:
    """The protocols of `app.services`: their own members and their bases."""
    out: dict[str, Bundle] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        own: set[str] = set()
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                own.add(item.target.id)
            elif isinstance(
                item, ast.FunctionDef | ast.AsyncFunctionDef
            ) and not item.name.startswith("_"):
                own.add(item.name)
        bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id != "Protocol"]
        out[node.name] = Bundle(node.name, own, bases)
    return out


def members(name: str, found: dict[str, Bundle]) -> set[str]:
    bundle = found[name]
    out = set(bundle.own)
    for base in bundle.bases:
        if base in found:
            out |= members(base, found)
    return out


@dataclass
class Reading:
    """What one run module declares and reads."""

    declared: set[str] = field(default_factory=set)  # bundle names its annotations give
    reads: dict[str, int] = field(default_factory=dict)  # member -> first line
    problems: list[str] = field(default_factory=list)


def _annotation(node: ast.expr | None) -> str:
    if node is None:
        return "(none)"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)


def _is_services(node: ast.expr, aliases: set[str]) -> bool:
    """`services`, `self.services`, or a local alias of `self.services`."""
    if isinstance(node, ast.Name):
        return node.id == "services" or node.id in aliases
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "services"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


# a `tools.adapter.ToolContext`'s `services` are the run's typed slots for executors, not the app's
TOOL_CONTEXTS = {"ctx"}
OPAQUE = {"getattr", "setattr", "hasattr", "delattr", "vars", "dir"}


def read(source: str) -> Reading:
    """The bundles a run module's annotations name and the members it reads."""
    tree = ast.parse(source)
    out = Reading()
    aliases: set[str] = set()
    accounted: set[int] = set()  # service nodes whose use is a read, a binding or a hand-on
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == "services":
            out.declared.add(_annotation(node.annotation))
        elif isinstance(node, ast.AnnAssign) and _is_services(node.target, set()):
            out.declared.add(_annotation(node.annotation))
            if node.value is not None:
                accounted.add(id(node.value))
        elif isinstance(node, ast.Assign):  # an alias: name = services (in a tuple too)
            target, value = node.targets[0], node.value
            pairs = (
                list(zip(target.elts, value.elts, strict=False))
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                else [(target, value)]
            )
            for bound, source_node in pairs:
                if not _is_services(source_node, {"services"}):
                    continue
                if isinstance(bound, ast.Name):
                    aliases.add(bound.id)
                    accounted.add(id(source_node))
                elif _is_services(bound, set()):  # self.services = services
                    accounted.add(id(source_node))
    aliases.discard("services")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_services(node.value, aliases):
            out.reads.setdefault(node.attr, node.lineno)
            accounted.add(id(node.value))
        elif isinstance(node, ast.Call):
            handed = [a for a in node.args if _is_services(a, aliases)]
            handed += [k.value for k in node.keywords if _is_services(k.value, aliases)]
            if isinstance(node.func, ast.Name) and node.func.id in OPAQUE:
                continue  # reflection reads what no one declared: left unaccounted
            accounted |= {id(a) for a in handed}  # handed on: mypy judges the callee's bundle
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "services"
            and not _is_services(node, aliases)
            and not (isinstance(node.value, ast.Name) and node.value.id in TOOL_CONTEXTS)
        ):
            out.problems.append(
                f"line {node.lineno}: reaches another object's services: {ast.unparse(node)!r}"
            )
        if (
            isinstance(node, ast.Name | ast.Attribute)
            and _is_services(node, aliases)
            and id(node) not in accounted
            and not isinstance(node.ctx, ast.Store)
        ):
            out.problems.append(f"line {node.lineno}: services used as {ast.unparse(node)!r}")
    return out


def judge(module: str, source: str, found: dict[str, Bundle]) -> list[str]:
    reading = read(source)
    bad = [f"{module}: {p}" for p in reading.problems]
    if not reading.declared:
        return [*bad, f"{module}: imports app.services but no `services` is annotated"]
    if len(reading.declared) > 1:
        return [*bad, f"{module}: `services` is annotated {sorted(reading.declared)}, not one"]
    (bundle,) = reading.declared
    if bundle not in found:
        return [*bad, f"{module}: `services: {bundle}` is no protocol of app.services"]
    allowed = members(bundle, found)
    return bad + [
        f"{module}:{line} reads services.{name}, which {bundle} does not declare"
        for name, line in sorted(reading.reads.items())
        if name not in allowed
    ]


def run_modules() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(APP.glob("*.py")):
        if path.stem in NOT_RUN_MODULES:
            continue
        source = path.read_text()
        imports = any(
            isinstance(n, ast.ImportFrom) and n.module == "yagent.app.services"
            for n in ast.walk(ast.parse(source))
        )
        if imports:
            out[path.stem] = source
    return out


def figures() -> list[dict[str, object]]:
    """Per run module: the members its bundle gives it, and those it reads itself."""
    found = bundles(SERVICES.read_text())
    union = len(set().union(*(members(name, found) for name in found)))
    rows = []
    for module, source in run_modules().items():
        reading = read(source)
        bundle = next(iter(reading.declared))
        rows.append(
            {
                "module": f"app.{module}",
                "bundle": bundle,
                "receives": len(members(bundle, found)),
                "reads": len(reading.reads),
                "of": union,
            }
        )
    return rows


def test_every_run_module_reads_only_what_its_bundle_declares() -> None:
    found = bundles(SERVICES.read_text())
    modules = run_modules()
    assert {"turn", "lanerun", "fanout", "fanrun", "delegation", "delegationresume"} <= set(modules)
    bad = [v for module, source in modules.items() for v in judge(module, source, found)]
    assert bad == []
    print("\n".join(json.dumps(row) for row in figures()))


FIXTURE = """
from yagent.app.services import LaneServices

class Lanes:
    def __init__(self, services: LaneServices) -> None:
        self.services = services

    async def go(self) -> None:
        services = self.services
        await services.run("t")
        return services.{read}
"""


def test_a_read_the_bundle_does_not_declare_fails() -> None:
    found = bundles(SERVICES.read_text())
    assert judge("fixture", FIXTURE.format(read="run"), found) == []
    assert judge("fixture", FIXTURE.format(read="store"), found) == [
        "fixture:11 reads services.store, which LaneServices does not declare"
    ]


def test_the_app_two_bundles_or_an_opaque_use_fails() -> None:
    found = bundles(SERVICES.read_text())
    app = "def f(services: App) -> None:\n    services.run\n"
    assert judge("m", app, found) == ["m: `services: App` is no protocol of app.services"]
    two = "def f(services: LaneServices) -> None: ...\ndef g(services: PlanServices) -> None: ...\n"
    assert "not one" in judge("m", two, found)[0]
    handed = "def f(services: LaneServices) -> None:\n    g(services, also=services)\n"
    assert judge("m", handed, found) == []  # handed on: mypy judges the callee's bundle
    opaque = "def f(services: LaneServices) -> None:\n    getattr(services, 'store')\n"
    assert judge("m", opaque, found) == ["m: line 2: services used as 'services'"]
    other = "def f(services: LaneServices, runner: R) -> None:\n    runner.services.board\n"
    assert judge("m", other, found) == [
        "m: line 2: reaches another object's services: 'runner.services'"
    ]
    indexed = "def f(services: LaneServices) -> None:\n    x = [services][0].store\n"
    assert judge("m", indexed, found) == ["m: line 2: services used as 'services'"]
