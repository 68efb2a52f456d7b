"""The repository's own policy keeps the kernel's groups apart.

Judged with the real `architecture-policy.yaml` on a small tree under tmp_path that has the
repository's layout (docs/architecture.md, "The kernel, by purpose"): each forbidden edge between
groups is an `import-direction` violation, a runtime module importing `kernel.testing` is one too
(`kernel-purity` inside the kernel, `import-boundary` above it), and the edges the groups do use
today pass. Removing a rule from the policy turns one of these red.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernel.archcheck.support import TODAY, write_tree
from yagent.kernel.archcheck import check_tree, load_policy
from yagent.kernel.archcheck.model import (
    IMPORT_BOUNDARY,
    IMPORT_DIRECTION,
    KERNEL_PURITY,
    STALE_ROOT,
    Violation,
)

REPO = Path(__file__).parents[3]

# One module per group (and a consumer in the host) that the cases below import from.
TREE: dict[str, str] = {
    "src/yagent/__init__.py": "",
    "src/yagent/kernel/__init__.py": "",
    **{
        f"src/yagent/kernel/{group}/__init__.py": '"""group."""\n'
        for group in ("judge", "confine", "durable", "context", "trace", "testing")
    },
    "src/yagent/kernel/judge/invoke.py": "X = 1\n",
    "src/yagent/kernel/judge/toolfail.py": "X = 1\n",
    "src/yagent/kernel/confine/beneath.py": "X = 1\n",
    "src/yagent/kernel/confine/sandbox/__init__.py": "X = 1\n",
    "src/yagent/kernel/durable/clock.py": "X = 1\n",
    "src/yagent/kernel/durable/sideeffect/__init__.py": "X = 1\n",
    "src/yagent/kernel/context/reminder.py": "X = 1\n",
    "src/yagent/kernel/trace/trajectory/__init__.py": "X = 1\n",
    "src/yagent/kernel/ptc/__init__.py": "X = 1\n",
    "src/yagent/kernel/testing/contractsuite.py": "X = 1\n",
    "src/yagent/app/__init__.py": "",
    "src/yagent/tools/__init__.py": "",
}


def violations(tmp_path: Path, path: str, source: str) -> list[Violation]:
    write_tree(tmp_path, {**TREE, path: source})
    report = check_tree(tmp_path, load_policy(REPO / "architecture-policy.yaml"), today=TODAY)
    # the fixture holds a few of the policy's roots only: the others are stale here, not in the repo
    return [v for v in report.violations if v.rule != STALE_ROOT]


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("src/yagent/kernel/judge/dispatch.py", "from yagent.kernel.durable import sideeffect\n"),
        ("src/yagent/kernel/judge/preset.py", "import yagent.kernel.ptc\n"),
        ("src/yagent/kernel/judge/hookengine.py", "from yagent.kernel.trace import trajectory\n"),
        ("src/yagent/kernel/confine/egress.py", "from yagent.kernel import ptc\n"),
        ("src/yagent/kernel/confine/pii.py", "from yagent.kernel.context import reminder\n"),
        ("src/yagent/kernel/durable/drain.py", "from yagent.kernel.context import reminder\n"),
        ("src/yagent/kernel/durable/ticket.py", "from yagent.kernel.confine import beneath\n"),
        ("src/yagent/kernel/context/spill.py", "from yagent.kernel.confine import beneath\n"),
        ("src/yagent/kernel/context/offload.py", "from yagent.kernel.judge import toolfail\n"),
        ("src/yagent/kernel/trace/watchdog.py", "from yagent.kernel.judge import invoke\n"),
        ("src/yagent/kernel/trace/eventbus.py", "from yagent.kernel.durable import clock\n"),
    ],
)
def test_a_forbidden_edge_between_groups_fails(tmp_path: Path, path: str, source: str) -> None:
    [violation] = violations(tmp_path, path, source)
    assert (violation.rule, violation.path, violation.line) == (IMPORT_DIRECTION, path, 1)


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("src/yagent/kernel/durable/sideeffect/store.py", KERNEL_PURITY),
        ("src/yagent/kernel/judge/guardset.py", KERNEL_PURITY),
        ("src/yagent/kernel/ptc/engine.py", KERNEL_PURITY),
        ("src/yagent/app/durable.py", IMPORT_BOUNDARY),
        ("src/yagent/tools/effectrun.py", IMPORT_BOUNDARY),
    ],
)
def test_no_runtime_module_imports_kernel_testing(tmp_path: Path, path: str, rule: str) -> None:
    source = "def f():\n    from yagent.kernel.testing import contractsuite\n"
    [violation] = violations(tmp_path, path, source)
    assert (violation.rule, violation.path, violation.line) == (rule, path, 2)
    assert "yagent.kernel.testing.contractsuite" in violation.message


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("src/yagent/kernel/confine/cmdpolicy.py", "from yagent.kernel.judge import invoke\n"),
        ("src/yagent/kernel/judge/gatecheck.py", "from yagent.kernel.confine import sandbox\n"),
        ("src/yagent/kernel/durable/retryplan.py", "from yagent.kernel.judge import toolfail\n"),
        ("src/yagent/kernel/context/spill.py", "from yagent.kernel.durable import clock\n"),
        ("src/yagent/kernel/ptc/session.py", "from yagent.kernel.confine import sandbox\n"),
        ("src/yagent/kernel/testing/sidetest.py", "from yagent.kernel.durable import sideeffect\n"),
        (
            "src/yagent/kernel/testing/boardtest.py",
            "from yagent.kernel.testing import contractsuite\n",
        ),
    ],
)
def test_the_edges_the_groups_use_pass(tmp_path: Path, path: str, source: str) -> None:
    assert violations(tmp_path, path, source) == []


@pytest.mark.parametrize(
    "source", ["from . import clock\n", "from yagent.kernel.durable.clock import X\n"]
)
def test_a_group_init_re_exports_nothing(tmp_path: Path, source: str) -> None:
    path = "src/yagent/kernel/durable/__init__.py"
    [violation] = violations(tmp_path, path, '"""durable."""\n' + source)
    assert (violation.rule, violation.path, violation.line) == (
        "kernel-group-reexports-nothing",
        path,
        2,
    )
