"""toolbatch: real parallelism (with a serial control arm), order, one result per call."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import pytest

from yagent.agents.toolbatch import Batch


@dataclass(frozen=True)
class Item:
    name: str
    parallel: bool
    delay: float = 0.05
    fail: bool = False


def make(limit: int, log: list[str]) -> Batch[Item, str]:
    async def execute(item: Item) -> str:
        log.append(f"start {item.name}")
        await anyio.sleep(item.delay)
        if item.fail:
            raise ValueError(item.name)
        log.append(f"end {item.name}")
        return f"ok {item.name}"

    return Batch(
        parallel=lambda i: i.parallel,
        execute=execute,
        on_error=lambda i, e: f"error {i.name}: {e}",
        on_cancelled=lambda i: f"cancelled {i.name}",
        limit=limit,
    )


async def run(batch: Batch[Item, str], items: list[Item]) -> list[tuple[int, str]]:
    committed: list[tuple[int, str]] = []
    await batch.run(items, lambda i, item, r: committed.append((i, r)))
    return committed


@pytest.mark.anyio
async def test_g1_read_only_batch_parallel_evidence() -> None:
    items = [Item(f"r{i}", True) for i in range(4)]
    batch = make(4, [])
    committed = await run(batch, items)
    assert batch.peak >= 2
    assert [i for i, _ in committed] == [0, 1, 2, 3]


@pytest.mark.anyio
async def test_g1_serial_kill_switch_control_arm() -> None:
    batch = make(1, [])
    await run(batch, [Item(f"r{i}", True) for i in range(4)])
    assert batch.peak == 1


@pytest.mark.anyio
async def test_serial_items_run_alone_in_order() -> None:
    log: list[str] = []
    items = [Item("a", True), Item("b", True), Item("w", False), Item("c", True)]
    batch = make(4, log)
    committed = await run(batch, items)
    w_start, w_end = log.index("start w"), log.index("end w")
    assert log.index("end a") < w_start
    assert log.index("end b") < w_start
    assert w_end < log.index("start c")
    assert [r for _, r in committed] == ["ok a", "ok b", "ok w", "ok c"]


@pytest.mark.anyio
async def test_errors_become_results_not_crashes() -> None:
    committed = await run(make(4, []), [Item("a", True, fail=True), Item("b", True)])
    assert committed == [(0, "error a: a"), (1, "ok b")]


@pytest.mark.anyio
async def test_g5_parent_cancel_all_calls_accounted() -> None:
    items = [Item("p1", True, 5), Item("p2", True, 5), Item("s", False, 0), Item("p3", True, 0)]
    committed: list[tuple[int, str]] = []
    batch = make(2, [])
    with anyio.move_on_after(0.1) as scope:  # cancelled from outside the batch
        await batch.run(items, lambda i, item, r: committed.append((i, r)))
    assert scope.cancelled_caught
    assert [i for i, _ in committed] == [0, 1, 2, 3], "every call gets exactly one result"
    assert all(r.startswith("cancelled") for _, r in committed)


@pytest.mark.anyio
async def test_commit_happens_after_the_join_in_order() -> None:
    order: list[str] = []
    items = [Item("slow", True, 0.1), Item("fast", True, 0.0)]

    def commit(i: int, item: Item, r: str) -> None:
        order.append(item.name)

    await make(4, []).run(items, commit)
    assert order == ["slow", "fast"]
