"""gatecheck: approval × sandbox — a call runs only when both layers agree.

Guarantees (the order is the contract):
1. Approval denied ⇒ DENY, whatever sandbox is available or the approval mode.
2. Approval asks for review ⇒ the `ApprovalMode` decides: `ALLOWLIST` denies (nobody is asked,
   only allowed calls run); `ASK` asks a person; `AUTO` runs unasked only when the *required*
   level is at least NAMESPACES (the sandbox bounds the damage) and asks otherwise; `NEVER_ASK`
   runs unasked. Asking comes before any sandbox lookup: a person is put in front of the call
   rather than the host going looking for a stronger backend (which would leave the call neither
   run nor watched).
3. Approved ⇒ the registry's weakest provider that satisfies the required level and egress; none
   ⇒ DENY (never a downgrade).
4. Plan mode judges but never runs: every outcome except DENY becomes PLAN, with `would` saying
   what would have happened (run on which provider, or ask). Plan is not a refusal.
- `Gate.execute_and_run` runs the program only on a RUN judgement, on exactly the provider the
  judgement named, with the stricter of the program's and the requirement's egress — the egress
  it judged. `Managed` wraps one backend so that it cannot be reached except through that
  judgement: judged backend = running backend.
- Approvals come in the ring's vocabulary: an `invoke.Verdict`, an `invoke.Decision`, or anything
  with `to_invoke()` (a `cmdpolicy` verdict). `Judgement.to_verdict()` goes back into the ring.
Leaves to the host: producing the approval (policy, cmdpolicy, hooks), asking the person on ASK
and judging again with the answer, and choosing the requirement (see `preset`).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from yagent.kernel.confine.sandbox import (
    EgressMode,
    Level,
    NoProviderError,
    Program,
    Provider,
    Registry,
    Result,
)
from yagent.kernel.judge import invoke, toolfail


class ApprovalMode(enum.StrEnum):
    """What happens to a call that needs review, strictest first."""

    ALLOWLIST = "allowlist"
    ASK = "ask"
    AUTO = "auto"
    NEVER_ASK = "never-ask"

    @property
    def looseness(self) -> int:
        return _LOOSENESS[self]


_LOOSENESS = {mode: rank for rank, mode in enumerate(ApprovalMode)}


class Action(enum.StrEnum):
    RUN = "run"
    ASK = "ask"
    DENY = "deny"
    PLAN = "plan"


@dataclass(frozen=True, slots=True)
class Requirement:
    """The isolation a call needs: a sandbox level and an egress mode (both explicit)."""

    level: Level
    egress: EgressMode

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", Level(self.level))
        object.__setattr__(self, "egress", EgressMode(self.egress))


@runtime_checkable
class _Invokable(Protocol):
    def to_invoke(self) -> object: ...


Approval = invoke.Verdict | invoke.Decision | _Invokable


@dataclass(frozen=True, slots=True)
class Judgement:
    """The joint answer. `provider` is who runs (RUN) or would run (PLAN)."""

    action: Action
    reason: str
    approval: invoke.Decision
    requirement: Requirement
    provider: Provider | None = None
    would: Action | None = None
    kind: toolfail.Kind = toolfail.Kind.PERMISSION
    """The failure kind a refusal carries (the approval's own kind when it denied)."""

    def to_verdict(self, stage: str = "gatecheck") -> invoke.Verdict:
        """This judgement in the ring's vocabulary (PLAN is a non-retryable refusal to run)."""
        if self.action is Action.RUN:
            return invoke.Verdict.allow(stage=stage)
        if self.action is Action.ASK:
            return invoke.Verdict.prompt(self.reason, stage=stage)
        return invoke.Verdict.deny(self.reason, kind=self.kind, retryable=False, stage=stage)


@dataclass(frozen=True, slots=True)
class Run:
    """What `execute_and_run` did: the judgement, and the result when it ran."""

    judgement: Judgement
    result: Result | None = None

    @property
    def executed(self) -> bool:
        return self.result is not None


class Gate:
    """The joint judgement over one registry, one approval mode, plan mode on or off."""

    __slots__ = ("_mode", "_plan", "_registry")

    def __init__(
        self, registry: Registry, *, mode: ApprovalMode = ApprovalMode.ASK, plan: bool = False
    ) -> None:
        self._registry = registry
        self._mode = ApprovalMode(mode)
        self._plan = plan

    @property
    def mode(self) -> ApprovalMode:
        return self._mode

    @property
    def plan(self) -> bool:
        return self._plan

    def judge(self, approval: Approval, requirement: Requirement) -> Judgement:
        decision, said, kind = _read(approval)

        def out(action: Action, reason: str, provider: Provider | None = None) -> Judgement:
            if self._plan and action is not Action.DENY:
                return Judgement(
                    Action.PLAN,
                    f"plan mode: judged, not run (it would {_would(action, provider)}): {reason}",
                    decision,
                    requirement,
                    provider,
                    action,
                )
            return Judgement(action, reason, decision, requirement, provider)

        if decision is invoke.Decision.DENY:
            reason = f"the approval layer denied it: {said or 'no reason given'}"
            return Judgement(Action.DENY, reason, decision, requirement, kind=kind)
        auto = ""
        if decision is invoke.Decision.PROMPT:
            verdict = self._review(requirement, said)
            if verdict is not None:
                return out(*verdict)
            auto = f" (review auto-approved in {self._mode.value} mode: {said or 'no reason'})"
        try:
            provider = self._registry.pick(requirement.level, requirement.egress)
        except NoProviderError as exc:
            return out(Action.DENY, f"approved, but the sandbox layer refuses: {exc}")
        return out(Action.RUN, f"approved; runs on sandbox {provider.name!r}{auto}", provider)

    async def execute_and_run(
        self, approval: Approval, requirement: Requirement, program: Program
    ) -> Run:
        """Judge, then run `program` only on RUN and only on the provider judged.

        The run gets the stricter of the program's and the requirement's egress, and that is
        the egress judged: what was judged is what runs.
        """
        needed = max(program.egress, requirement.egress)
        judgement = self.judge(approval, Requirement(requirement.level, needed))
        if judgement.action is not Action.RUN or judgement.provider is None:
            return Run(judgement)
        return Run(judgement, await judgement.provider.run(program.with_egress(needed)))

    def stage(
        self,
        approval_of: Callable[[invoke.Call], Awaitable[Approval]],
        requirement_of: Callable[[invoke.Call], Requirement],
        *,
        name: str = "gatecheck",
    ) -> invoke.Stage:
        """This gate as a ring stage: judges each call from its approval and its requirement."""

        async def judge(call: invoke.Call) -> invoke.Verdict:
            approval = await approval_of(call)
            return self.judge(approval, requirement_of(call)).to_verdict(name)

        return invoke.FuncStage(name, judge)

    def _review(self, requirement: Requirement, said: str) -> tuple[Action, str] | None:
        """What review means in this mode; None when the call may go on unasked."""
        why = said or "no reason given"
        if self._mode is ApprovalMode.ALLOWLIST:
            return Action.DENY, f"needs review, and allowlist mode runs only allowed calls: {why}"
        if self._mode is ApprovalMode.ASK:
            return Action.ASK, f"needs a person's review: {why}"
        if self._mode is ApprovalMode.AUTO and requirement.level < Level.NAMESPACES:
            return (
                Action.ASK,
                f"needs review, and auto mode runs unasked only when sandboxed: {why}",
            )
        return None


class Managed:
    """One backend that only runs what passed the joint judgement (it is not a `Provider`)."""

    __slots__ = ("_backend", "_gate", "_requirement")

    def __init__(
        self,
        backend: Provider,
        requirement: Requirement,
        *,
        mode: ApprovalMode = ApprovalMode.ASK,
        plan: bool = False,
    ) -> None:
        self._backend = backend
        self._requirement = requirement
        self._gate = Gate(Registry([backend]), mode=mode, plan=plan)

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def requirement(self) -> Requirement:
        return self._requirement

    def judge(self, approval: Approval) -> Judgement:
        return self._gate.judge(approval, self._requirement)

    async def run(self, program: Program, *, approval: Approval) -> Run:
        """Run `program` on the wrapped backend only if the judgement says RUN."""
        return await self._gate.execute_and_run(approval, self._requirement, program)


def _read(approval: Approval) -> tuple[invoke.Decision, str, toolfail.Kind]:
    value: object = approval
    if not isinstance(value, invoke.Verdict | invoke.Decision) and isinstance(value, _Invokable):
        value = value.to_invoke()
    if isinstance(value, invoke.Verdict):
        return value.decision, value.reason, value.kind or toolfail.Kind.PERMISSION
    if isinstance(value, invoke.Decision):
        return value, "", toolfail.Kind.PERMISSION
    # Anything else cannot be read as an approval: fail closed.
    return invoke.Decision.DENY, f"unreadable approval {type(approval).__name__}", _INTERNAL


_INTERNAL = toolfail.Kind.INTERNAL


def _would(action: Action, provider: Provider | None) -> str:
    if action is Action.RUN and provider is not None:
        return f"run on sandbox {provider.name!r}"
    return "ask a person"
