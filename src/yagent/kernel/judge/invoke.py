"""invoke: the judgement ring every tool call passes — exactly one path.

Contract:
- A `Call` is judged by a `Chain` of `Stage`s in order. The first verdict that is not ALLOW stops
  the chain; every stage that spoke is kept in the trace (in order).
- A stage that raises is a DENY of kind `internal` (fail closed) with the exception chained as the
  verdict's `cause` and the stage named; it is never an ALLOW. Cancellation is not an exception of
  the stage: it propagates unchanged.
- `Chain.invoke(call, execute)` runs `execute` only when every stage allowed; otherwise it returns
  the verdict without executing. Given an `approve` callback, a PROMPT is put to it: approval
  continues with the next stage (an approval never skips the stages after the one that asked),
  refusal is a DENY of kind `permission`; both are kept in the trace.
- Stages are async (they may wait on I/O, e.g. a hook process); pure judgements just return.
The chain knows no tool names and no domain: what each stage judges is the host's business.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from yagent.kernel.judge import toolfail

T = TypeVar("T")


class Decision(enum.StrEnum):
    ALLOW = "allow"
    PROMPT = "prompt"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as the ring sees it."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    call_id: str = ""
    caller: str = ""
    depth: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A stage's judgement. `reason` is written for the model; `stage` names who spoke."""

    decision: Decision
    reason: str = ""
    retryable: bool = False
    kind: toolfail.Kind | None = None
    stage: str = ""
    cause: BaseException | None = field(default=None, compare=False)

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    @classmethod
    def allow(cls, stage: str = "") -> Verdict:
        # ALLOW verdicts carry nothing but the stage name: share one per name (hot path).
        cached = _ALLOWS.get(stage)
        if cached is None:
            cached = _ALLOWS.setdefault(stage, cls(Decision.ALLOW, stage=stage))
        return cached

    @classmethod
    def prompt(cls, reason: str, *, stage: str = "") -> Verdict:
        return cls(Decision.PROMPT, reason, False, toolfail.Kind.NEEDS_APPROVAL, stage)

    @classmethod
    def deny(
        cls,
        reason: str,
        *,
        kind: toolfail.Kind = toolfail.Kind.PERMISSION,
        retryable: bool | None = None,
        stage: str = "",
        cause: BaseException | None = None,
    ) -> Verdict:
        """A denial; `retryable` defaults to what the failure table says of `kind`."""
        again = toolfail.retryable(kind) if retryable is None else retryable
        return cls(Decision.DENY, reason, again, kind, stage, cause)

    def named(self, stage: str) -> Verdict:
        """This verdict attributed to `stage` when it does not name a stage itself."""
        if self.stage:
            return self
        if self.decision is Decision.ALLOW and self.cause is None:
            return Verdict.allow(stage)
        return Verdict(self.decision, self.reason, self.retryable, self.kind, stage, self.cause)


_ALLOWS: dict[str, Verdict] = {}

Approver = Callable[[Call, Verdict], Awaitable[bool]]
"""Asked when a stage says PROMPT: True means a person approved the call."""


@runtime_checkable
class Stage(Protocol):
    """One ring of the chain."""

    @property
    def name(self) -> str: ...

    async def judge(self, call: Call) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class Judgement:
    """The chain's answer: the deciding verdict and every verdict spoken, in order."""

    verdict: Verdict
    trace: tuple[Verdict, ...]


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What `Chain.invoke` returns: whether it executed, the result, and the judgement."""

    judgement: Judgement
    executed: bool
    result: T | None = None

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict


class Chain:
    """An ordered, immutable sequence of stages."""

    __slots__ = ("_stages",)

    def __init__(self, stages: Sequence[Stage]) -> None:
        names = [stage.name for stage in stages]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"invoke.Chain: duplicate stage names {duplicates}")
        self._stages: tuple[Stage, ...] = tuple(stages)

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self._stages

    def with_stage(self, stage: Stage, *, first: bool = False) -> Chain:
        """A new chain with `stage` added (this chain is not modified)."""
        stages = (stage, *self._stages) if first else (*self._stages, stage)
        return Chain(stages)

    async def judge(self, call: Call, *, approve: Approver | None = None) -> Judgement:
        """Judge `call` without executing it (see `invoke` for what `approve` does)."""
        trace: list[Verdict] = []
        for stage in self._stages:
            verdict = await _judge_one(stage, call)
            trace.append(verdict)
            if verdict.allowed:
                continue
            if verdict.decision is Decision.PROMPT and approve is not None:
                if await approve(call, verdict):
                    continue
                refusal = Verdict.deny(
                    f"the user did not approve this call ({verdict.reason})",
                    kind=toolfail.Kind.PERMISSION,
                    stage=verdict.stage,
                )
                trace.append(refusal)
                return Judgement(refusal, tuple(trace))
            return Judgement(verdict, tuple(trace))
        return Judgement(_CHAIN_ALLOW, tuple(trace))

    async def invoke(
        self,
        call: Call,
        execute: Callable[[Call], Awaitable[T]],
        *,
        approve: Approver | None = None,
    ) -> Outcome[T]:
        """Judge `call`; run `execute(call)` only when every stage allowed it.

        Without `approve`, a PROMPT ends the judgement unexecuted (the caller runs its own
        approval loop). With `approve`, a PROMPT is put to it: True continues with the *next*
        stage (later stages still judge), False ends in a DENY attributed to the prompting stage.
        """
        judgement = await self.judge(call, approve=approve)
        if not judgement.verdict.allowed:
            return Outcome(judgement, executed=False)
        return Outcome(judgement, executed=True, result=await execute(call))


_CHAIN_ALLOW = Verdict.allow("chain")


async def _judge_one(stage: Stage, call: Call) -> Verdict:
    name = stage.name
    try:
        verdict = await stage.judge(call)
    except Exception as exc:  # fail closed: a stage that cannot judge does not allow
        return Verdict.deny(
            f"guard {name!r} failed while judging this call ({type(exc).__name__}: {exc}); "
            "the call was not run",
            kind=toolfail.Kind.INTERNAL,
            stage=name,
            cause=exc,
        )
    if not isinstance(verdict, Verdict):
        return Verdict.deny(
            f"guard {name!r} returned {type(verdict).__name__}, not a Verdict; "
            "the call was not run",
            kind=toolfail.Kind.INTERNAL,
            stage=name,
        )
    return verdict.named(name)


@dataclass(frozen=True, slots=True)
class FuncStage:
    """A stage from a name and an async function (convenient for hosts and tests)."""

    name: str
    fn: Callable[[Call], Awaitable[Verdict]]

    async def judge(self, call: Call) -> Verdict:
        return await self.fn(call)
