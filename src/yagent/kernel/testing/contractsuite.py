"""contractsuite: the runner every kernel contract suite shares (boardtest, sidetest, the
commitgatesuite and checkpointsuite) — so a host's store is judged the same way by each.

Guarantees:
- A `Case` is one named clause (`fn` is awaited with what the suite's `start` hands it; `family`
  groups clauses for the reader). `named` finds one by name and refuses an unknown name.
- `run_case` runs one case on a FRESH subject made by the host's factory in a scratch directory
  (a temporary one when none is given, removed afterwards): `start` checks the subject's shape
  and wires what the case needs (a fake clock) — or raises `ContractViolation` —, the case runs
  under `anyio.run`, an error of an `accepted` kind (an operation the contract accepts that the
  subject refused) is a violation too, and the subject is closed afterwards whatever happened.
  A violation's message starts with the suite's label and the case's name.
- `run_all` runs every case — all of them, not up to the first failure — and one violation
  lists every failed case.
- `pytest_class` makes a class with one `test_<case>` method per case taking pytest's
  `tmp_path` as the scratch directory (assign it to a module-level `Test…` name).
Leaves to each suite: its cases, its subject's type and how to start it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio

S = TypeVar("S")


class ContractViolation(AssertionError):
    """A subject broke its contract; the message names the suite, the case and the clause."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise ContractViolation(message)


@dataclass(frozen=True, slots=True)
class Case:
    """One named clause of a contract."""

    name: str
    fn: Callable[..., Awaitable[None]]
    family: str = ""


def named(label: str, case: Case | str, cases: Sequence[Case]) -> Case:
    if isinstance(case, Case):
        return case
    for known in cases:
        if known.name == case:
            return known
    raise ValueError(f"{label}: no case named {case!r}")


def run_case(
    label: str,
    case: Case,
    factory: Callable[[Path], S],
    scratch: Path | None,
    start: Callable[[S], tuple[Any, ...]],
    accepted: type[Exception] | None = None,
) -> None:
    """Run `case` on a fresh subject (see the module contract)."""
    if scratch is None:
        with tempfile.TemporaryDirectory(prefix=label.replace(" ", "-") + "-") as tmp:
            run_case(label, case, factory, Path(tmp), start, accepted)
        return
    subject = factory(scratch)
    try:
        args = start(subject)
        try:
            anyio.run(case.fn, *args)
        except Exception as exc:
            if accepted is None or not isinstance(exc, accepted):
                raise
            raise ContractViolation(f"an operation the contract accepts raised {exc!r}") from exc
    except ContractViolation as exc:
        raise ContractViolation(f"{label} {case.name}: {exc}") from exc
    finally:
        close = getattr(subject, "close", None)
        if callable(close):
            close()


def run_all(run_one: Callable[[Case], None], cases: Sequence[Case]) -> None:
    """Every case, all of them; one `ContractViolation` listing each failed case."""
    failures: list[str] = []
    for case in cases:
        try:
            run_one(case)
        except ContractViolation as exc:
            failures.append(str(exc))
    if failures:
        raise ContractViolation(
            f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)
        )


def pytest_class(
    name: str, doc: str, cases: Sequence[Case], run_one: Callable[[Case, Path], None]
) -> type:
    """A test class `Test<name>` with one `test_<case>` method per case (see the contract)."""
    namespace: dict[str, object] = {"__doc__": doc}
    for case in cases:
        namespace[f"test_{case.name}"] = _method(case, run_one)
    return type(f"Test{name}", (), namespace)


def _method(case: Case, run_one: Callable[[Case, Path], None]) -> Callable[..., None]:
    def test(self: object, tmp_path: Path) -> None:
        run_one(case, tmp_path)

    test.__name__ = f"test_{case.name}"
    clause = case.name.replace("_", " ")
    test.__doc__ = f"[{case.family}] {clause}" if case.family else clause
    return test
