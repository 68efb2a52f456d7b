"""sidetest: the shared contract suite every `sideeffect.Store` implementation runs.

Guarantees: 22 cases, each a named clause of the contract, so a store that breaks one goes red on
exactly that clause — eleven of key, lease and fence (`cases_lease`), five of "outcome uncertain"
(`cases_uncertain`) and six of the execution intent (`cases_intent`). The clock is injected
through `ClockedStore.set_clock` and moved by the cases, so expiry really happens.
Refuses: skipping. Plugging a store into the suite declares it meets the contract; a case that
cannot run (no injectable clock) is a failure, never a skip.
Leaves to the host: the store factory (`factory(scratch_dir) -> ClockedStore`, fresh and empty per
case) and the test runner. With pytest:

    TestSqliteContract = sidetest.suite(lambda d: SqliteStore(d / "s.db"), name="SqliteContract")

or `sidetest.run_all(factory)` / `sidetest.run_case(name, factory)` anywhere else.
"""

from __future__ import annotations

from pathlib import Path

from yagent.kernel.testing.sidetest import harness
from yagent.kernel.testing.sidetest.cases_intent import CASES as INTENT_CASES
from yagent.kernel.testing.sidetest.cases_lease import CASES as LEASE_CASES
from yagent.kernel.testing.sidetest.cases_uncertain import CASES as UNCERTAIN_CASES
from yagent.kernel.testing.sidetest.harness import (
    TTL,
    Case,
    ContractViolation,
    FakeClock,
    StoreFactory,
)

CASES: tuple[Case, ...] = (*LEASE_CASES, *UNCERTAIN_CASES, *INTENT_CASES)


def names() -> tuple[str, ...]:
    return tuple(case.name for case in CASES)


def run_case(case: Case | str, factory: StoreFactory, scratch: Path | None = None) -> None:
    """Run one case (by value or name) on a fresh store; `ContractViolation` on failure."""
    harness.run_case(case, factory, scratch, cases=CASES)


def run_all(factory: StoreFactory) -> None:
    """Run all 22 cases; one `ContractViolation` lists every case that failed."""
    harness.run_all(factory, cases=CASES)


def suite(factory: StoreFactory, *, name: str = "SideeffectContract") -> type:
    """A pytest-collectable class with one `test_<case>` method per case."""
    return harness.suite(factory, cases=CASES, name=name)


__all__ = [
    "CASES",
    "TTL",
    "Case",
    "ContractViolation",
    "FakeClock",
    "StoreFactory",
    "names",
    "run_all",
    "run_case",
    "suite",
]
