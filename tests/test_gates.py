"""Source-scanning gates over the whole product.

No module outside the registry dispatches on a tool's name: comparisons with a built-in tool
name (`==`, `!=`, `in (...)`), `match` cases on one, or dict keys of one. The registry
(`yagent.toolspec`, `yagent.tools.registry`) is the only place names meet code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from yagent.toolspec.builtin import BUILTIN

SRC = Path(__file__).resolve().parents[1] / "src" / "yagent"
ALLOWED = {SRC / "tools" / "registry.py"}
# The registry itself, and the kernel, which knows no tool names at all (archcheck's
# `kernel-no-tool-names` rule holds it to that; words like `think` there are not tool names).
ALLOWED_DIRS = {SRC / "toolspec", SRC / "kernel"}
NAMES = {spec.name for spec in BUILTIN}


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def offences(tree: ast.AST) -> list[int]:
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                elts = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else []
                if _is_name(operand) or any(_is_name(e) for e in elts):
                    lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and any(_is_name(n) for n in ast.walk(node.pattern)):
            lines.append(node.pattern.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and _is_name(k) for k in node.keys):
            lines.append(node.lineno)
    return lines


def test_no_dispatch_on_tool_names_outside_the_registry() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path in ALLOWED or any(d in path.parents for d in ALLOWED_DIRS):
            continue
        tree = ast.parse(path.read_text(), str(path))
        found.extend(f"{path.relative_to(SRC)}:{line}" for line in offences(tree))
    assert found == [], "dispatch on tool names outside the registry: " + ", ".join(found)


def test_the_gate_catches_each_form() -> None:
    code = """
if name == "run_bash": pass
if "read_file" != x: pass
if name in ("think", "x"): pass
match name:
    case "agent_exit": pass
table = {"search": 1}
"""
    assert offences(ast.parse(code)) == [2, 3, 4, 6, 7]


# Documents that are not in the repository: the source spec ("spec 000"…), the original design
# note ("DESIGN §1"), the shared notes directory. The code cites docs/ and docs/adr/ instead.
OUTSIDE_CITATION = re.compile(r"\bspec 0\d|\bspec/0\d|\bDESIGN\b|/shared/")
REPO = SRC.parents[1]


def outside_citations(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if OUTSIDE_CITATION.search(line)]


def test_the_code_cites_no_document_outside_the_repository() -> None:
    cited = [REPO / "architecture-policy.yaml", *sorted(SRC.rglob("*.py"))]
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in cited
        for line in outside_citations(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "cite docs/ or docs/adr/ instead: " + ", ".join(found)


def test_the_citation_gate_catches_each_form() -> None:
    text = (
        '"""x (spec 000, constraint 9)."""\n# DESIGN §1\n# see /work/shared/spec/002.txt\nok = 1\n'
    )
    assert outside_citations(text) == [1, 2, 3]
    assert outside_citations("# docs/adr/0001-forbidden-commands-are-denied.md\n# the Spec\n") == []
