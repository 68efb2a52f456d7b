"""hookengine: the decision side of hooks — matching, verdict, order and close.

Contract:
- Matching: a `Hook` matches an `Event` when the event names are equal, the event's tool name
  starts with the hook's `tool_prefix` (an empty prefix matches every tool, and tool-less events)
  and, when the hook has a `tool_pattern` (a regular expression), the pattern matches the whole
  of the tool's name or of one of its `Event.aliases`.
- Verdict: a hook answers ALLOW, PROMPT (a person must be asked) or DENY (`HookResult`); nothing
  else is a hook's answer.
- Order and close: blocking hooks run one at a time in hook-name order; the first DENY decides
  and the remaining blocking hooks are not run (listed in `Result.skipped`). Without a DENY, a
  PROMPT from any blocking hook makes the decision PROMPT (the first one's reason); otherwise it
  is ALLOW. ALLOW only means "no objection": it never answers a question another judge asks.
- Fail closed twice: a blocking hook whose runner raises or returns something that is not a
  `HookResult` counts as DENY (the reason says it failed to run); a hook that outlives its
  `timeout` counts as its declared `on_timeout`, and as DENY when none is declared. Both are
  marked `fail_closed` when the engine, not the hook, supplied the DENY. The deadline is the
  engine's (`anyio.move_on_after` unless a test injects a timer); a timeout raised by the runner
  itself is a failure, not the declared timeout.
- Non-blocking hooks run concurrently with the blocking ones and never vote, whatever they say;
  their outcomes, failures and timeouts included, are in `Result.runs` / `Result.failures`.
  `evaluate` returns when every matched hook has finished or timed out.
- Cancellation from outside is not a hook failure: it propagates unchanged.
- As a ring (`HookStage`), a DENY by the hook is a PERMISSION denial, a timeout counted as deny is
  a TIMEOUT denial that says it was the hook's, a hook that failed is an INTERNAL denial, and a
  PROMPT is the ring's question.
Left to the host: how hooks are loaded and how they run (processes, plugins, HTTP) — the
`Runner` protocol is the only seam — and which events exist besides `pre_tool_use`.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import anyio

from yagent.kernel.judge import invoke, toolfail

Decision = invoke.Decision
PRE_TOOL_USE = "pre_tool_use"
DEFAULT_TIMEOUT = 30.0
_VERDICTS = (Decision.ALLOW, Decision.DENY)
_ANSWERS = (Decision.ALLOW, Decision.PROMPT, Decision.DENY)


class HookError(Exception):
    """Root of this package's errors."""


class HookConfigError(HookError, ValueError):
    """A hook or hook set that cannot be judged with (bad field, duplicate name)."""


@dataclass(frozen=True, slots=True)
class Event:
    """Something hooks may judge: an event name, the tool it concerns (other names it goes by in
    `aliases`), and its data."""

    name: str
    tool: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Hook:
    """One hook's declaration. How it runs is the host's `Runner`'s business."""

    name: str
    event: str
    tool_prefix: str = ""
    blocking: bool = True
    timeout: float = DEFAULT_TIMEOUT
    on_timeout: Decision | None = None
    tool_pattern: str = ""

    def __post_init__(self) -> None:
        for label in ("name", "event"):
            value = getattr(self, label)
            if not isinstance(value, str) or not value:
                raise HookConfigError(f"hook {label} must be a non-empty string: {value!r}")
        if not isinstance(self.tool_prefix, str):
            raise HookConfigError(f"hook {self.name!r}: tool_prefix must be a string")
        if not isinstance(self.tool_pattern, str):
            raise HookConfigError(f"hook {self.name!r}: tool_pattern must be a string")
        try:
            re.compile(self.tool_pattern)
        except re.error as exc:
            raise HookConfigError(
                f"hook {self.name!r}: matcher {self.tool_pattern!r} is not a regular expression "
                f"({exc})"
            ) from None
        if not isinstance(self.blocking, bool):
            raise HookConfigError(f"hook {self.name!r}: blocking must be a bool")
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise HookConfigError(f"hook {self.name!r}: timeout must be a number")
        if not math.isfinite(timeout) or timeout <= 0:
            raise HookConfigError(f"hook {self.name!r}: timeout must be finite and > 0")
        if self.on_timeout is not None:
            if self.on_timeout not in _VERDICTS:
                raise HookConfigError(
                    f"hook {self.name!r}: on_timeout must be allow, deny or unset"
                )
            # "deny" from a config file must compare by identity like Decision.DENY does.
            object.__setattr__(self, "on_timeout", Decision(self.on_timeout))

    def matches(self, event: Event) -> bool:
        if self.event != event.name or not event.tool.startswith(self.tool_prefix):
            return False
        if not self.tool_pattern:
            return True
        names = (event.tool, *event.aliases)
        return any(re.fullmatch(self.tool_pattern, name) for name in names)


