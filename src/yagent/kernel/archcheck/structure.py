"""Structural thresholds, judged on syntax trees: file length and substantive methods per class.

A class's substantive methods are its methods minus its forwarding shells. A forwarding shell is a
method whose body (docstring aside) is one `return <call>` or `<call>` statement, possibly awaited,
whose text without the docstring and with whitespace collapsed is shorter than
`forwarding_shell_max_chars` (0 turns the allowance off: every method counts). A facade that only
delegates is not a god object; a class with 26 methods that each think is one. `@overload` stubs are
declarations, not methods.
"""

from __future__ import annotations

import ast
from pathlib import Path

from yagent.kernel.archcheck.files import matches_any, read_text, walk
from yagent.kernel.archcheck.model import (
    MAX_FILE_LINES,
    MAX_METHODS_PER_TYPE,
    Violation,
    parse_error,
)
from yagent.kernel.archcheck.policy import Thresholds

_Method = ast.FunctionDef | ast.AsyncFunctionDef


def _body_without_docstring(method: _Method) -> list[ast.stmt]:
    body = method.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return body[1:]
    return body


def _is_overload(method: _Method) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "overload")
        or (isinstance(d, ast.Attribute) and d.attr == "overload")
        for d in method.decorator_list
    )


def forwarding_text_length(source: str, method: _Method) -> int:
    """Characters of the method's text (from `def` on) minus its docstring, whitespace collapsed."""
    text = ast.get_source_segment(source, method) or ""
    body = method.body
    if len(body) > len(_body_without_docstring(method)):
        docstring = ast.get_source_segment(source, body[0]) or ""
        text = text.replace(docstring, "", 1)
    return len(" ".join(text.split()))


def is_forwarding_shell(source: str, method: _Method, max_chars: int) -> bool:
    body = _body_without_docstring(method)
    if max_chars <= 0 or len(body) != 1:
        return False
    statement = body[0]
    if not isinstance(statement, ast.Return | ast.Expr) or statement.value is None:
        return False
    value = statement.value
    if isinstance(value, ast.Await):
        value = value.value
    return isinstance(value, ast.Call) and forwarding_text_length(source, method) < max_chars


def substantive_methods(source: str, cls: ast.ClassDef, max_chars: int) -> tuple[int, int]:
    """(substantive methods, forwarding shells) defined directly in `cls`."""
    methods = [node for node in cls.body if isinstance(node, _Method) and not _is_overload(node)]
    shells = sum(1 for m in methods if is_forwarding_shell(source, m, max_chars))
    return len(methods) - shells, shells


def judge_source(path: str, source: str, thresholds: Thresholds) -> list[Violation]:
    violations: list[Violation] = []
    lines = len(source.splitlines())
    if lines > thresholds.max_file_lines:
        violations.append(
            Violation(
                path,
                1,
                MAX_FILE_LINES,
                f"{lines} lines > max_file_lines {thresholds.max_file_lines}: split the file by "
                "responsibility",
            )
        )
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        violations.append(parse_error(path, exc))
        return violations
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        count, shells = substantive_methods(source, node, thresholds.forwarding_shell_max_chars)
        if count > thresholds.max_methods_per_type:
            violations.append(
                Violation(
                    path,
                    node.lineno,
                    MAX_METHODS_PER_TYPE,
                    f"class {node.name} has {count} substantive methods (+{shells} forwarding "
                    f"shells) > max_methods_per_type {thresholds.max_methods_per_type}",
                )
            )
    return violations


def judge_structure(root: Path, thresholds: Thresholds) -> list[Violation]:
    violations: list[Violation] = []
    for path in walk(root):
        if path.endswith(".py") and matches_any(path, thresholds.paths):
            violations.extend(judge_source(path, read_text(root, path), thresholds))
    return violations
