"""FencedSink: the compare-and-write is one atomic step; stale fences are refused."""

from __future__ import annotations

import contextlib

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.durable.sideeffect import (
    FencedSink,
    Lease,
    MemorySink,
    StaleFenceError,
    fence_accepts,
)


def _lease(fence: int, resource: str = "r", key: str = "k") -> Lease:
    return Lease(key, resource, fence, "h", 0.0)


def test_fence_accepts_equal_and_newer_only() -> None:
    assert fence_accepts(None, 1)
    assert fence_accepts(3, 3)
    assert fence_accepts(3, 4)
    assert not fence_accepts(3, 2)


@pytest.mark.anyio
async def test_stale_write_is_refused_and_not_recorded() -> None:
    sink = MemorySink[str]()
    assert isinstance(sink, FencedSink)
    await sink.write(_lease(2), "new")
    await sink.write(_lease(2), "new again")  # one attempt may write more than once
    with pytest.raises(StaleFenceError) as info:
        await sink.write(_lease(1), "late")
    assert (info.value.resource, info.value.fence, info.value.high_water) == ("r", 1, 2)
    assert [e.value for e in sink.entries("r")] == ["new", "new again"]
    assert sink.high_water("r") == 2
    await sink.write(_lease(1, resource="other"), "independent")  # marks are per resource
    assert sink.high_water("other") == 1
    assert len(sink.entries()) == 3


@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(1, 6)), max_size=30))
def test_accepted_fences_never_go_down(writes: list[tuple[str, int]]) -> None:
    sink = MemorySink[int]()
    accepted: dict[str, list[int]] = {}

    async def play() -> None:
        for resource, fence in writes:
            before = sink.high_water(resource)
            try:
                await sink.write(_lease(fence, resource), fence)
            except StaleFenceError:
                assert before is not None
                assert fence < before
            else:
                accepted.setdefault(resource, []).append(fence)

    anyio.run(play)
    for resource, fences in accepted.items():
        assert fences == sorted(fences)
        assert [e.fence for e in sink.entries(resource)] == fences


@pytest.mark.anyio
async def test_racing_holders_cannot_both_pass_the_check() -> None:
    sink = MemorySink[int]()
    async with anyio.create_task_group() as tg:
        for fence in (5, 3, 4, 1, 2, 6):
            tg.start_soon(_quietly, sink, fence)
    fences = [e.fence for e in sink.entries()]
    assert fences == sorted(fences)
    assert sink.high_water("r") == 6


async def _quietly(sink: MemorySink[int], fence: int) -> None:
    await anyio.lowlevel.checkpoint()
    with contextlib.suppress(StaleFenceError):
        await sink.write(_lease(fence), fence)
