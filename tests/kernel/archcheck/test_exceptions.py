"""Exceptions excuse until their date; stale, unknown and unexcusable ones are reported."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from tests.kernel.archcheck.support import TODAY, judge, policy_dict, rules_of

CROSSING = {"src/pkg/core/x.py": "import os\nimport pkg.app.main\n"}


def exception(**fields: Any) -> dict[str, Any]:
    base = {
        "rule": "import-boundary",
        "path": "src/pkg/core/x.py",
        "line": 2,
        "reason": "migration in progress",
        "until": TODAY.isoformat(),
        "removal": "when core stops reading app",
    }
    base.update(fields)
    return base


def test_exception_in_force_excuses_and_is_shown(tmp_path: Path) -> None:
    report = judge(tmp_path, CROSSING, policy_dict(exceptions=[exception()]))
    assert report.ok
    [(violation, by)] = report.excused
    assert violation.rule == "import-boundary"
    assert by.reason == "migration in progress"


def test_exception_without_line_covers_the_whole_file(tmp_path: Path) -> None:
    files = {"src/pkg/core/x.py": "import pkg.app\nimport pkg.app.main\n"}
    policy = policy_dict(exceptions=[{k: v for k, v in exception().items() if k != "line"}])
    report = judge(tmp_path, files, policy)
    assert report.ok
    assert len(report.excused) == 2


def test_expired_exception_excuses_nothing_and_is_reported(tmp_path: Path) -> None:
    until = TODAY - dt.timedelta(days=1)
    report = judge(tmp_path, CROSSING, policy_dict(exceptions=[exception(until=until.isoformat())]))
    assert sorted(rules_of(report)) == ["import-boundary", "policy-exception"]
    finding = next(v for v in report.violations if v.rule == "policy-exception")
    assert finding.path == "architecture-policy.yaml"
    assert f"expired on {until.isoformat()}" in finding.message
    assert "when core stops reading app" in finding.message


def test_expiry_follows_the_injected_today(tmp_path: Path) -> None:
    policy = policy_dict(exceptions=[exception(until="2030-06-15")])
    assert judge(tmp_path, CROSSING, policy, today=dt.date(2030, 6, 15)).ok
    assert not judge(tmp_path, CROSSING, policy, today=dt.date(2030, 6, 16)).ok


def test_exception_that_excuses_nothing_is_stale(tmp_path: Path) -> None:
    report = judge(tmp_path, policy=policy_dict(exceptions=[exception()]))
    assert rules_of(report) == ["policy-exception"]
    assert "is stale" in report.violations[0].message
    assert "exceptions[0]" in report.violations[0].message


def test_exception_on_another_line_does_not_excuse(tmp_path: Path) -> None:
    report = judge(tmp_path, CROSSING, policy_dict(exceptions=[exception(line=1)]))
    assert sorted(rules_of(report)) == ["import-boundary", "policy-exception"]


def test_exception_naming_unknown_rule_is_reported(tmp_path: Path) -> None:
    report = judge(tmp_path, policy=policy_dict(exceptions=[exception(rule="no-such-rule")]))
    assert rules_of(report) == ["policy-exception"]
    assert "names unknown rule 'no-such-rule'" in report.violations[0].message


def test_the_gate_judging_exceptions_cannot_be_excepted(tmp_path: Path) -> None:
    stale = exception(rule="stale-root", path="src/pkg/gone", line=0)
    excuse_the_judge = exception(rule="policy-exception", path="architecture-policy.yaml", line=0)
    report = judge(tmp_path, policy=policy_dict(exceptions=[stale, excuse_the_judge]))
    messages = sorted(v.message for v in report.violations)
    assert len(messages) == 2
    assert messages[0].startswith("exceptions[0]")
    assert "is stale" in messages[0]
    assert messages[1].startswith("exceptions[1]")
    assert "cannot be excepted" in messages[1]


def test_exception_can_excuse_a_policy_rule(tmp_path: Path) -> None:
    rule = {
        "id": "no-foo",
        "pattern": r"foo\(",
        "paths": ["src/**/*.py"],
        "message": "m",
        "match": ["foo()"],
    }
    files = {"src/pkg/core/x.py": "foo()\n"}
    policy = policy_dict(rules=[rule], exceptions=[exception(rule="no-foo", line=1)])
    report = judge(tmp_path, files, policy)
    assert report.ok
    assert len(report.excused) == 1
