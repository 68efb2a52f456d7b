"""toolbatch: the pure scheduler for one step's tool calls. It knows no tool names.

Contract:
- Items the caller's predicate admits as parallel run concurrently under a semaphore of `limit`,
  except those `own_bound` names (they bring their own bound, a delegation its pool: the step's
  limit would cap them below it); the others run alone, in order: a run of consecutive parallel
  items forms one concurrent group, a serial item waits for the group before it and runs
  before anything after it.
- Execution runs in the caller's task tree, so the caller's cancellation and deadlines reach it.
- A task acquires its semaphore slot with `async with`, so a task that never acquired one can
  never release one.
- Cancellation does not short-circuit: every item gets exactly one result. An item cancelled while
  running, or never started because the batch was cancelled, gets `on_cancelled(item)`; an item
  that raised gets `on_error(item, exc)`.
- Results are committed after the join, single-threaded, in the original order; then, if the
  batch was cancelled from outside, the cancellation propagates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

import anyio

P = TypeVar("P")
R = TypeVar("R")


class Batch(Generic[P, R]):
    def __init__(
        self,
        *,
        parallel: Callable[[P], bool],
        execute: Callable[[P], Awaitable[R]],
        on_error: Callable[[P, Exception], R],
        on_cancelled: Callable[[P], R],
        limit: int = 4,
        own_bound: Callable[[P], bool] | None = None,
    ) -> None:
        self._parallel = parallel
        self._own_bound = own_bound
        self._execute = execute
        self._on_error = on_error
        self._on_cancelled = on_cancelled
        self._limit = max(1, limit)
        self.peak = 0  # the most items that ran at once (observability and tests)

    async def run(self, items: Sequence[P], on_commit: Callable[[int, P, R], None]) -> None:
        results: list[R | None] = [None] * len(items)
        done = [False] * len(items)
        cancelled = anyio.get_cancelled_exc_class()
        sem = anyio.Semaphore(self._limit)
        running = 0
        interrupted: BaseException | None = None

        async def one(index: int) -> None:
            nonlocal running
            own = self._own_bound is not None and self._own_bound(items[index])
            async with contextlib.nullcontext() if own else sem:
                running += 1
                self.peak = max(self.peak, running)
                try:
                    results[index] = await self._execute(items[index])
                except cancelled:
                    results[index] = self._on_cancelled(items[index])
                    raise
                except Exception as exc:
                    results[index] = self._on_error(items[index], exc)
                finally:
                    done[index] = True
                    running -= 1

        try:
            for group in _groups(items, self._parallel):
                async with anyio.create_task_group() as tg:
                    for index in group:
                        tg.start_soon(one, index)
        except cancelled as exc:
            interrupted = exc
        for index, item in enumerate(items):
            if not done[index]:
                results[index] = self._on_cancelled(item)
        for index, item in enumerate(items):
            on_commit(index, item, results[index])  # type: ignore[arg-type]
        if interrupted is not None:
            raise interrupted


def _groups(items: Sequence[P], parallel: Callable[[P], bool]) -> list[list[int]]:
    groups: list[list[int]] = []
    for index, item in enumerate(items):
        if parallel(item) and groups and groups[-1] and parallel(items[groups[-1][0]]):
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups
