"""Policy self-check: a policy that cannot mean what it says is refused, naming every problem."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.archcheck.support import policy_dict
from yagent.kernel.archcheck import PolicyError, load_policy, parse_policy

RULE: dict[str, Any] = {
    "id": "no-foo",
    "pattern": r"\bfoo\(",
    "paths": ["src/**/*.py"],
    "message": "no foo",
    "match": ["foo()", "x = foo(1)"],
    "not_match": ["food()", "foo = 1"],
}


def problems_of(data: Any) -> list[str]:
    with pytest.raises(PolicyError) as caught:
        parse_policy(data, "p.yaml")
    assert str(caught.value).startswith("p.yaml: ")
    return caught.value.problems


def test_base_policy_loads_with_defaults() -> None:
    policy = parse_policy(policy_dict(rules=[RULE]))
    assert policy.source_root == "src"
    assert [m.id for m in policy.modules] == ["top", "app", "core", "kernel"]
    assert policy.thresholds.max_file_lines == 400
    assert policy.thresholds.max_methods_per_type == 25
    assert policy.thresholds.forwarding_shell_max_chars == 140
    assert policy.thresholds.enforce is True
    assert policy.thresholds.paths == ("src/**/*.py",)
    assert "no-foo" in policy.rule_ids
    assert "import-boundary" in policy.rule_ids


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("top", "colour: unknown key"),
        ("module", "modules[0].colour: unknown key"),
        ("kernel", "kernel.colour: unknown key"),
        ("rule", "rules[0].colour: unknown key"),
        ("thresholds", "thresholds.colour: unknown key"),
        ("exception", "exceptions[0].colour: unknown key"),
        ("import_exempt", "modules[0].import_exempt[0].colour: unknown key"),
    ],
)
def test_unknown_keys_are_named_everywhere(where: str, expected: str) -> None:
    data = policy_dict(
        rules=[dict(RULE)],
        thresholds={"max_file_lines": 10},
        exceptions=[
            {"rule": "no-foo", "path": "a.py", "reason": "r", "until": "2031-01-01", "removal": "x"}
        ],
    )
    data["modules"][0]["import_exempt"] = [{"import": "a.b", "reason": "r"}]
    target = {
        "top": data,
        "module": data["modules"][0],
        "kernel": data["kernel"],
        "rule": data["rules"][0],
        "thresholds": data["thresholds"],
        "exception": data["exceptions"][0],
        "import_exempt": data["modules"][0]["import_exempt"][0],
    }[where]
    target["colour"] = "blue"
    assert problems_of(data) == [expected]


def test_match_example_that_does_not_match_is_a_policy_error() -> None:
    rule = dict(RULE, match=["foo()", "bar()"])
    [problem] = problems_of(policy_dict(rules=[rule]))
    assert "rules[0] (no-foo)" in problem
    assert "match example 'bar()' is not matched" in problem


def test_not_match_example_that_matches_is_a_policy_error() -> None:
    rule = dict(RULE, not_match=["food()", "x.foo()"])
    [problem] = problems_of(policy_dict(rules=[rule]))
    assert "not_match example 'x.foo()' is matched" in problem


def test_rule_needs_a_match_example_and_a_compiling_pattern() -> None:
    problems = problems_of(
        policy_dict(rules=[dict(RULE, match=[]), dict(RULE, id="bad", pattern="(unclosed")])
    )
    assert "rules[0].match: must not be empty" in problems
    assert any("rules[1].pattern (bad): does not compile" in p for p in problems)


def test_rule_ids_must_be_unique_and_not_builtin() -> None:
    problems = problems_of(policy_dict(rules=[RULE, RULE, dict(RULE, id="kernel-purity")]))
    assert "rules[1].id: duplicate rule id 'no-foo'" in problems
    assert "rules[2].id: 'kernel-purity' is a built-in rule id" in problems


def test_dangling_and_duplicate_module_references() -> None:
    data = policy_dict(kernel={"module": "nucleus"})
    data["modules"][1]["requires"] = ["core", "ghost"]
    data["modules"].append({"id": "core", "roots": ["src/pkg/app"], "owner": "t"})
    data["modules"].append({"id": "far", "roots": ["lib/far"], "owner": "t"})
    problems = problems_of(data)
    assert "modules[1].requires: 'ghost' names no module" in problems
    assert "modules[4].id: duplicate module id 'core'" in problems
    assert "modules[4].roots: 'src/pkg/app' is already a root of 'app'" in problems
    assert "modules[5].roots: 'lib/far' does not lie under source_root 'src'" in problems
    assert "kernel.module: 'nucleus' names no module" in problems


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"version": 2}, "version: this gate reads version 1, got 2"),
        ({"modules": []}, "modules: at least one module is required"),
        ({"modules": "core"}, "modules: expected a list"),
        ({"source_root": ""}, "source_root: expected a non-empty string, got ''"),
        (
            {"thresholds": {"max_file_lines": 0}},
            "thresholds.max_file_lines: expected an integer >= 1, got 0",
        ),
        (
            {"thresholds": {"enforce": "yes"}},
            "thresholds.enforce: expected true or false, got 'yes'",
        ),
        (
            {"thresholds": {"paths": "src"}},
            "thresholds.paths: expected a list of non-empty strings",
        ),
        ({"thresholds": ["x"]}, "thresholds: expected a mapping, got list"),
        (
            {
                "exceptions": [
                    {"rule": "r", "path": "p", "reason": "x", "until": "soon", "removal": "y"}
                ]
            },
            "exceptions[0].until: expected a date YYYY-MM-DD, got 'soon'",
        ),
        (
            {"exceptions": [{"rule": "r", "path": "p", "until": "2030-01-01", "removal": "y"}]},
            "exceptions[0].reason: required key is missing",
        ),
    ],
)
def test_malformed_fields_are_named(change: dict[str, Any], expected: str) -> None:
    assert expected in problems_of(policy_dict(**change))


def test_missing_version_and_non_mapping_policy() -> None:
    data = policy_dict()
    del data["version"]
    assert problems_of(data) == ["version: required key is missing"]
    assert "expected a mapping, got list" in problems_of([1, 2])[0]


def test_exception_dates_and_optional_line() -> None:
    exceptions = [
        {
            "rule": "stale-root",
            "path": "src/x",
            "reason": "r",
            "until": dt.date(2031, 1, 2),
            "removal": "y",
        },
        {
            "rule": "max-file-lines",
            "path": "./src/a.py",
            "line": 1,
            "reason": "r",
            "until": dt.datetime(2031, 1, 3, 4, 5),
            "removal": "y",
        },
    ]
    policy = parse_policy(policy_dict(exceptions=exceptions))
    first, second = policy.exceptions
    assert (first.line, first.until) == (None, dt.date(2031, 1, 2))
    assert (second.path, second.line, second.until) == ("src/a.py", 1, dt.date(2031, 1, 3))


def test_load_policy_reports_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("modules: [unclosed\n")
    with pytest.raises(PolicyError, match="not valid YAML"):
        load_policy(bad)


def test_repository_policy_loads() -> None:
    policy = load_policy(Path(__file__).parents[3] / "architecture-policy.yaml")
    assert policy.kernel is not None
    assert policy.kernel.forbid_outside
    assert {r.id for r in policy.rules} >= {"kernel-no-agent-names", "kernel-no-tool-names"}
    assert all(rule.match for rule in policy.rules)
