"""docsync: the README's kernel package table must say what the code says.

The table lives under a `## Kernel packages` heading with the header
`| package | lines | dependencies | responsibility |`. A kernel package is each module file
`<kernel_dir>/<name>.py` (not `__init__`/`__main__`) and each sub-package `<kernel_dir>/<name>/`;
inside a group directory (`KERNEL_GROUPS`: `judge/`, `durable/`, ...) each module file and
sub-package is a package of its own, named `<group>.<name>` (`judge.invoke`, `durable.sideeffect`),
and the group itself has no row.
Judged: every package has exactly one row and every row names a package; the dependencies column
(comma-separated top-level import names, or `none`) equals the package's real third-party imports
(ast, with `sys.stdlib_module_names` as the standard library and the first-party names excluded);
the lines column is within 25 % of the measured production lines (every line of the package's .py
files; the larger of the two is the denominator, so under- and over-statement weigh the same); the
responsibility is not empty. Each mismatch carries the measured value, ready to copy.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from yagent.kernel.archcheck.files import python_files, read_text
from yagent.kernel.archcheck.imports import top_level_names
from yagent.kernel.archcheck.model import KERNEL_GROUPS

HEADER = ("package", "lines", "dependencies", "responsibility")
MAX_DRIFT = 0.25


@dataclass(frozen=True, slots=True)
class Facts:
    name: str
    lines: int
    dependencies: frozenset[str]
    summary: str

    def row(self) -> str:
        deps = ", ".join(sorted(self.dependencies)) or "none"
        return f"| {self.name} | {self.lines} | {deps} | {self.summary or '<responsibility>'} |"


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    package: str
    lines: str
    dependencies: str
    responsibility: str


def _summary(tree: ast.Module) -> str:
    """The docstring's first paragraph on one line, safe inside a table cell."""
    paragraph = (ast.get_docstring(tree) or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split()).replace("|", "\\|")


def measure(
    root: Path,
    kernel_dir: str,
    first_party: frozenset[str],
    groups: frozenset[str] = KERNEL_GROUPS,
) -> dict[str, Facts]:
    """Facts for every kernel package, measured from the code."""
    packages: dict[str, list[str]] = {}
    prefix = kernel_dir.rstrip("/") + "/"
    for path in python_files(root, kernel_dir):
        parts = path[len(prefix) :].split("/")
        if len(parts) > 1 and parts[0] in groups:
            if parts[1:] in (["__init__.py"], ["__main__.py"]):
                continue
            parts = [f"{parts[0]}.{parts[1]}", *parts[2:]]
        if len(parts) > 1:
            packages.setdefault(parts[0], []).append(path)
        elif parts[0] not in ("__init__.py", "__main__.py"):
            packages.setdefault(parts[0].removesuffix(".py"), []).append(path)
    facts: dict[str, Facts] = {}
    for name, paths in sorted(packages.items()):
        lines, summary = 0, ""
        deps: set[str] = set()
        for path in paths:
            text = read_text(root, path)
            lines += len(text.splitlines())
            try:
                tree = ast.parse(text, filename=path)
            except SyntaxError:
                deps.add(f"<unparsable {path}>")
                continue
            deps |= top_level_names(tree)
            own = name.rsplit(".", 1)[-1]
            main = path.endswith((f"/{own}/__init__.py", f"/{own}.py"))
            summary = _summary(tree) if main else summary
        third_party = {d for d in deps if d not in sys.stdlib_module_names} - first_party
        facts[name] = Facts(name, lines, frozenset(third_party), summary)
    return facts


def _cells(line: str) -> list[str]:
    body = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def parse_table(text: str, heading: str) -> tuple[list[Row], list[str]]:
    """Rows of the table under `## <heading>`, or the problems that prevent reading it."""
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if re.fullmatch(rf"##\s+{re.escape(heading)}\s*", line)),
        None,
    )
    if start is None:
        return [], [f"no `## {heading}` heading: the kernel package table is missing"]
    table: list[tuple[int, str]] = []
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if re.match(r"#{1,2}\s", line):
            break
        if line.lstrip().startswith("|"):
            table.append((number, line))
        elif table:
            break
    if len(table) < 2 or tuple(c.lower() for c in _cells(table[0][1])) != HEADER:
        wanted = "| " + " | ".join(HEADER) + " |"
        return [], [f"the table under `## {heading}` must start with the header {wanted}"]
    rows: list[Row] = []
    problems: list[str] = []
    for number, line in table[2:]:
        cells = _cells(line)
        if len(cells) != len(HEADER):
            problems.append(f"line {number}: expected {len(HEADER)} cells, got {len(cells)}")
            continue
        name = cells[0].strip("`").strip()
        rows.append(Row(number, name, cells[1], cells[2], cells[3]))
    return rows, problems


def _claimed_deps(cell: str) -> frozenset[str]:
    if cell.strip().strip("`").lower() in ("none", ""):
        return frozenset()
    return frozenset(d.strip().strip("`").strip() for d in cell.split(",") if d.strip())


def judge_row(row: Row, facts: Facts, readme: str) -> list[str]:
    where = f"{readme}:{row.line}: row {row.package!r}"
    problems: list[str] = []
    digits = re.sub(r"[\s,_~]", "", row.lines)
    if not digits.isdigit():
        problems.append(f"{where}: lines {row.lines!r} is not a number; measured {facts.lines}")
    else:
        claimed = int(digits)
        larger = max(claimed, facts.lines)
        drift = abs(claimed - facts.lines) / larger if larger else 0.0
        if drift > MAX_DRIFT:
            problems.append(
                f"{where}: lines {claimed} vs measured {facts.lines} (drift {drift:.0%} > "
                f"{MAX_DRIFT:.0%}): write {facts.lines}"
            )
    claimed_deps = _claimed_deps(row.dependencies)
    if claimed_deps != facts.dependencies:
        measured = ", ".join(sorted(facts.dependencies)) or "none"
        problems.append(
            f"{where}: dependencies {row.dependencies or '(empty)'!r} but the code imports "
            f"{measured!r}: write {measured}"
        )
    if not row.responsibility.strip():
        hint = f" (its docstring says: {facts.summary})" if facts.summary else ""
        problems.append(f"{where}: responsibility is empty{hint}")
    return problems


def run_docsync(
    root: Path,
    readme: str = "README.md",
    kernel_dir: str = "src/yagent/kernel",
    heading: str = "Kernel packages",
    first_party: frozenset[str] = frozenset({"yagent"}),
    groups: frozenset[str] = KERNEL_GROUPS,
) -> list[str]:
    """Every mismatch between the README's kernel package table and the code (empty: in sync)."""
    try:
        text = (root / readme).read_text(encoding="utf-8")
    except OSError as exc:
        return [f"{readme}: cannot read: {exc.strerror or exc}"]
    rows, problems = parse_table(text, heading)
    problems = [f"{readme}: {p}" for p in problems]
    facts = measure(root, kernel_dir, first_party, groups)
    seen: set[str] = set()
    for row in rows:
        if row.package in seen:
            problems.append(f"{readme}:{row.line}: package {row.package!r} has more than one row")
            continue
        seen.add(row.package)
        if row.package not in facts:
            where = f"{kernel_dir}/{row.package.replace('.', '/')}"
            problems.append(
                f"{readme}:{row.line}: row {row.package!r} names no kernel package (no "
                f"{where}.py or {where}/): remove the row"
            )
            continue
        problems.extend(judge_row(row, facts[row.package], readme))
    problems.extend(
        f"{readme}: kernel package {name!r} has no row: add {fact.row()}"
        for name, fact in facts.items()
        if name not in seen
    )
    return problems
