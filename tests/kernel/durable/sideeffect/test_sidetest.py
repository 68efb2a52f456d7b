"""The suite itself: each clause goes red on the store mutation that breaks it, and it never skips.

Each mutant patches one judgement in `sideeffect.rules` (the one place both stores judge) the way a
store author could get it wrong; the named case must then raise `ContractViolation`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.durable.sideeffect import (
    Action,
    Clock,
    Grant,
    Lease,
    LeaseExpiredError,
    MemoryStore,
    Outcome,
    Resolution,
    RetrySafety,
    SqliteStore,
    State,
    rules,
)
from yagent.kernel.testing import sidetest

Mutant = Callable[[pytest.MonkeyPatch], None]
ORIGINAL = {name: getattr(rules, name) for name in dir(rules) if not name.startswith("__")}


def _wrap_acquire(change: Callable[..., tuple[Any, ...]]) -> Mutant:
    def patch(mp: pytest.MonkeyPatch) -> None:
        def acquire(row: Any, gate: Any, action: Any, holder: Any, ttl: Any, now: Any) -> Any:
            return ORIGINAL["acquire"](*change(row, gate, action, holder, ttl, now))

        mp.setattr(rules, "acquire", acquire)

    return patch


def _forget_fence(name: str) -> Mutant:
    """The operation trusts any lease naming the key: the row is made to match its fence."""

    def patch(mp: pytest.MonkeyPatch) -> None:
        def op(row: Any, gate: Any, lease: Any, *rest: Any) -> Any:
            if row is not None:
                row = replace(row, fence=lease.fence, resource=lease.resource, holder=lease.holder)
            return ORIGINAL[name](row, gate, lease, *rest)

        mp.setattr(rules, name, op)

    return patch


def _holding_without(check: str) -> Mutant:
    def patch(mp: pytest.MonkeyPatch) -> None:
        def holding(row: Any, gate: Any, lease: Any, now: float) -> Any:
            if check == "released" and row is not None:
                row = replace(row, released=False)
                if gate is not None and gate.key is None:
                    gate = replace(gate, key=lease.key, expires_at=lease.expires_at)
            try:
                return ORIGINAL["_holding"](row, gate, lease, now)
            except LeaseExpiredError:
                if check != "expiry":
                    raise
                return row, gate

        mp.setattr(rules, "_holding", holding)

    return patch


def _set(name: str, fn: Callable[..., Any]) -> Mutant:
    return lambda mp: mp.setattr(rules, name, fn)


def _gate_first(row: Any, gate: Any, action: Any, holder: Any, ttl: Any, now: Any) -> Any:
    if rules.gate_held(gate, now):
        return Grant(Outcome.CONTENDED, reason="held"), rules.NOTHING
    return ORIGINAL["acquire"](row, gate, action, holder, ttl, now)


def _fence_reused(row: Any, gate: Any, action: Any, holder: Any, ttl: Any, now: Any) -> Any:
    granted, write = ORIGINAL["acquire"](row, gate, action, holder, ttl, now)
    if granted.lease is None:
        return granted, write
    fence = gate.fence if gate is not None and gate.fence > 0 else 1
    lease = replace(granted.lease, fence=fence)
    return replace(granted, lease=lease), rules.Write(
        replace(write.key, fence=fence), replace(write.gate, fence=fence)
    )


def _renew_new_token(row: Any, gate: Any, lease: Any, ttl: float, now: float) -> Any:
    renewed, write = ORIGINAL["renew"](row, gate, lease, ttl, now)
    return replace(renewed, fence=renewed.fence + 1), write


def _renew_token_only(row: Any, gate: Any, lease: Any, ttl: float, now: float) -> Any:
    """Judges only the key row's token: neither the gate's current holder nor its expiry."""
    seen = rules.GateRow(lease.resource, lease.fence, lease.key, lease.holder, float("inf"))
    return ORIGINAL["renew"](row, seen, lease, ttl, now)


def _resolve_always(row: Any, applied: bool, result: Any, now: float) -> Any:
    if row is not None:
        row = replace(row, state=State.UNCERTAIN)
    return ORIGINAL["resolve"](row, applied, result, now)


def _abandon_keeps_intent(row: Any, gate: Any, lease: Any, reason: str, now: float) -> Any:
    ORIGINAL["abandon"](row, gate, lease, reason, now)  # keep its refusals
    return rules.Write(replace(row, released=True), ORIGINAL["_freed"](gate, lease))


def _release_withdraws(row: Any, gate: Any, lease: Any, now: float) -> Any:
    ORIGINAL["release"](row, gate, lease, now)
    return ORIGINAL["abandon"](row, gate, lease, "released", now)


def _complete_forgets(row: Any, gate: Any, lease: Any, result: bytes, now: float) -> Any:
    return ORIGINAL["release"](row, gate, lease, now)


def _as(safety: RetrySafety) -> Callable[..., tuple[Any, ...]]:
    def change(row: Any, gate: Any, action: Action, *rest: Any) -> tuple[Any, ...]:
        if row is not None:
            row = replace(row, retry_safety=safety)
        return (row, gate, replace(action, retry_safety=safety), *rest)

    return change


MUTANTS: dict[str, tuple[Mutant, str]] = {
    "completed_ignored": (
        _wrap_acquire(lambda r, *a: (None if r and r.state is State.COMPLETED else r, *a)),
        "only_once",
    ),
    "gate_judged_first": (_set("acquire", _gate_first), "completed_beats_held"),
    "gate_ignored": (
        _wrap_acquire(lambda r, g, *a: (r, g and replace(g, key=None), *a)),
        "contention_before_expiry",
    ),
    "no_takeover": (
        _wrap_acquire(lambda r, g, *a: (r, g and replace(g, key="x", expires_at=float("inf")), *a)),
        "takeover_after_expiry",
    ),
    "fence_reused": (_set("acquire", _fence_reused), "tokens_monotonic"),
    "expiry_unchecked_record": (_holding_without("expiry"), "expired_holder_cannot_record"),
    "expiry_unchecked_release": (_holding_without("expiry"), "expired_holder_cannot_release"),
    "complete_forgets": (_set("complete", _complete_forgets), "only_once"),
    "release_completes": (
        _set("release", lambda r, g, lease, n: ORIGINAL["complete"](r, g, lease, b"", n)),
        "release_is_not_completion",
    ),
    "renew_new_token": (_set("renew", _renew_new_token), "renew_extends_keeps_token"),
    "renew_token_only": (_set("renew", _renew_token_only), "renew_refused_after_handover"),
    "release_unchecked": (_holding_without("released"), "renew_refused_after_release"),
    "uncertain_ignored": (
        _wrap_acquire(lambda r, *a: (None if r and r.state is State.UNCERTAIN else r, *a)),
        "uncertain_forbids_reexecution",
    ),
    "resolve_ignored": (
        _set("resolve", lambda r, a, res, n: (Resolution(True, None, "pretend"), rules.NOTHING)),
        "resolved_not_applied_allows_retry",
    ),
    "resolve_drops_result": (
        _set("resolve", lambda r, a, res, n: ORIGINAL["resolve"](r, a, None, n)),
        "resolved_applied_records_result",
    ),
    "last_resolution_wins": (_set("resolve", _resolve_always), "first_resolution_wins"),
    "mark_without_fence": (_forget_fence("mark_uncertain"), "stale_fence_cannot_mark_uncertain"),
    "intent_regranted": (_wrap_acquire(_as(RetrySafety.SAFE)), "unresolved_intent_not_regranted"),
    "expired_intent_regranted": (
        _wrap_acquire(_as(RetrySafety.SAFE)),
        "expired_unresolved_needs_reconciliation",
    ),
    "safe_never_regranted": (_wrap_acquire(_as(RetrySafety.UNSAFE)), "safe_regranted_after_expiry"),
    "abandon_keeps_intent": (
        _set("abandon", _abandon_keeps_intent),
        "abandon_makes_executable_again",
    ),
    "release_withdraws": (_set("release", _release_withdraws), "release_does_not_withdraw_intent"),
    "abandon_without_fence": (_forget_fence("abandon"), "abandon_only_this_attempt"),
}


def test_every_case_has_a_mutant() -> None:
    assert {case for _, case in MUTANTS.values()} == set(sidetest.names())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_turns_its_case_red(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch, case = MUTANTS[mutant]
    patch(monkeypatch)
    with pytest.raises(sidetest.ContractViolation, match=f"sidetest {case}:"):
        sidetest.run_case(case, lambda _: MemoryStore())


def test_unmutated_store_passes_every_case_through_run_all() -> None:
    sidetest.run_all(lambda _: MemoryStore())


def test_run_all_lists_every_failed_case(monkeypatch: pytest.MonkeyPatch) -> None:
    MUTANTS["intent_regranted"][0](monkeypatch)
    with pytest.raises(sidetest.ContractViolation) as info:
        sidetest.run_all(lambda _: MemoryStore())
    text = str(info.value)
    assert "unresolved_intent_not_regranted" in text
    assert "expired_unresolved_needs_reconciliation" in text
    assert "of 22 cases failed" in text


class Unclocked:
    """Everything a Store has, but no way to inject a clock."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        for name in ("acquire", "renew", "complete", "release", "abandon", "mark_uncertain"):
            setattr(self, name, getattr(self.inner, name))
        for name in ("resolve_uncertain", "lookup", "pending"):
            setattr(self, name, getattr(self.inner, name))


