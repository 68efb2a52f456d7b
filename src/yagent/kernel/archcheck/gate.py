"""One judgement of a tree against a policy: dependencies, import loops and directions, rules,
structure, then exceptions."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from yagent.kernel.archcheck.deps import DependencyJudge
from yagent.kernel.archcheck.exceptions import apply_exceptions
from yagent.kernel.archcheck.loops import judge_graph
from yagent.kernel.archcheck.model import STRUCTURAL_RULES, Violation
from yagent.kernel.archcheck.policy import Policy, PolicyException
from yagent.kernel.archcheck.rules import judge_rules
from yagent.kernel.archcheck.structure import judge_structure


@dataclass(frozen=True, slots=True)
class Report:
    """`violations` block; `warnings` are structural findings while `thresholds.enforce` is false;
    `excused` are violations an exception in force lets through (shown, never hidden)."""

    violations: list[Violation]
    warnings: list[Violation] = field(default_factory=list)
    excused: list[tuple[Violation, PolicyException]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def check_tree(
    root: Path,
    policy: Policy,
    policy_path: str = "architecture-policy.yaml",
    today: dt.date | None = None,
) -> Report:
    """Judge the tree at `root`. `today` decides which exceptions are in force (default: today)."""
    found = DependencyJudge(root, policy, policy_path).judge()
    found += judge_graph(root, policy, policy_path)
    found += judge_rules(root, policy.rules)
    found += judge_structure(root, policy.thresholds)
    judged = apply_exceptions(sorted(set(found)), policy, today or dt.date.today(), policy_path)
    if policy.thresholds.enforce:
        return Report(judged.blocking, [], judged.excused)
    blocking = [v for v in judged.blocking if v.rule not in STRUCTURAL_RULES]
    warnings = [v for v in judged.blocking if v.rule in STRUCTURAL_RULES]
    return Report(blocking, warnings, judged.excused)
