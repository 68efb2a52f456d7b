"""docsync: README's kernel package table against the code, on fixture trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernel.archcheck.support import write_tree
from yagent.kernel.archcheck import run_docsync
from yagent.kernel.archcheck.cli import main
from yagent.kernel.archcheck.docsync import measure, parse_table

ALPHA = (
    '"""alpha: does alpha things."""\nimport os\nimport yaml\nfrom yagent.kernel import beta\n'
    + "x = 1\n" * 96
)
KERNEL = {
    "src/yagent/kernel/__init__.py": '"""kernel."""\n',
    "src/yagent/kernel/__main__.py": "import sys\n",
    "src/yagent/kernel/alpha.py": ALPHA,  # 100 lines, third-party: yaml
    "src/yagent/kernel/beta/__init__.py": '"""beta: the beta mechanism."""\nfrom .core import X\n',
    "src/yagent/kernel/beta/core.py": (
        "from typing import TYPE_CHECKING\nimport anyio\nif TYPE_CHECKING:\n"
        "    import pydantic.fields\nfrom ..alpha import x\nX = 1\n" + "y = 2\n" * 12
    ),  # beta: 2 + 18 = 20 lines, third-party: anyio, pydantic
}


def readme(rows: list[str], heading: str = "## Kernel packages") -> str:
    return "\n".join(
        [
            "# project",
            "",
            heading,
            "",
            "Some prose.",
            "",
            "| package | lines | dependencies | responsibility |",
            "| --- | ---: | --- | --- |",
            *rows,
            "",
            "## Next section",
            "| package | lines | dependencies | responsibility |",
            "| --- | --- | --- | --- |",
            "| ignored | 1 | none | not the kernel table |",
            "",
        ]
    )


GOOD_ROWS = ["| `alpha` | 100 | yaml | alpha things |", "| beta | 20 | pydantic, anyio | beta |"]


def repo(tmp_path: Path, rows: list[str], **extra: str) -> Path:
    write_tree(tmp_path, {**KERNEL, "README.md": readme(rows), **extra})
    return tmp_path


def test_measure_reports_lines_third_party_imports_and_summary(tmp_path: Path) -> None:
    facts = measure(repo(tmp_path, GOOD_ROWS), "src/yagent/kernel", frozenset({"yagent"}))
    assert sorted(facts) == ["alpha", "beta"]
    assert (facts["alpha"].lines, facts["alpha"].dependencies) == (100, {"yaml"})
    assert (facts["beta"].lines, facts["beta"].dependencies) == (20, {"anyio", "pydantic"})
    assert facts["beta"].summary == "beta: the beta mechanism."
    assert facts["alpha"].row() == "| alpha | 100 | yaml | alpha: does alpha things. |"


def test_a_group_directory_holds_packages_named_group_dot_name(tmp_path: Path) -> None:
    grouped = {
        "src/yagent/kernel/judge/__init__.py": '"""judge: groups."""\n',
        "src/yagent/kernel/judge/gate.py": '"""gate: one gate."""\nimport yaml\n',
        "src/yagent/kernel/judge/ring/__init__.py": '"""ring: the ring."""\n',
        "src/yagent/kernel/judge/ring/core.py": "import anyio\nx = 1\n",
    }
    rows = [
        *GOOD_ROWS,
        "| judge.gate | 2 | yaml | a gate |",
        "| judge.ring | 3 | anyio | the ring |",
    ]
    root = repo(tmp_path, rows, **grouped)
    facts = measure(root, "src/yagent/kernel", frozenset({"yagent"}))
    assert sorted(facts) == ["alpha", "beta", "judge.gate", "judge.ring"]
    assert facts["judge.ring"].summary == "ring: the ring."
    assert run_docsync(root) == []
    [problem] = run_docsync(repo(tmp_path, [*rows, "| judge | 1 | none | the group |"]))
    assert "row 'judge' names no kernel package" in problem
    [problem] = run_docsync(repo(tmp_path, [*rows, "| judge.gone | 1 | none | x |"]))
    assert "src/yagent/kernel/judge/gone.py or src/yagent/kernel/judge/gone/" in problem


def test_table_in_sync_passes(tmp_path: Path) -> None:
    assert run_docsync(repo(tmp_path, GOOD_ROWS)) == []


def test_missing_row_is_reported_with_a_ready_row(tmp_path: Path) -> None:
    [problem] = run_docsync(repo(tmp_path, GOOD_ROWS[:1]))
    assert "kernel package 'beta' has no row" in problem
    assert "| beta | 20 | anyio, pydantic | beta: the beta mechanism. |" in problem


def test_row_without_package_is_reported(tmp_path: Path) -> None:
    [problem] = run_docsync(repo(tmp_path, [*GOOD_ROWS, "| gamma | 10 | none | gone |"]))
    assert "row 'gamma' names no kernel package" in problem
    assert "README.md:11" in problem


def test_duplicate_row_is_reported(tmp_path: Path) -> None:
    [problem] = run_docsync(repo(tmp_path, [*GOOD_ROWS, GOOD_ROWS[0]]))
    assert "package 'alpha' has more than one row" in problem


@pytest.mark.parametrize(
    ("deps", "measured"),
    [("none", "yaml"), ("yaml, anyio", "yaml"), ("PyYAML", "yaml"), ("", "yaml")],
)
def test_wrong_dependencies_are_reported_with_the_measured_list(
    tmp_path: Path, deps: str, measured: str
) -> None:
    rows = [f"| alpha | 100 | {deps} | alpha things |", GOOD_ROWS[1]]
    [problem] = run_docsync(repo(tmp_path, rows))
    assert "row 'alpha': dependencies" in problem
    assert f"write {measured}" in problem


def test_none_dependencies_match_a_stdlib_only_package(tmp_path: Path) -> None:
    extra = {"src/yagent/kernel/gamma.py": "from __future__ import annotations\nimport json\n"}
    rows = [*GOOD_ROWS, "| gamma | 2 | none | stdlib only |"]
    assert run_docsync(repo(tmp_path, rows, **extra)) == []


@pytest.mark.parametrize("claimed", ["75", "133", "1,00", "~100"])
def test_line_drift_within_25_percent_passes(tmp_path: Path, claimed: str) -> None:
    rows = [f"| alpha | {claimed} | yaml | alpha things |", GOOD_ROWS[1]]
    assert run_docsync(repo(tmp_path, rows)) == []


@pytest.mark.parametrize("claimed", ["74", "134", "0"])
def test_line_drift_over_25_percent_is_reported_with_the_measured_count(
    tmp_path: Path, claimed: str
) -> None:
    rows = [f"| alpha | {claimed} | yaml | alpha things |", GOOD_ROWS[1]]
    [problem] = run_docsync(repo(tmp_path, rows))
    assert f"lines {claimed} vs measured 100" in problem
    assert problem.endswith("write 100")


def test_non_numeric_lines_and_empty_responsibility(tmp_path: Path) -> None:
    rows = ["| alpha | many | yaml |  |", GOOD_ROWS[1]]
    problems = run_docsync(repo(tmp_path, rows))
    assert any("lines 'many' is not a number; measured 100" in p for p in problems)
    assert any(
        "responsibility is empty (its docstring says: alpha: does alpha things.)" in p
        for p in problems
    )


def test_missing_heading_bad_header_and_bad_rows(tmp_path: Path) -> None:
    text = readme(GOOD_ROWS, heading="## Packages")
    assert parse_table(text, "Kernel packages")[1] == [
        "no `## Kernel packages` heading: the kernel package table is missing"
    ]
    bad_header = readme(GOOD_ROWS).replace("| package | lines |", "| name | lines |", 1)
    assert "must start with the header" in parse_table(bad_header, "Kernel packages")[1][0]
    rows, problems = parse_table(readme(["| alpha | 100 | yaml |", *GOOD_ROWS]), "Kernel packages")
    assert [r.package for r in rows] == ["alpha", "beta"]
    assert problems == ["line 9: expected 4 cells, got 3"]


def test_unreadable_readme_and_unparsable_source(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/yagent/kernel/bad.py": "def (:\n"})
    assert run_docsync(tmp_path)[0].startswith("README.md: cannot read")
    facts = measure(tmp_path, "src/yagent/kernel", frozenset())
    assert facts["bad"].dependencies == {"<unparsable src/yagent/kernel/bad.py>"}


def test_docsync_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = repo(tmp_path, GOOD_ROWS)
    assert main(["docsync", "--root", str(root)]) == 0
    assert "matches the code" in capsys.readouterr().out
    (root / "README.md").write_text(readme(GOOD_ROWS[:1]))
    assert main(["docsync", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "'beta' has no row" in out
    assert out.strip().endswith("docsync: 1 mismatch")


def test_table_must_follow_its_heading_inside_the_section() -> None:
    header = "| package | lines | dependencies | responsibility |"
    text = f"## Kernel packages\n\nprose\n## Other\n{header}\n"
    assert "must start with the header" in parse_table(text, "Kernel packages")[1][0]


def test_suggested_responsibility_is_the_first_docstring_paragraph(tmp_path: Path) -> None:
    doc = '"""gamma: pipes a | b,\n   across lines.\n\nDetails nobody copies."""\n'
    write_tree(tmp_path, {"src/yagent/kernel/gamma.py": doc})
    facts = measure(tmp_path, "src/yagent/kernel", frozenset())
    assert facts["gamma"].summary == "gamma: pipes a \\| b, across lines."
