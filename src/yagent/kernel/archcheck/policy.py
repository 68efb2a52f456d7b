"""`architecture-policy.yaml`: loading and self-check.

The policy is refused (`PolicyError`, exit 2) when it cannot mean what it says: unreadable YAML,
an unknown key anywhere, a missing or mistyped field, duplicate or reserved ids, `requires` naming
no module, a rule whose pattern does not compile or whose examples disagree with it. Problems that
depend on the tree (a stale root, an exception that excuses nothing) are judged later as
violations, because only the tree can tell.

Shape (version 1)::

    version: 1
    source_root: src
    modules: [{id, roots: [dir or .py file], requires: [module ids], owner,
               import_exempt: [{import: dotted.name, reason}]}]
    kernel: {module: kernel, forbid_outside: true}
    rules: [{id, pattern, paths: [globs], exclude: [globs], message,
             match: [examples], not_match: [examples]}]
    thresholds: {max_file_lines, max_methods_per_type, forwarding_shell_max_chars, enforce,
                 paths: [globs]}
    exceptions: [{rule, path, line, reason, until: YYYY-MM-DD, removal}]
    import_loops: [{modules: [dotted.module], reason}]        # the loop ratchet (`loops`)
    import_directions: [{from: dotted.prefix, forbid: [dotted.prefix], reason}]
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from yagent.kernel.archcheck.model import BUILTIN_RULES
from yagent.kernel.archcheck.rules import PatternRule, compile_pattern
from yagent.kernel.archcheck.schema import Fields

POLICY_VERSION = 1


class PolicyError(Exception):
    """The policy cannot be used; `problems` names each reason."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class ImportExempt:
    target: str
    reason: str


@dataclass(frozen=True, slots=True)
class Module:
    id: str
    roots: tuple[str, ...]
    requires: frozenset[str]
    owner: str
    import_exempt: tuple[ImportExempt, ...] = ()


@dataclass(frozen=True, slots=True)
class Kernel:
    module: str
    forbid_outside: bool = True