@dataclass(frozen=True, slots=True)
class HookResult:
    """A hook's answer."""

    decision: Decision
    reason: str = ""

    def __post_init__(self) -> None:
        if self.decision not in _ANSWERS:
            raise HookError(f"a hook answers allow, prompt or deny, not {self.decision!r}")
        object.__setattr__(self, "decision", Decision(self.decision))


@runtime_checkable
class Runner(Protocol):
    """The host's transport: run one hook on one event and report its answer."""

    async def run(self, hook: Hook, event: Event) -> HookResult: ...


class Status(enum.StrEnum):
    OK = "ok"
    FAILED = "failed"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook that ran: its status, the decision it counts as, and whether it voted.

    `fail_closed` is True when the DENY was supplied by the engine (failure, undeclared timeout).
    """

    hook: str
    blocking: bool
    status: Status
    decision: Decision
    reason: str
    fail_closed: bool = False
    error: BaseException | None = field(default=None, compare=False)

    @property
    def failed(self) -> bool:
        return self.status is not Status.OK


@dataclass(frozen=True, slots=True)
class Result:
    """The engine's answer for one event."""

    event: Event
    decision: Decision
    deciding: HookRun | None  # the denying (or first prompting) hook's run; None on ALLOW
    reason: str
    runs: tuple[HookRun, ...]  # every hook that ran, in name order
    skipped: tuple[str, ...] = ()  # blocking hooks not run because an earlier one denied

    @property
    def decided_by(self) -> str:
        return "" if self.deciding is None else self.deciding.hook

    @property
    def fail_closed(self) -> bool:
        """True when the decision is a DENY the engine supplied for a hook that did not answer."""
        return self.deciding is not None and self.deciding.fail_closed

    @property
    def failures(self) -> tuple[HookRun, ...]:
        """Runs that failed or timed out, blocking or not."""
        return tuple(run for run in self.runs if run.failed)


Timer = Callable[[float], anyio.CancelScope]


class Engine:
    """A fixed, name-ordered hook set and the runner that executes it."""

    __slots__ = ("_hooks", "_runner", "_timer")

    def __init__(
        self, hooks: Iterable[Hook], runner: Runner, *, timer: Timer = anyio.move_on_after
    ) -> None:
        ordered = sorted(hooks, key=_name_of)
        names = [hook.name for hook in ordered]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise HookConfigError(f"duplicate hook names {duplicates}")
        self._hooks: tuple[Hook, ...] = tuple(ordered)
        self._runner = runner
        self._timer = timer

    @property
    def hooks(self) -> tuple[Hook, ...]:
        return self._hooks

    def matching(self, event: Event) -> tuple[Hook, ...]:
        return tuple(hook for hook in self._hooks if hook.matches(event))

    async def evaluate(self, event: Event) -> Result:
        matched = self.matching(event)
        blocking = [hook for hook in matched if hook.blocking]
        runs: dict[str, HookRun] = {}
        decider: HookRun | None = None
        asking: HookRun | None = None
        skipped: tuple[str, ...] = ()

        async def observe(hook: Hook) -> None:
            runs[hook.name] = await self._run_one(hook, event)

        async with anyio.create_task_group() as group:
            for hook in matched:
                if not hook.blocking:
                    group.start_soon(observe, hook)
            for index, hook in enumerate(blocking):
                run = await self._run_one(hook, event)
                runs[hook.name] = run
                if run.decision is Decision.DENY:
                    decider = run
                    skipped = tuple(h.name for h in blocking[index + 1 :])
                    break
                if run.decision is Decision.PROMPT and asking is None:
                    asking = run
        ordered = tuple(runs[name] for name in sorted(runs))
        if decider is not None:
            return Result(event, Decision.DENY, decider, decider.reason, ordered, skipped)
        if asking is not None:
            return Result(event, Decision.PROMPT, asking, asking.reason, ordered)
        if not blocking:
            reason = "no blocking hook matched this event"
        else:
            reason = f"{len(blocking)} blocking hook(s) allowed"
        return Result(event, Decision.ALLOW, None, reason, ordered)

    async def _run_one(self, hook: Hook, event: Event) -> HookRun:
        scope = self._timer(hook.timeout)
        result: object = None
        error: Exception | None = None
        try:
            with scope:
                result = await self._runner.run(hook, event)
        except Exception as exc:  # fail closed: a hook that cannot run did not approve
            error = exc
        # The deadline wins over whatever the runner did once it was cancelled.
        if scope.cancel_called:
            return _timed_out(hook, error)
        if error is not None:
            return _failed(
                hook, f"failed ({type(error).__name__}: {error}); counted as deny", error
            )
        if not isinstance(result, HookResult):
            return _failed(hook, f"returned {type(result).__name__}, not a HookResult", None)
        reason = result.reason or f"hook {hook.name!r} said {result.decision}"
        if result.decision is Decision.DENY:
            reason = f"hook {hook.name!r} denied: {reason}"
        elif result.decision is Decision.PROMPT:
            reason = f"hook {hook.name!r} asks for a person's approval: {reason}"
        return HookRun(hook.name, hook.blocking, Status.OK, result.decision, reason)


