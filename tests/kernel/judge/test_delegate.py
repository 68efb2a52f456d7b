"""delegate: subset or refuse, least capability wins (by name, never by order), receipts."""

from __future__ import annotations

import random

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge.delegate import (
    Executor,
    InvalidError,
    NoExecutorError,
    Receipt,
    Refusal,
    Status,
    capabilities,
    choose,
    delegate,
)

pytestmark = pytest.mark.anyio

READER = Executor.of("reader", ["read"])
EDITOR = Executor.of("editor", ["read", "write"])
SHELL = Executor.of("shell", ["read", "write", "exec"])
ALL = [SHELL, EDITOR, READER]


def test_required_capabilities_must_be_a_subset() -> None:
    assert choose(["read", "write"], ALL) is EDITOR
    assert choose(["exec"], ALL) is SHELL
    with pytest.raises(NoExecutorError) as caught:
        choose(["read", "network"], ALL)
    assert caught.value.required == frozenset({"read", "network"})
    assert caught.value.missing["shell"] == frozenset({"network"})
    assert "refusing" in str(caught.value)


def test_partial_coverage_is_still_a_refusal() -> None:
    # Between them the executors cover everything; no single one does.
    with pytest.raises(NoExecutorError):
        choose(["a", "b"], [Executor.of("x", ["a"]), Executor.of("y", ["b"])])


def test_no_executors_at_all_is_a_refusal() -> None:
    with pytest.raises(NoExecutorError, match="no executors"):
        choose(["read"], [])


def test_the_executor_with_the_fewest_capabilities_wins() -> None:
    assert choose(["read"], ALL) is READER
    assert choose([], ALL) is READER


@given(st.permutations([*ALL, Executor.of("another-reader", ["read"]), Executor.of("z", ["read"])]))
def test_ties_are_broken_by_name_never_by_list_order(order: list[Executor]) -> None:
    assert choose(["read"], order).name == "another-reader"
    assert choose(["write"], order) is EDITOR


def test_a_bigger_set_loses_even_when_listed_first() -> None:
    assert (
        choose(["read"], [Executor.of("a", ["read", "x"]), Executor.of("b", ["read"])]).name == "b"
    )


def test_duplicate_executor_names_are_refused() -> None:
    with pytest.raises(InvalidError, match="unique"):
        choose(["read"], [READER, Executor.of("reader", ["read", "write"])])


@pytest.mark.parametrize("bad", [[""], [" "], ["two words"], [3], "read"])
def test_capabilities_are_checked(bad: object) -> None:
    with pytest.raises(InvalidError):
        capabilities(bad)  # type: ignore[arg-type]


def test_capabilities_are_trimmed_and_deduplicated() -> None:
    assert capabilities([" read", "read ", "write"]) == frozenset({"read", "write"})


def test_an_executor_needs_a_name() -> None:
    with pytest.raises(InvalidError, match="name"):
        Executor.of("", ["read"])


def test_receipt_invariants() -> None:
    assert Receipt.completed("e", "out").ok
    with pytest.raises(InvalidError, match="no failure"):
        Receipt(Status.COMPLETED, "e", reason="but it broke")
    for status in (Status.FAILED, Status.REFUSED):
        with pytest.raises(InvalidError, match="must say why"):
            Receipt(status, "e")
        with pytest.raises(InvalidError, match="must say why"):
            Receipt(status, "e", reason="  ")
    with pytest.raises(InvalidError, match="nothing ran"):
        Receipt(Status.REFUSED, "e", output="partial", reason="no")
    partial = Receipt.failed("e", "crashed", output="half")
    assert partial.output == "half"
    assert not partial.ok
    assert Receipt.refused("e", "not mine").status is Status.REFUSED


def test_receipt_status_must_be_one_of_three() -> None:
    assert Receipt("failed", "e", reason="x").status is Status.FAILED  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'done'"):
        Receipt("done", "e")  # type: ignore[arg-type]


async def test_delegate_completes_on_the_least_capable_executor() -> None:
    ran: list[str] = []

    async def run(executor: Executor) -> str:
        ran.append(executor.name)
        return f"done by {executor.name}"

    executors = list(ALL)
    random.Random(7).shuffle(executors)
    receipt = await delegate(["read"], executors, run)
    assert receipt == Receipt.completed("reader", "done by reader")
    assert ran == ["reader"]


async def test_delegate_refuses_without_running_when_nobody_can() -> None:
    async def run(executor: Executor) -> str:
        raise AssertionError("must not run")

    receipt = await delegate(["fly"], ALL, run)
    assert receipt.status is Status.REFUSED
    assert receipt.executor == ""
    assert "fly" in receipt.reason


async def test_an_executor_refusal_is_refused_not_failed() -> None:
    async def run(executor: Executor) -> str:
        raise Refusal("outside my remit")

    receipt = await delegate(["read"], ALL, run)
    assert receipt == Receipt.refused("reader", "outside my remit")

    async def silent(executor: Executor) -> str:
        raise Refusal

    assert "without a reason" in (await delegate(["read"], ALL, silent)).reason


async def test_an_executor_error_is_a_failure_with_its_reason() -> None:
    async def run(executor: Executor) -> str:
        raise RuntimeError("disk full")

    receipt = await delegate(["read"], ALL, run)
    assert receipt.status is Status.FAILED
    assert receipt.reason == "RuntimeError: disk full"


async def test_cancellation_propagates() -> None:
    async def run(executor: Executor) -> str:
        await anyio.sleep_forever()
        return "never"

    with anyio.move_on_after(0.01) as scope:
        await delegate(["read"], ALL, run)
    assert scope.cancelled_caught
