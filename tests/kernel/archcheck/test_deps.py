"""Dependency direction on fixture trees: every import form, ownership, registration, staleness."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernel.archcheck.support import BASE_POLICY, judge, policy_dict, rules_of

CROSSING_FORMS = {
    "plain": ("import pkg.app.main\n", 1, "via import"),
    "from": ("from pkg.app import main\n", 1, "via from-import"),
    "from-package": ("from pkg import app\n", 1, "via from-import"),
    "from-names": ("from pkg.app.main import X\n", 1, "via from-import"),
    "relative": ("from ..app import main\n", 1, "via relative from-import"),
    "relative-dotted": ("from ..app.main import X\n", 1, "via relative from-import"),
    "in-function": ("def f():\n    import pkg.app.main\n", 2, "via import"),
    "in-class": ("class C:\n    from pkg.app import main\n", 2, "via from-import"),
    "type-checking": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.app.main import X\n",
        3,
        "via from-import",
    ),
    "importlib": (
        "import importlib\nimportlib.import_module('pkg.app.main')\n",
        2,
        "import_module",
    ),
    "import_module": (
        "from importlib import import_module\nimport_module('pkg.app')\n",
        2,
        "import_module",
    ),
    "importlib-relative": (
        "import importlib\nimportlib.import_module('.main', package='pkg.app')\n",
        2,
        "import_module",
    ),
    "importlib-relative-positional": (
        "import importlib\nimportlib.import_module('..app', 'pkg.core')\n",
        2,
        "import_module",
    ),
    "dunder-import": ("__import__('pkg.app.main')\n", 1, "__import__"),
}


@pytest.mark.parametrize("form", sorted(CROSSING_FORMS))
def test_every_import_form_crossing_a_boundary_is_a_violation(tmp_path: Path, form: str) -> None:
    source, line, how = CROSSING_FORMS[form]
    report = judge(tmp_path, {"src/pkg/core/x.py": source})
    assert rules_of(report) == ["import-boundary"], report.violations
    violation = report.violations[0]
    assert (violation.path, violation.line) == ("src/pkg/core/x.py", line)
    assert "'core'" in violation.message
    assert "module 'app'" in violation.message
    assert how in violation.message


@pytest.mark.parametrize(
    "source",
    [
        "import pkg.kernel.k\n",  # listed in requires
        "from . import x\n",  # own module
        "from pkg.core import x\n",
        "import importlib\nimportlib.import_module(name)\n",  # not literal: cannot be judged
        "import yaml, os.path\nfrom collections import abc\n",  # not first-party
        "from pkg.kernel.k import *\n",
    ],
)
def test_allowed_imports_are_clean(tmp_path: Path, source: str) -> None:
    assert judge(tmp_path, {"src/pkg/core/x.py": source}).violations == []


def test_clean_tree_has_no_violations(tmp_path: Path) -> None:
    report = judge(tmp_path)
    assert report.ok
    assert report.violations == []
    assert report.warnings == []
    assert report.excused == []


def test_relative_import_in_package_init_resolves_against_the_package(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/core/__init__.py": "from .. import app\n"})
    assert rules_of(report) == ["import-boundary"]
    assert "'pkg.app'" in report.violations[0].message


def test_relative_import_above_the_top_package_is_reported(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/core/x.py": "from .... import nothing\n"})
    assert rules_of(report) == ["import-boundary"]
    assert "climbs above" in report.violations[0].message


def test_kernel_importing_outside_is_a_violation_even_when_required(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][3]["requires"] = ["core", "top"]
    files = {"src/pkg/kernel/k.py": "from pkg.core import x\nfrom pkg import X\n"}
    report = judge(tmp_path, files, policy)
    assert rules_of(report) == ["kernel-purity", "kernel-purity"]
    assert "'pkg.core.x'" in report.violations[0].message
    assert "whatever `requires` says" in report.violations[0].message
    assert "'pkg'" in report.violations[1].message


def test_kernel_importing_unowned_code_is_a_kernel_violation(tmp_path: Path) -> None:
    files = {"src/pkg/kernel/k.py": "import pkg.ghost\n"}
    report = judge(tmp_path, files)
    assert rules_of(report) == ["kernel-purity"]
    assert "no module" in report.violations[0].message


def test_kernel_importing_itself_is_clean(tmp_path: Path) -> None:
    files = {
        "src/pkg/kernel/k.py": "from . import j\nimport pkg.kernel.j\n",
        "src/pkg/kernel/j.py": "",
    }
    assert judge(tmp_path, files).ok


def test_without_kernel_section_requires_decides(tmp_path: Path) -> None:
    policy = policy_dict()
    del policy["kernel"]
    policy["modules"][3]["requires"] = ["core"]
    assert judge(tmp_path, {"src/pkg/kernel/k.py": "import pkg.core.x\n"}, policy).ok


def test_importing_code_no_module_owns_is_a_violation(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/core/x.py": "import pkg.ghost.thing\n"})
    assert rules_of(report) == ["import-boundary"]
    assert "which no module owns" in report.violations[0].message


def test_unregistered_package_directory_is_invisible(tmp_path: Path) -> None:
    files = {"src/pkg/newlayer/__init__.py": "", "src/pkg/newlayer/deep/mod.py": ""}
    report = judge(tmp_path, files)
    assert rules_of(report) == ["unregistered-package"]
    violation = report.violations[0]
    assert violation.path == "src/pkg/newlayer"
    assert "invisible to the gate" in violation.message
    assert "2 files" in violation.message


def test_unregistered_namespace_directory_and_top_file_are_invisible(tmp_path: Path) -> None:
    files = {"src/pkg/loose.py": "", "src/other/mod.py": "", "src/single.py": ""}
    report = judge(tmp_path, files)
    assert [(v.rule, v.path) for v in report.violations] == [
        ("unregistered-package", "src/other"),
        ("unregistered-package", "src/pkg/loose.py"),
        ("unregistered-package", "src/single.py"),
    ]
    assert "module file" in report.violations[1].message


def test_imports_of_invisible_files_are_not_judged(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/loose.py": "import pkg.app.main\n"})
    assert rules_of(report) == ["unregistered-package"]


def test_longest_root_wins(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"].append(
        {"id": "inner", "roots": ["src/pkg/core/inner"], "requires": [], "owner": "t"}
    )
    files = {
        "src/pkg/core/inner/__init__.py": "import pkg.kernel.k\n",
        "src/pkg/core/x.py": "from pkg.core.inner import y\n",
        "src/pkg/core/inner/y.py": "",
    }
    report = judge(tmp_path, files, policy)
    assert [(v.path, v.rule) for v in report.violations] == [
        ("src/pkg/core/inner/__init__.py", "import-boundary"),
        ("src/pkg/core/x.py", "import-boundary"),
    ]
    assert "module 'inner' imports 'pkg.kernel.k'" in report.violations[0].message
    assert (
        "module 'core' imports 'pkg.core.inner.y' of module 'inner'" in report.violations[1].message
    )


def test_missing_root_is_stale(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][2]["roots"] = ["src/pkg/core", "src/pkg/gone"]
    report = judge(tmp_path, policy=policy)
    assert [(v.rule, v.path, v.line) for v in report.violations] == [
        ("stale-root", "src/pkg/gone", 0)
    ]
    assert "is missing" in report.violations[0].message


def test_empty_root_is_stale(tmp_path: Path) -> None:
    (tmp_path / "src/pkg/empty").mkdir(parents=True)
    (tmp_path / "src/pkg/empty/README.txt").parent.mkdir(exist_ok=True)
    (tmp_path / "src/pkg/empty/README.txt").write_text("no code\n")
    policy = policy_dict()
    policy["modules"].append({"id": "empty", "roots": ["src/pkg/empty"], "owner": "t"})
    report = judge(tmp_path, policy=policy)
    assert rules_of(report) == ["stale-root"]
    assert "owns no Python file" in report.violations[0].message


def test_root_entirely_claimed_by_longer_roots_is_stale(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"].append({"id": "outer", "roots": ["src/pkg/core"], "owner": "t"})
    policy["modules"][2]["roots"] = ["src/pkg/core/sub"]
    files = {
        "src/pkg/core/__init__.py": None,
        "src/pkg/core/x.py": None,
        "src/pkg/core/sub/a.py": "",
    }
    report = judge(tmp_path, files, policy)
    assert [(v.rule, v.path) for v in report.violations] == [("stale-root", "src/pkg/core")]


def test_unparsable_file_is_reported_not_skipped(tmp_path: Path) -> None:
    report = judge(tmp_path, {"src/pkg/core/x.py": "def broken(:\n"})
    assert rules_of(report) == ["parse-error"]
    assert report.violations[0].line == 1


def test_import_exempt_lets_one_subpackage_through(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][2]["import_exempt"] = [
        {"import": "pkg.app.main", "reason": "shared constant"}
    ]
    files = {"src/pkg/core/x.py": "from pkg.app.main import X\nimport pkg.app.other\n"}
    files["src/pkg/app/other.py"] = ""
    report = judge(tmp_path, files, policy)
    assert [(v.rule, v.line) for v in report.violations] == [("import-boundary", 2)]


def test_stale_import_exempt_is_reported(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][2]["import_exempt"] = [{"import": "pkg.app", "reason": "was needed"}]
    report = judge(tmp_path, policy=policy)
    assert [(v.rule, v.path) for v in report.violations] == [
        ("policy-exception", "architecture-policy.yaml")
    ]
    assert "stale import_exempt 'pkg.app'" in report.violations[0].message


def test_import_exempt_never_excuses_kernel_purity(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][3]["import_exempt"] = [{"import": "pkg.core", "reason": "no"}]
    report = judge(tmp_path, {"src/pkg/kernel/k.py": "import pkg.core.x\n"}, policy)
    assert sorted(rules_of(report)) == ["kernel-purity", "policy-exception"]


def test_base_policy_is_not_mutated_by_tests() -> None:
    assert "import_exempt" not in BASE_POLICY["modules"][2]
