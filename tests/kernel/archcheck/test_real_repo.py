"""The gate on this repository: the policy loads and no dependency-kind violation exists."""

from __future__ import annotations

from pathlib import Path

from yagent.kernel.archcheck import check_tree, load_policy
from yagent.kernel.archcheck.model import (
    IMPORT_BOUNDARY,
    KERNEL_PURITY,
    PARSE_ERROR,
    STALE_ROOT,
    UNREGISTERED_PACKAGE,
)

REPO = Path(__file__).parents[3]
DEPENDENCY_KINDS = {IMPORT_BOUNDARY, KERNEL_PURITY, UNREGISTERED_PACKAGE, STALE_ROOT, PARSE_ERROR}


def test_repository_has_no_dependency_violations() -> None:
    policy = load_policy(REPO / "architecture-policy.yaml")
    report = check_tree(REPO, policy)
    found = [v.render() for v in report.violations if v.rule in DEPENDENCY_KINDS]
    assert found == []


def test_repository_policy_keeps_the_kernel_pure() -> None:
    policy = load_policy(REPO / "architecture-policy.yaml")
    assert policy.kernel is not None
    kernel = next(m for m in policy.modules if m.id == policy.kernel.module)
    assert kernel.roots == ("src/yagent/kernel",)
    assert policy.thresholds.enforce
