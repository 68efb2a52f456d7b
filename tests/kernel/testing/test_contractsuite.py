"""The shared contract-suite runner: fresh subject per case, errors judged, everything closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel.testing import contractsuite
from yagent.kernel.testing.contractsuite import Case, ContractViolation, expect


class Refusal(Exception):
    pass


class Subject:
    made: list[Path]
    closed = 0

    def __init__(self, where: Path) -> None:
        type(self).made.append(where)
        self.value = 0

    def close(self) -> None:
        type(self).closed += 1


async def passes(subject: Subject) -> None:
    subject.value += 1
    expect(subject.value == 1, "a fresh subject per case")


async def breaks(subject: Subject) -> None:
    expect(False, "the clause")


async def refuses(subject: Subject) -> None:
    raise Refusal("no")


async def crashes(subject: Subject) -> None:
    raise KeyError("bug")


CASES = (Case("passes", passes), Case("breaks", breaks, "family"), Case("refuses", refuses))


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    Subject.made, Subject.closed = [], 0


def run(case: Case | str, scratch: Path | None = None) -> None:
    chosen = contractsuite.named("demo suite", case, CASES)
    contractsuite.run_case("demo suite", chosen, Subject, scratch, lambda s: (s,), Refusal)


def test_each_case_gets_a_fresh_subject_in_a_scratch_dir_and_it_is_closed(tmp_path: Path) -> None:
    run("passes", tmp_path)
    run("passes")  # a temporary scratch directory, removed afterwards
    assert Subject.made[0] == tmp_path
    assert not Subject.made[1].exists()
    assert Subject.closed == 2


def test_violations_name_suite_and_case_and_accepted_errors_are_violations(tmp_path: Path) -> None:
    with pytest.raises(ContractViolation, match=r"^demo suite breaks: the clause$"):
        run("breaks", tmp_path)
    with pytest.raises(ContractViolation, match="demo suite refuses: an operation the contract"):
        run("refuses", tmp_path)
    with pytest.raises(KeyError):  # not an accepted kind: a bug in the subject surfaces as is
        run(Case("crashes", crashes), tmp_path)
    assert Subject.closed == 3
    with pytest.raises(ValueError, match="no case named 'nope'"):
        run("nope")


def test_start_can_refuse_the_subject(tmp_path: Path) -> None:
    def start(subject: Subject) -> tuple[Subject]:
        raise ContractViolation("not a clocked subject")

    with pytest.raises(ContractViolation, match="demo suite passes: not a clocked subject"):
        contractsuite.run_case("demo suite", CASES[0], Subject, tmp_path, start)
    assert Subject.closed == 1


def test_run_all_runs_every_case_and_lists_each_failure() -> None:
    with pytest.raises(ContractViolation) as caught:
        contractsuite.run_all(run, CASES)
    text = str(caught.value)
    assert text.startswith("2 of 3 cases failed:")
    assert "demo suite breaks" in text
    assert "demo suite refuses" in text
    contractsuite.run_all(run, CASES[:1])


def test_pytest_class_has_one_method_per_case(tmp_path: Path) -> None:
    seen: list[tuple[str, Path]] = []
    cls = contractsuite.pytest_class(
        "Demo", "doc", CASES, lambda case, tmp: seen.append((case.name, tmp))
    )
    assert cls.__name__ == "TestDemo"
    assert cls.__doc__ == "doc"
    methods = [m for m in vars(cls) if m.startswith("test_")]
    assert methods == ["test_passes", "test_breaks", "test_refuses"]
    cls().test_breaks(tmp_path)
    assert seen == [("breaks", tmp_path)]
    assert cls.test_breaks.__doc__ == "[family] breaks"
    assert cls.test_passes.__doc__ == "passes"