@dataclass(frozen=True, slots=True)
class Thresholds:
    max_file_lines: int = 400
    max_methods_per_type: int = 25
    forwarding_shell_max_chars: int = 140
    enforce: bool = True
    paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PolicyException:
    rule: str
    path: str
    line: int | None
    reason: str
    until: dt.date
    removal: str

    def covers(self, rule: str, path: str, line: int) -> bool:
        return self.rule == rule and self.path == path and self.line in (None, line)

    def describe(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"exception {{rule: {self.rule}, path: {where}}}"


@dataclass(frozen=True, slots=True)
class LoopAllowance:
    """An import loop let through while it stays within `modules` (each a dotted module)."""

    modules: frozenset[str]
    reason: str


@dataclass(frozen=True, slots=True)
class ImportDirection:
    """Modules under `source` must not import modules under any `forbid` prefix."""

    source: str
    forbid: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class Policy:
    source_root: str
    modules: tuple[Module, ...]
    kernel: Kernel | None = None
    rules: tuple[PatternRule, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)
    exceptions: tuple[PolicyException, ...] = ()
    import_loops: tuple[LoopAllowance, ...] = ()
    import_directions: tuple[ImportDirection, ...] = ()

    @property
    def rule_ids(self) -> frozenset[str]:
        return BUILTIN_RULES | {rule.id for rule in self.rules}


def _clean_dir(path: str) -> str:
    return path.strip().strip("/").removeprefix("./")


def _modules(doc: Fields, problems: list[str]) -> tuple[Module, ...]:
    modules: list[Module] = []
    entries = doc.items("modules")
    if not entries:
        problems.append("modules: at least one module is required")
    for entry in entries:
        exempts = []
        for item in entry.items("import_exempt"):
            exempts.append(ImportExempt(item.text("import"), item.text("reason")))
            item.done()
        modules.append(
            Module(
                id=entry.text("id"),
                roots=tuple(_clean_dir(r) for r in entry.texts("roots", required=True)),
                requires=frozenset(entry.texts("requires")),
                owner=entry.text("owner"),
                import_exempt=tuple(exempts),
            )
        )
        entry.done()
    ids = [m.id for m in modules]
    known = set(ids)
    roots: dict[str, str] = {}
    for index, module in enumerate(modules):
        if ids.count(module.id) > 1:
            problems.append(f"modules[{index}].id: duplicate module id {module.id!r}")
        problems.extend(
            f"modules[{index}].requires: {req!r} names no module"
            for req in sorted(module.requires - known)
        )
        for root in module.roots:
            if root in roots and roots[root] != module.id:
                problems.append(
                    f"modules[{index}].roots: {root!r} is already a root of {roots[root]!r}"
                )
            roots[root] = module.id
    return tuple(modules)


def _rules(doc: Fields, problems: list[str]) -> tuple[PatternRule, ...]:
    rules: list[PatternRule] = []
    for entry in doc.items("rules"):
        rule_id, pattern = entry.text("id"), entry.text("pattern")
        paths, exclude = entry.texts("paths", required=True), entry.texts("exclude")
        message = entry.text("message")
        match, not_match = entry.texts("match", required=True), entry.texts("not_match")
        entry.done()
        compiled = compile_pattern(pattern) if pattern else None
        if isinstance(compiled, str):
            problems.append(f"{entry.at('pattern')} ({rule_id}): does not compile: {compiled}")
        if compiled is None or isinstance(compiled, str):
            continue
        if rule_id in BUILTIN_RULES:
            problems.append(f"{entry.at('id')}: {rule_id!r} is a built-in rule id")
        if any(r.id == rule_id for r in rules):
            problems.append(f"{entry.at('id')}: duplicate rule id {rule_id!r}")
        rule = PatternRule(rule_id, compiled, paths, exclude, message, match, not_match)
        problems.extend(rule.example_problems(entry.where))
        rules.append(rule)
    return tuple(rules)


def _thresholds(doc: Fields, source_root: str) -> Thresholds:
    default_paths = (f"{source_root}/**/*.py",)
    section = doc.section("thresholds")
    if section is None:
        return Thresholds(paths=default_paths)
    thresholds = Thresholds(
        max_file_lines=section.number("max_file_lines", 400, minimum=1),
        max_methods_per_type=section.number("max_methods_per_type", 25, minimum=1),
        forwarding_shell_max_chars=section.number("forwarding_shell_max_chars", 140),
        enforce=section.flag("enforce", True),
        paths=section.texts("paths") or default_paths,
    )
    section.done()
    return thresholds


def _exceptions(doc: Fields) -> tuple[PolicyException, ...]:
    out: list[PolicyException] = []
    for entry in doc.items("exceptions"):
        line = entry.number("line", -1) if "line" in entry.data else None
        out.append(
            PolicyException(
                rule=entry.text("rule"),
                path=_clean_dir(entry.text("path")),
                line=None if line == -1 else line,
                reason=entry.text("reason"),
                until=entry.date("until"),
                removal=entry.text("removal"),
            )
        )
        entry.done()
    return tuple(out)


def _import_loops(doc: Fields, problems: list[str]) -> tuple[LoopAllowance, ...]:
    out: list[LoopAllowance] = []
    for entry in doc.items("import_loops"):
        modules = entry.texts("modules", required=True)
        reason = entry.text("reason")
        entry.done()
        if len(modules) < 2:
            problems.append(f"{entry.at('modules')}: a loop needs at least two modules")
        out.append(LoopAllowance(frozenset(modules), reason))
    return tuple(out)


def _import_directions(doc: Fields) -> tuple[ImportDirection, ...]:
    out: list[ImportDirection] = []
    for entry in doc.items("import_directions"):
        out.append(
            ImportDirection(
                source=entry.text("from"),
                forbid=entry.texts("forbid", required=True),
                reason=entry.text("reason"),
            )
        )
        entry.done()
    return tuple(out)


def parse_policy(data: object, source: str = "<policy>") -> Policy:
    problems: list[str] = []
    doc = Fields(data, "", problems)
    version = doc.number("version", 0)
    if "version" in doc.data and version != POLICY_VERSION:
        problems.append(f"version: this gate reads version {POLICY_VERSION}, got {version!r}")
    elif "version" not in doc.data:
        problems.append("version: required key is missing")
    source_root = _clean_dir(doc.text("source_root"))
    modules = _modules(doc, problems)
    for index, module in enumerate(modules):
        problems.extend(
            f"modules[{index}].roots: {root!r} does not lie under source_root {source_root!r}"
            for root in module.roots
            if source_root and root != source_root and not root.startswith(source_root + "/")
        )
    kernel = None
    section = doc.section("kernel")
    if section is not None:
        kernel = Kernel(section.text("module"), section.flag("forbid_outside", True))
        section.done()
        if kernel.module and kernel.module not in {m.id for m in modules}:
            problems.append(f"kernel.module: {kernel.module!r} names no module")
    rules = _rules(doc, problems)
    thresholds = _thresholds(doc, source_root)
    exceptions = _exceptions(doc)
    loops = _import_loops(doc, problems)
    directions = _import_directions(doc)
    doc.done()
    if problems:
        raise PolicyError(source, problems)
    return Policy(source_root, modules, kernel, rules, thresholds, exceptions, loops, directions)


def load_policy(path: Path) -> Policy:
    """Read and self-check the policy at `path`; raise `PolicyError` naming every problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(str(path), [f"cannot read: {exc.strerror or exc}"]) from exc
    except yaml.YAMLError as exc:
        raise PolicyError(str(path), [f"not valid YAML: {exc}"]) from exc
    return parse_policy(data, str(path))
