"""Import loops and pinned directions on fixture trees: hidden loops are loops, the ratchet only
tightens, and a forbidden direction is named with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernel.archcheck.support import judge, policy_dict, rules_of
from yagent.kernel.archcheck import PolicyError, check_tree, load_policy, parse_policy
from yagent.kernel.archcheck.loops import build_graph, components
from yagent.kernel.archcheck.model import IMPORT_DIRECTION, IMPORT_LOOP

REPO = Path(__file__).parents[3]

HIDDEN_LOOPS = {
    "type-checking": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.core.b import B\n"
    ),
    "in-function": "def f():\n    from pkg.core import b\n    return b\n",
    "plain": "import pkg.core.b\n",
}


@pytest.mark.parametrize("form", sorted(HIDDEN_LOOPS))
def test_a_new_loop_fails_however_it_is_hidden(tmp_path: Path, form: str) -> None:
    report = judge(
        tmp_path,
        {
            "src/pkg/core/a.py": HIDDEN_LOOPS[form],
            "src/pkg/core/b.py": "from pkg.core.a import *\n",
        },
    )
    loops = [v for v in report.violations if v.rule == IMPORT_LOOP]
    assert len(loops) == 1, report.violations
    message = loops[0].message
    assert "pkg.core.a, pkg.core.b" in message
    assert "src/pkg/core/a.py:" in message
    assert "src/pkg/core/b.py:1" in message


def test_a_package_that_imports_itself_through_its_init_is_a_loop(tmp_path: Path) -> None:
    report = judge(
        tmp_path,
        {
            "src/pkg/core/__init__.py": "from pkg.core.x import X\n",
            "src/pkg/core/x.py": "from pkg.core import helper\nX = 1\n",
            "src/pkg/core/helper.py": "import pkg.core\n",
        },
    )
    assert IMPORT_LOOP in rules_of(report)


def test_a_loop_across_packages_is_found_too(tmp_path: Path) -> None:
    policy = policy_dict()
    policy["modules"][2]["requires"] = ["kernel", "app"]  # layering no longer forbids it
    report = judge(
        tmp_path,
        {
            "src/pkg/app/main.py": "from pkg.core import x\n",
            "src/pkg/core/x.py": "import pkg.app.main\n",
        },
        policy,
    )
    assert rules_of(report) == [IMPORT_LOOP]


def test_a_chain_without_a_cycle_is_not_a_loop(tmp_path: Path) -> None:
    report = judge(
        tmp_path,
        {
            "src/pkg/core/a.py": "from pkg.core import b\n",
            "src/pkg/core/b.py": "from pkg.core import c\n",
            "src/pkg/core/c.py": "import os\n",
        },
    )
    assert report.ok, report.violations


LOOP = {
    "src/pkg/core/a.py": "def f():\n    import pkg.core.b\n",
    "src/pkg/core/b.py": "import pkg.core.a\n",
}


def test_the_ratchet_lets_a_listed_loop_through(tmp_path: Path) -> None:
    allowed = [{"modules": ["pkg.core.a", "pkg.core.b"], "reason": "being untangled"}]
    assert judge(tmp_path, LOOP, policy_dict(import_loops=allowed)).ok


def test_a_listed_loop_that_grows_by_one_module_fails(tmp_path: Path) -> None:
    allowed = [{"modules": ["pkg.core.a", "pkg.core.b"], "reason": "being untangled"}]
    files = {
        **LOOP,
        "src/pkg/core/b.py": "import pkg.core.c\n",
        "src/pkg/core/c.py": "import pkg.core.a\n",
    }
    report = judge(tmp_path, files, policy_dict(import_loops=allowed))
    rules = rules_of(report)
    assert rules.count(IMPORT_LOOP) == 2  # the grown loop, and the entry that matches nothing now
    assert any("pkg.core.a, pkg.core.b, pkg.core.c" in v.message for v in report.violations)


def test_an_entry_that_no_longer_matches_a_loop_is_a_violation(tmp_path: Path) -> None:
    allowed = [{"modules": ["pkg.core.x", "pkg.kernel.k"], "reason": "long gone"}]
    report = judge(tmp_path, None, policy_dict(import_loops=allowed))
    assert rules_of(report) == [IMPORT_LOOP]
    assert report.violations[0].path == "architecture-policy.yaml"
    assert "no longer matches a loop" in report.violations[0].message


def test_a_ratchet_entry_of_one_module_is_refused() -> None:
    with pytest.raises(PolicyError, match="at least two modules"):
        parse_policy(policy_dict(import_loops=[{"modules": ["pkg.a"], "reason": "r"}]))


def test_components_finds_each_loop_once() -> None:
    from yagent.kernel.archcheck.loops import Edge

    e = Edge("f.py", 1)
    graph = {
        "a": {"b": e},
        "b": {"a": e, "c": e},
        "c": {"d": e},
        "d": {"c": e},
        "x": {},
    }
    assert components(graph) == [["a", "b"], ["c", "d"]]


DIRECTIONS = [
    {"from": "pkg.kernel.sandbox", "forbid": ["pkg.kernel"], "reason": "a leaf"},
    {"from": "pkg.kernel.gate", "forbid": ["pkg.kernel.preset"], "reason": "preset sits above"},
]


def test_a_pinned_direction_is_enforced_with_its_reason(tmp_path: Path) -> None:
    files = {
        "src/pkg/kernel/sandbox/__init__.py": "from pkg.kernel.sandbox import levels\n",
        "src/pkg/kernel/sandbox/levels.py": "from pkg.kernel import ptc\n",
        "src/pkg/kernel/ptc.py": "from pkg.kernel.sandbox import levels\n",
        "src/pkg/kernel/gate.py": "def f():\n    from pkg.kernel import preset\n",
        "src/pkg/kernel/preset.py": "from pkg.kernel import gate\n",
    }
    report = judge(tmp_path, files, policy_dict(import_directions=DIRECTIONS))
    directions = sorted(v for v in report.violations if v.rule == IMPORT_DIRECTION)
    assert [(v.path, v.line) for v in directions] == [
        ("src/pkg/kernel/gate.py", 2),
        ("src/pkg/kernel/sandbox/levels.py", 1),
    ]
    assert "must not import pkg.kernel.preset (preset sits above)" in directions[0].message
    # imports inside the package itself are never forbidden
    assert all("sandbox/__init__" not in v.path for v in directions)


RUN_MODULES = (
    "yagent.app.delegation",
    "yagent.app.delegationresume",
    "yagent.app.fanout",
    "yagent.app.fanrun",
    "yagent.app.lanerun",
    "yagent.app.turn",
)


def test_the_repository_has_no_import_loop() -> None:
    policy = load_policy(REPO / "architecture-policy.yaml")
    report = check_tree(REPO, policy)
    assert [
        v.render() for v in report.violations if v.rule in (IMPORT_LOOP, IMPORT_DIRECTION)
    ] == []
    assert policy.import_loops == ()  # nothing ratcheted: a new loop anywhere fails
    graph = build_graph(REPO, "src")
    assert components(graph) == []
    # the run modules see the app through `app.services`, never `App` (not even for a type)
    for module in RUN_MODULES:
        assert "yagent.app.assemble" not in graph[module], module
        assert "yagent.app.services" in graph[module], module
    pinned = {d.source for d in policy.import_directions}
    assert {"yagent.kernel.confine.sandbox", "yagent.kernel.judge.gatecheck"} <= pinned