class ClockIgnored(MemoryStore):
    """Claims to take a clock but keeps reading the system time."""

    def set_clock(self, clock: Clock) -> None:
        pass


def test_a_store_without_an_injectable_clock_fails_hard() -> None:
    with pytest.raises(sidetest.ContractViolation, match="not a ClockedStore"):
        sidetest.run_case("only_once", lambda _: Unclocked())  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("case", ["takeover_after_expiry", "expired_holder_cannot_record"])
def test_a_store_that_ignores_the_clock_fails_the_expiry_cases(case: str) -> None:
    with pytest.raises(sidetest.ContractViolation):
        sidetest.run_case(case, lambda _: ClockIgnored())


def test_run_case_by_name_gives_each_case_its_own_scratch_and_closes_the_store(
    tmp_path: Path,
) -> None:
    opened: list[SqliteStore] = []

    def factory(scratch: Path) -> SqliteStore:
        assert scratch.is_dir()
        opened.append(SqliteStore(scratch / "s.db"))
        return opened[-1]

    sidetest.run_case("only_once", factory)
    sidetest.run_case(sidetest.CASES[0], factory, tmp_path)
    assert len(opened) == 2
    assert all(store._db._conn is None for store in opened)  # closed after the case


def test_unknown_case_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="no case named"):
        sidetest.run_case("no_such_case", lambda _: MemoryStore())


def test_fake_clock_only_moves_forward() -> None:
    clock = sidetest.FakeClock(5.0)
    clock.advance(1.5)
    assert clock.now() == 6.5
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)


def test_suite_methods_carry_names_and_docs() -> None:
    cls = sidetest.suite(lambda _: MemoryStore())
    assert cls.__name__ == "TestSideeffectContract"
    method = cls.test_only_once  # type: ignore[attr-defined]
    assert method.__name__ == "test_only_once"
    assert method.__doc__ == "[lease] only once"


def test_grant_helper_refuses_a_lease_naming_someone_else() -> None:
    class Liar(MemoryStore):
        async def acquire(self, action: Action, holder: str, ttl: float) -> Grant:
            got = await super().acquire(action, holder, ttl)
            if got.lease is None:
                return got
            return replace(got, lease=replace(got.lease, holder="someone-else"))

    with pytest.raises(sidetest.ContractViolation, match="does not name"):
        sidetest.run_case("only_once", lambda _: Liar())


def test_outcome_helper_refuses_a_lease_on_a_non_grant() -> None:
    class Leaky(MemoryStore):
        async def acquire(self, action: Action, holder: str, ttl: float) -> Grant:
            got = await super().acquire(action, holder, ttl)
            if got.outcome is Outcome.ALREADY_DONE:
                lease = Lease(action.key, action.resource, 1, holder, 0.0)
                return replace(got, lease=lease)
            return got

    with pytest.raises(sidetest.ContractViolation, match="only a grant carries a lease"):
        sidetest.run_case("only_once", lambda _: Leaky())
