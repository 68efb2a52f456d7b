"""The policy's exceptions: each excuses violations of one rule at one place, until a date.

An exception `{rule, path, line, reason, until, removal}` excuses every violation of `rule` at
`path` (and at `line`, when given) through `until` inclusive. It is itself reported (rule
`policy-exception`, never excusable) when it has expired — and then it excuses nothing, so the
underlying violation is back — when it names no rule this gate judges, when it names a rule that
cannot be excepted, and when it is still in force but excuses nothing (stale: the code was fixed,
so the exception must go).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from yagent.kernel.archcheck.model import POLICY_EXCEPTION, UNEXCUSABLE_RULES, Violation
from yagent.kernel.archcheck.policy import Policy, PolicyException


@dataclass(frozen=True, slots=True)
class Judged:
    blocking: list[Violation]
    excused: list[tuple[Violation, PolicyException]]


def apply_exceptions(
    violations: list[Violation], policy: Policy, today: dt.date, policy_path: str
) -> Judged:
    findings: list[Violation] = []

    def report(index: int, exception: PolicyException, what: str) -> None:
        findings.append(
            Violation(
                policy_path,
                0,
                POLICY_EXCEPTION,
                f"exceptions[{index}] ({exception.describe()}) {what}",
            )
        )

    active: list[tuple[int, PolicyException]] = []
    for index, exception in enumerate(policy.exceptions):
        if exception.rule not in policy.rule_ids:
            report(index, exception, f"names unknown rule {exception.rule!r}")
        elif exception.rule in UNEXCUSABLE_RULES:
            report(
                index, exception, f"cannot be excepted: rule {exception.rule!r} judges the policy"
            )
        elif exception.until < today:
            report(
                index,
                exception,
                f"expired on {exception.until.isoformat()} and excuses nothing any more "
                f"(planned removal: {exception.removal}); fix the code or renew it with a reason",
            )
        else:
            active.append((index, exception))

    blocking: list[Violation] = []
    excused: list[tuple[Violation, PolicyException]] = []
    used: set[int] = set()
    for violation in violations:
        cover = next(
            (
                (index, exception)
                for index, exception in active
                if violation.rule not in UNEXCUSABLE_RULES
                and exception.covers(violation.rule, violation.path, violation.line)
            ),
            None,
        )
        if cover is None:
            blocking.append(violation)
        else:
            used.add(cover[0])
            excused.append((violation, cover[1]))
    for index, exception in active:
        if index not in used:
            report(index, exception, "is stale: it excuses no violation any more; remove it")
    return Judged(sorted(blocking + findings), excused)
