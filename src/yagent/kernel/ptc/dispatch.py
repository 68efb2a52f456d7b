"""ptc dispatch: how a program's host call reaches a tool — through a judgement chain, always.

Contract:
- A `Dispatcher` names the `invoke.Chain` its calls pass (`chain`) and runs one call through it
  (`dispatch`), answering a `Reply` that carries the chain's `Judgement` as evidence. A host that
  already runs its own chain around each call (an adapter) implements the protocol directly; a
  host with plain executors uses `ChainDispatcher`.
- `ChainDispatcher(chain, executors, approve=…)` runs `chain.invoke(call, execute, approve=…)`:
  exactly the judgement an ordinary call gets. A PROMPT with no approver is a denial of kind
  `needs_approval`; a crashing guard is `internal`; a denial keeps the guard's kind. An executor
  that raises is a failed reply classified by `toolfail.classify` (cancellation propagates).
- `is_managed(dispatcher)`: there is a chain and it has at least one stage. `Reply.judged`: the
  reply carries a judgement in which at least one stage spoke. A run refuses bindings that are not
  managed, and aborts on a reply that was not judged, unless the caller explicitly allowed
  unmanaged execution.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Approver, Call, Chain, Judgement

Execute = Callable[[Call], Awaitable[Any]]
"""Runs one allowed call and returns its JSON-serialisable result (or raises)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one host call came to. `executed` is False when the chain stopped it."""

    ok: bool
    value: Any = None
    error: str = ""
    kind: toolfail.Kind | None = None
    stage: str = ""
    executed: bool = False
    judgement: Judgement | None = None

    @property
    def judged(self) -> bool:
        return self.judgement is not None and len(self.judgement.trace) > 0

    @property
    def denied(self) -> bool:
        """The chain said no (as opposed to the tool failing after it was allowed)."""
        return not self.ok and not self.executed


@runtime_checkable
class Dispatcher(Protocol):
    @property
    def chain(self) -> Chain | None: ...

    async def dispatch(self, call: Call) -> Reply: ...


def is_managed(dispatcher: Dispatcher | None) -> bool:
    """True when every call of `dispatcher` passes a chain with at least one stage."""
    if dispatcher is None:
        return False
    chain = dispatcher.chain
    return chain is not None and len(chain.stages) > 0


@dataclass(frozen=True, slots=True)
class _Ran:
    value: Any = None
    error: Exception | None = None


class ChainDispatcher:
    """Judges each call with `chain`, then runs the executor bound to the call's tool name."""

    __slots__ = ("_approve", "_chain", "_executors")

    def __init__(
        self,
        chain: Chain | None,
        executors: Mapping[str, Execute],
        *,
        approve: Approver | None = None,
    ) -> None:
        self._chain = chain
        self._executors = dict(executors)
        self._approve = approve

    @property
    def chain(self) -> Chain | None:
        return self._chain

    async def dispatch(self, call: Call) -> Reply:
        chain = self._chain if self._chain is not None else Chain([])
        outcome = await chain.invoke(call, self._run, approve=self._approve)
        judgement = outcome.judgement
        if not outcome.executed:
            verdict = judgement.verdict
            kind = verdict.kind or toolfail.Kind.PERMISSION
            return Reply(False, None, verdict.reason, kind, verdict.stage, False, judgement)
        ran = outcome.result
        assert ran is not None  # _run always answers
        if ran.error is not None:
            kind = toolfail.classify(ran.error)
            error = f"{call.tool} failed: {type(ran.error).__name__}: {ran.error}"
            return Reply(False, None, error, kind, "", True, judgement)
        return Reply(True, ran.value, "", None, "", True, judgement)

    async def _run(self, call: Call) -> _Ran:
        executor = self._executors.get(call.tool)
        if executor is None:
            failure = toolfail.ToolFailure(
                toolfail.Kind.FORBIDDEN, f"no executor is bound for tool {call.tool!r}"
            )
            return _Ran(error=failure)
        try:
            return _Ran(value=await executor(call))
        except Exception as exc:  # classified into the reply; cancellation is not an Exception
            return _Ran(error=exc)
