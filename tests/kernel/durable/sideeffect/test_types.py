"""Value types refuse what can never be valid, and the pure rules' corner cases."""

from __future__ import annotations

import time
from typing import Any

import pytest

from yagent.kernel.durable.sideeffect import (
    Action,
    Grant,
    InvalidArgumentError,
    Lease,
    Outcome,
    RetrySafety,
    StaleLeaseError,
    State,
    SystemClock,
    rules,
)
from yagent.kernel.durable.sideeffect.types import require_result, require_ttl


@pytest.mark.parametrize(
    "args",
    [("", "r"), ("k", ""), (1, "r"), ("k", "r", "safe")],
)
def test_action_refuses_invalid_fields(args: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidArgumentError):
        Action(*args)


def test_action_defaults_to_undeclared_retry_safety() -> None:
    assert Action("k", "r").retry_safety is RetrySafety.UNDECLARED
    assert not RetrySafety.UNDECLARED  # the zero value is falsy, like Go's


@pytest.mark.parametrize("fence", [0, -1, True, 1.0])
def test_lease_refuses_a_fence_that_was_never_issued(fence: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        Lease("k", "r", fence, "h", 1.0)


def test_lease_needs_a_holder() -> None:
    with pytest.raises(InvalidArgumentError):
        Lease("k", "r", 1, "", 1.0)


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), "5", True, None])
def test_ttl_must_be_finite_and_positive(ttl: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        require_ttl(ttl)
    assert require_ttl(2) == 2.0


def test_result_must_be_bytes() -> None:
    assert require_result(b"x") == b"x"
    with pytest.raises(InvalidArgumentError):
        require_result(bytearray(b"x"))


def test_grant_knows_whether_it_granted() -> None:
    assert Grant(Outcome.GRANTED, lease=Lease("k", "r", 1, "h", 1.0)).granted
    assert not Grant(Outcome.CONTENDED).granted


def test_system_clock_reads_wall_time() -> None:
    before = time.time()
    assert before <= SystemClock().now() <= time.time()


ROW = rules.KeyRow("k", State.IN_FLIGHT, "r", 1, "h", 10.0, RetrySafety.UNDECLARED)
GATE = rules.GateRow("r", 1, "k", "h", 10.0)
LEASE = Lease("k", "r", 1, "h", 10.0)


def test_expiry_is_strict_at_the_instant() -> None:
    assert rules.live(10.0, 9.999)
    assert not rules.live(10.0, 10.0)
    assert rules.attempt_live(ROW, 9.0)
    assert not rules.attempt_live(ROW, 10.0)


def test_resource_mismatch_is_a_stale_lease() -> None:
    moved = Lease("k", "elsewhere", 1, "h", 10.0)
    with pytest.raises(StaleLeaseError):
        rules.renew(ROW, GATE, moved, 5.0, 1.0)
    with pytest.raises(StaleLeaseError):
        rules.abandon(ROW, GATE, moved, "x", 1.0)


def test_operations_on_a_settled_key_are_refused() -> None:
    done = rules.KeyRow("k", State.COMPLETED, "r", 1, "h", 10.0, RetrySafety.UNDECLARED)
    for op in (rules.abandon, rules.mark_uncertain):
        with pytest.raises(StaleLeaseError, match="completed"):
            op(done, GATE, LEASE, "x", 1.0)


def test_mark_uncertain_is_idempotent_for_the_same_attempt() -> None:
    first = rules.mark_uncertain(ROW, GATE, LEASE, "timeout", 1.0)
    assert first.key is not None
    assert first.key.state is State.UNCERTAIN
    again = rules.mark_uncertain(first.key, first.gate, LEASE, "other reason", 2.0)
    assert again.key is None  # the first reason stays


def test_abandon_of_an_attempt_whose_gate_moved_on_leaves_the_gate() -> None:
    moved_gate = rules.GateRow("r", 2, "other", "h2", 30.0)
    write = rules.abandon(ROW, moved_gate, LEASE, "x", 20.0)
    assert write.gate is None
    assert write.key is not None
    assert write.key.state is State.WITHDRAWN


def test_resolve_refuses_a_live_attempt_and_a_settled_key() -> None:
    live, _ = rules.resolve(ROW, True, b"x", 1.0)
    assert not live.resolved
    assert "still live" in live.reason
    done = rules.KeyRow("k", State.COMPLETED, "r", 1, "h", 10.0, RetrySafety.UNDECLARED)
    settled, write = rules.resolve(done, False, None, 1.0)
    assert not settled.resolved
    assert "completed" in settled.reason
    assert write == rules.NOTHING
    unknown, _ = rules.resolve(None, True, None, 1.0)
    assert (unknown.resolved, unknown.record) == (False, None)


def test_a_lease_naming_another_holder_is_refused() -> None:
    forged = Lease("k", "r", 1, "intruder", 10.0)
    with pytest.raises(StaleLeaseError, match="issued to h"):
        rules.complete(ROW, GATE, forged, b"", 1.0)
