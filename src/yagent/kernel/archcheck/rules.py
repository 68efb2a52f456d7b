"""Text-level bans: regular-expression rules scoped to paths by glob.

A rule's pattern is compiled with `re.MULTILINE` and searched over each file's whole text; each
matching line is one violation. The rule's `match` examples must be found and its `not_match`
examples must not, through the very same `PatternRule.hits` used on files: an example that
disagrees means the rule does not say what its author thinks, so the policy is refused before any
file is judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from yagent.kernel.archcheck.files import matches_any, read_text, walk
from yagent.kernel.archcheck.model import Violation


@dataclass(frozen=True, slots=True)
class PatternRule:
    """One text-level ban: a pattern, the paths it applies to, and its own examples."""

    id: str
    regex: re.Pattern[str]
    paths: tuple[str, ...]
    exclude: tuple[str, ...]
    message: str
    match: tuple[str, ...]
    not_match: tuple[str, ...]

    def hits(self, text: str) -> Iterator[int]:
        """1-based line numbers where the pattern matches (each line once)."""
        last = 0
        for found in self.regex.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            if line != last:
                last = line
                yield line

    def applies_to(self, path: str) -> bool:
        return matches_any(path, self.paths) and not matches_any(path, self.exclude)

    def example_problems(self, where: str) -> list[str]:
        problems = [
            f"{where} ({self.id}): match example {example!r} is not matched by "
            f"{self.regex.pattern!r}"
            for example in self.match
            if not any(self.hits(example))
        ]
        problems.extend(
            f"{where} ({self.id}): not_match example {example!r} is matched by "
            f"{self.regex.pattern!r}"
            for example in self.not_match
            if any(self.hits(example))
        )
        return problems


def compile_pattern(pattern: str) -> re.Pattern[str] | str:
    """The compiled pattern, or the compiler's complaint."""
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        return str(exc)


def judge_rules(root: Path, rules: tuple[PatternRule, ...]) -> list[Violation]:
    if not rules:
        return []
    violations: list[Violation] = []
    for path in walk(root):
        applicable = [rule for rule in rules if rule.applies_to(path)]
        if not applicable:
            continue
        text = read_text(root, path)
        for rule in applicable:
            violations.extend(
                Violation(path, line, rule.id, rule.message) for line in rule.hits(text)
            )
    return violations