def _name_of(hook: Hook) -> str:
    if not isinstance(hook, Hook):
        raise HookConfigError(f"expected a Hook, got {type(hook).__name__}")
    return hook.name


def _failed(hook: Hook, why: str, error: Exception | None) -> HookRun:
    reason = f"hook {hook.name!r} {why}"
    return HookRun(hook.name, hook.blocking, Status.FAILED, Decision.DENY, reason, True, error)


def _timed_out(hook: Hook, error: Exception | None) -> HookRun:
    declared = hook.on_timeout
    if declared is None:
        tail = "no on_timeout is declared, so it counts as deny"
    else:
        tail = f"its declared on_timeout is {declared}"
    reason = f"hook timeout: hook {hook.name!r} timed out after {hook.timeout:g}s; {tail}"
    decision = Decision.DENY if declared is None else declared
    return HookRun(
        hook.name, hook.blocking, Status.TIMED_OUT, decision, reason, declared is None, error
    )


def event_of(
    call: invoke.Call,
    name: str = PRE_TOOL_USE,
    *,
    context: Mapping[str, Any] | None = None,
    aliases: tuple[str, ...] = (),
) -> Event:
    """The hook event for a tool call: the tool name plus the call's data (and the host's
    `context`, which never overrides the call's own fields)."""
    payload = {
        **(context or {}),
        "tool": call.tool,
        "args": dict(call.args),
        "call_id": call.call_id,
        "caller": call.caller,
        "depth": call.depth,
        "meta": dict(call.meta),
    }
    return Event(name, call.tool, payload, aliases)


@dataclass(frozen=True, slots=True)
class HookStage:
    """The engine as a ring of `invoke.Chain` on `pre_tool_use`.

    `observe`, when given, receives every `Result` (so non-blocking failures reach the host's
    log); if it raises, the chain denies the call. `context`, when given, adds the host's fields
    for the call to its event's payload; `aliases` names the other names a tool goes by.
    """

    engine: Engine
    name: str = "hooks"
    event: str = PRE_TOOL_USE
    observe: Callable[[Result], None] | None = None
    context: Callable[[invoke.Call], Mapping[str, Any]] | None = None
    aliases: Callable[[str], tuple[str, ...]] | None = None

    async def judge(self, call: invoke.Call) -> invoke.Verdict:
        context = self.context(call) if self.context is not None else None
        aliases = self.aliases(call.tool) if self.aliases is not None else ()
        event = event_of(call, self.event, context=context, aliases=aliases)
        result = await self.engine.evaluate(event)
        if self.observe is not None:
            self.observe(result)
        if result.decision is Decision.ALLOW:
            return invoke.Verdict.allow(stage=self.name)
        if result.decision is Decision.PROMPT:
            return invoke.Verdict.prompt(result.reason, stage=self.name)
        cause = result.deciding.error if result.deciding is not None else None
        kind = _kind_of(result)
        return invoke.Verdict.deny(result.reason, kind=kind, stage=self.name, cause=cause)


def _kind_of(result: Result) -> toolfail.Kind:
    """A hook's own "no" is a permission answer, its timeout a timeout, its failure internal."""
    deciding = result.deciding
    if deciding is not None and deciding.status is Status.TIMED_OUT:
        return toolfail.Kind.TIMEOUT
    return toolfail.Kind.INTERNAL if result.fail_closed else toolfail.Kind.PERMISSION


def stage(
    engine: Engine,
    *,
    name: str = "hooks",
    event: str = PRE_TOOL_USE,
    observe: Callable[[Result], None] | None = None,
    context: Callable[[invoke.Call], Mapping[str, Any]] | None = None,
    aliases: Callable[[str], tuple[str, ...]] | None = None,
) -> HookStage:
    """The engine as an `invoke.Stage`."""
    return HookStage(engine, name, event, observe, context, aliases)
