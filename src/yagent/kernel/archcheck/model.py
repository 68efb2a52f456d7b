"""Value objects shared by every part of the gate: violations and the built-in rule ids.

A `Violation` is one judged fact: which rule spoke, where (repo-relative posix path and 1-based
line; 0 when the fact has no line, such as a stale root), and a message written for the person who
must fix it. Built-in rule ids are reserved: a policy rule may not reuse one.
"""

from __future__ import annotations

from dataclasses import dataclass

IMPORT_BOUNDARY = "import-boundary"
KERNEL_PURITY = "kernel-purity"
UNREGISTERED_PACKAGE = "unregistered-package"
STALE_ROOT = "stale-root"
MAX_FILE_LINES = "max-file-lines"
MAX_METHODS_PER_TYPE = "max-methods-per-type"
PARSE_ERROR = "parse-error"
POLICY_EXCEPTION = "policy-exception"
IMPORT_LOOP = "import-loop"
IMPORT_DIRECTION = "import-direction"

BUILTIN_RULES: frozenset[str] = frozenset(
    {
        IMPORT_BOUNDARY,
        KERNEL_PURITY,
        UNREGISTERED_PACKAGE,
        STALE_ROOT,
        MAX_FILE_LINES,
        MAX_METHODS_PER_TYPE,
        PARSE_ERROR,
        POLICY_EXCEPTION,
        IMPORT_LOOP,
        IMPORT_DIRECTION,
    }
)
"""Rules the gate judges itself (imports, registration, structure, the policy's own exceptions)."""

STRUCTURAL_RULES: frozenset[str] = frozenset({MAX_FILE_LINES, MAX_METHODS_PER_TYPE})
"""Rules governed by `thresholds.enforce`: when it is false they are reported but do not block."""

UNEXCUSABLE_RULES: frozenset[str] = frozenset({POLICY_EXCEPTION})
"""The gate's judgement of its own exceptions cannot itself be excepted."""

KERNEL_GROUPS: frozenset[str] = frozenset(
    {"judge", "confine", "durable", "context", "trace", "testing"}
)
"""Kernel sub-directories that only group packages by purpose (docs/architecture.md): docsync and
pkgcov judge each package inside a group (`judge.invoke`), not the group as one package."""


@dataclass(frozen=True, slots=True, order=True)
class Violation:
    """One finding. Ordered by place so that reports are stable from run to run."""

    path: str
    line: int
    rule: str
    message: str

    def render(self) -> str:
        return f"{self.rule}: {self.path}:{self.line}: {self.message}"


def parse_error(path: str, exc: SyntaxError) -> Violation:
    """The one wording for a file the gate cannot parse (and therefore cannot judge)."""
    return Violation(
        path, exc.lineno or 0, PARSE_ERROR, f"cannot parse, so cannot judge: {exc.msg}"
    )
