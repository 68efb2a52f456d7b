"""Regex rules scoped by glob, and the structural thresholds judged on syntax trees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.kernel.archcheck.support import judge, policy_dict, rules_of
from yagent.kernel.archcheck.files import glob_regex, matches_any
from yagent.kernel.archcheck.policy import Thresholds
from yagent.kernel.archcheck.structure import is_forwarding_shell, judge_source

RULE = {
    "id": "no-foo",
    "pattern": r"\bfoo\(",
    "paths": ["src/pkg/kernel/**/*.py"],
    "exclude": ["src/pkg/kernel/vendored/**"],
    "message": "no foo in the kernel",
    "match": ["foo()"],
}


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("src/?.py", "src/a.py", True),
        ("**/*.py", "x.py", True),
        ("tests/**", "tests/a/b.txt", True),
        ("src/**/*.py", "srcx/a.py", False),
        ("src/a.py", "src/a_py", False),
    ],
)
def test_glob_dialect(glob: str, path: str, expected: bool) -> None:
    assert bool(glob_regex(glob).match(path)) is expected
    assert matches_any(path, [glob]) is expected


def test_regex_rule_hit_reports_each_matching_line(tmp_path: Path) -> None:
    files = {
        "src/pkg/kernel/k.py": "x = 1\nfoo()\nfoo(); foo()\nfood()\n",
        "src/pkg/core/x.py": "foo()\n",  # outside the rule's paths
        "src/pkg/kernel/vendored/__init__.py": "foo()\n",  # excluded
        "src/pkg/kernel/notes.txt": "foo()\n",  # not a .py path
    }
    report = judge(tmp_path, files, policy_dict(rules=[RULE]))
    assert [(v.rule, v.path, v.line) for v in report.violations] == [
        ("no-foo", "src/pkg/kernel/k.py", 2),
        ("no-foo", "src/pkg/kernel/k.py", 3),
    ]
    assert report.violations[0].message == "no foo in the kernel"


def test_rules_skip_tooling_directories(tmp_path: Path) -> None:
    rule = dict(RULE, paths=["**/*.py"], exclude=[])
    files = {
        ".venv/lib/foo.py": "foo()\n",
        "src/pkg/__pycache__/x.py": "foo()\n",
        "build/x.egg-info/y.py": "foo()\n",
    }
    assert judge(tmp_path, files, policy_dict(rules=[rule])).ok


def test_over_long_file_is_reported(tmp_path: Path) -> None:
    policy = policy_dict(thresholds={"max_file_lines": 5})
    report = judge(tmp_path, {"src/pkg/core/x.py": "x = 1\n" * 6}, policy)
    assert [(v.rule, v.path, v.line) for v in report.violations] == [
        ("max-file-lines", "src/pkg/core/x.py", 1)
    ]
    assert "6 lines > max_file_lines 5" in report.violations[0].message
    assert judge(tmp_path, {"src/pkg/core/x.py": "x = 1\n" * 5}, policy).ok


def test_thresholds_paths_scope_the_structure(tmp_path: Path) -> None:
    policy = policy_dict(thresholds={"max_file_lines": 5, "paths": ["src/pkg/app/**/*.py"]})
    files = {"src/pkg/core/x.py": "x = 1\n" * 9, "tests/t.py": "x = 1\n" * 9}
    assert judge(tmp_path, files, policy).ok


def _class(methods: list[str], name: str = "Big") -> str:
    return f"class {name}:\n" + "".join(methods)


def _substantive(i: int) -> str:
    return f"    def m{i}(self):\n        x = {i}\n        return x\n"


def _shell(i: int) -> str:
    return f"    def s{i}(self, a):\n        return self._inner.s{i}(a)\n"


def test_god_class_is_reported_but_forwarding_shells_do_not_count(tmp_path: Path) -> None:
    policy = policy_dict(thresholds={"max_methods_per_type": 3})
    facade = _class([_substantive(i) for i in range(3)] + [_shell(i) for i in range(10)], "Facade")
    god = _class([_substantive(i) for i in range(4)], "God")
    report = judge(tmp_path, {"src/pkg/core/x.py": facade + god}, policy)
    assert [(v.rule, v.line) for v in report.violations] == [("max-methods-per-type", 31)]
    assert (
        "class God has 4 substantive methods (+0 forwarding shells)" in report.violations[0].message
    )


def test_forwarding_allowance_zero_counts_every_method(tmp_path: Path) -> None:
    policy = policy_dict(thresholds={"max_methods_per_type": 3, "forwarding_shell_max_chars": 0})
    facade = _class([_shell(i) for i in range(4)])
    assert rules_of(judge(tmp_path, {"src/pkg/core/x.py": facade}, policy)) == [
        "max-methods-per-type"
    ]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("def f(self, a):\n    return self.g(a)\n", True),
        ("async def f(self, a):\n    return await self.g(a)\n", True),
        ("def f(self, a):\n    self.g(a)\n", True),
        (
            'def f(self, a):\n    """A long docstring that does not count. '
            + "x" * 200
            + '"""\n    return self.g(a)\n',
            True,
        ),
        ("def f(self, a):\n    return self._a\n", False),  # not a call
        ("def f(self, a):\n    b = self.g(a)\n    return b\n", False),  # two statements
        ("def f(self, a):\n    pass\n", False),
        ("def f(self, a):\n    return\n", False),
        ("def f(self, a):\n    return self.g(" + "a, " * 60 + "a)\n", False),  # too long
    ],
)
def test_forwarding_shell_definition(method: str, expected: bool) -> None:
    node = ast.parse(method).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    assert is_forwarding_shell(method, node, 140) is expected


def test_overload_stubs_and_nested_classes(tmp_path: Path) -> None:
    source = (
        "from typing import overload\nimport typing\n"
        "class A:\n"
        "    @overload\n    def f(self, a: int) -> int: ...\n"
        "    @typing.overload\n    def f(self, a: str) -> str: ...\n"
        "    def f(self, a):\n        x = a\n        return x\n"
        "    class Inner:\n"
        + "".join("    " + line + "\n" for m in range(2) for line in _substantive(m).splitlines())
    )
    thresholds = Thresholds(max_methods_per_type=1)
    violations = judge_source("a.py", source, thresholds)
    assert [v.message.split(" has")[0] for v in violations] == ["class Inner"]


def test_structure_reports_unparsable_file_once(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/core/x.py": "class (:\n"})
    assert rules_of(report) == ["parse-error"]
    assert judge_source("t.py", "class (:\n", Thresholds())[0].rule == "parse-error"


def test_enforce_false_makes_structure_non_blocking(tmp_path: Path) -> None:
    policy = policy_dict(thresholds={"max_file_lines": 1, "enforce": False})
    report = judge(tmp_path, {"src/pkg/core/x.py": "x = 1\ny = 2\nimport pkg.app\n"}, policy)
    assert rules_of(report) == ["import-boundary"]
    assert [v.rule for v in report.warnings] == ["max-file-lines"]
