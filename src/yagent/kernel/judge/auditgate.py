"""auditgate: the audit gate — one approval rule set for every way a tool can be called.

Contract:
- An `Op` is what the gate judges: a name, a risk score in [0, 1] (`Level` names the usual
  points) and a tri-state `mutating` flag (True / False / None = unknown). It is validated when
  built; `Op.parse` reads raw host data (numbers, numeric strings, level names, "true"/"false").
- `Thresholds` split the risk axis: risk >= `deny_at` is denied, risk >= `prompt_at` goes to a
  person, below that it is allowed; `review_mutating` sends every mutating op to a person.
- Decision order (first match wins): input that cannot be parsed ⇒ DENY; risk >= deny_at ⇒
  DENY; mutating unknown ⇒ PROMPT (never guessed); risk >= prompt_at ⇒ PROMPT; mutating while
  review_mutating ⇒ PROMPT; otherwise ALLOW.
- An `AuditGate`'s thresholds can only be made stricter at run time (lower numbers,
  review_mutating only switched on). A change that would loosen any field raises `LoosenError`
  and changes nothing. Every effective change is atomic (one lock, read-modify-write) and bumps
  `generation`; each `Audit` names the generation it was judged under.
- Two entry points share the gate: `with_audit_gate` wraps one async tool function (a refusal
  raises and the tool is not called) and `stage` is an `invoke.Stage`, so ordinary calls, program
  calls and subprocess calls all meet the same rules in the same chain.
Left to the host: how a call maps to an `Op` (`op_of`), who the person reviewing is (an
`approve` callback, or the chain's approval loop on PROMPT), and what the risk scores mean.
"""

from __future__ import annotations

import enum
import functools
import math
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from yagent.kernel.judge import invoke, toolfail

P = ParamSpec("P")
R = TypeVar("R")

Decision = invoke.Decision


class PolicyError(Exception):
    """Root of this package's errors."""


class MalformedOpError(PolicyError, ValueError):
    """An operation, a risk value or a mutating flag that cannot be read."""


class InvalidThresholdsError(PolicyError, ValueError):
    """Thresholds that do not describe an order (NaN, negative, prompt above deny)."""


class LoosenError(PolicyError):
    """A run-time change that would make the gate less strict; nothing was changed."""

    def __init__(self, current: Thresholds, proposed: Thresholds, fields: tuple[str, ...]) -> None:
        super().__init__(
            f"audit thresholds can only be lowered at run time; {', '.join(fields)} would be "
            f"loosened ({current} -> {proposed}); nothing was changed"
        )
        self.current = current
        self.proposed = proposed
        self.fields = fields


_DENY_KIND = toolfail.Kind.PERMISSION


class AuditRefusedError(PolicyError, toolfail.ToolFailure):
    """A gated tool was not called; `audit` says why. Classifies through `toolfail`."""

    def __init__(self, audit: Audit) -> None:
        kind = toolfail.Kind.NEEDS_APPROVAL if audit.decision is Decision.PROMPT else _DENY_KIND
        toolfail.ToolFailure.__init__(self, kind, audit.reason)
        self.audit = audit


class AuditDeniedError(AuditRefusedError):
    """The gate denied the operation."""


class ReviewRequiredError(AuditRefusedError):
    """The operation needs a person's approval and none was given."""


class Level(float, enum.Enum):
    """Named points on the risk axis."""

    NONE = 0.0
    LOW = 0.25
    MEDIUM = 0.5
    HIGH = 0.75
    CRITICAL = 1.0


def parse_risk(value: object) -> float:
    """A risk score from raw host data; raises `MalformedOpError` rather than guessing."""
    if isinstance(value, Level):
        return float(value.value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text.upper() in Level.__members__:
            return float(Level[text.upper()].value)
        try:
            value = float(text)
        except ValueError:
            raise MalformedOpError(f"risk {value!r} is neither a number nor a level") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedOpError(f"risk must be a number or a level name, not {type(value).__name__}")
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise MalformedOpError(f"risk {value!r} is outside [0, 1]")
    return score


_FLAG_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def parse_mutating(value: object) -> bool | None:
    """The tri-state flag from raw data: None (absent) stays unknown; junk is malformed."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _FLAG_WORDS:
        return _FLAG_WORDS[value.strip().lower()]
    raise MalformedOpError(f"mutating must be true, false or absent, not {value!r}")


@dataclass(frozen=True, slots=True)
class Op:
    """One operation as the gate sees it. `mutating=None` means nobody declared it."""

    name: str
    risk: float
    mutating: bool | None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise MalformedOpError(f"operation name must be a non-empty string: {self.name!r}")
        if isinstance(self.risk, str):
            # Text is raw host data: it goes through `Op.parse`, never silently through here.
            raise MalformedOpError(f"risk must be a number or a Level, got {self.risk!r}")
        object.__setattr__(self, "risk", parse_risk(self.risk))
        if self.mutating is not None and not isinstance(self.mutating, bool):
            raise MalformedOpError(f"mutating must be True, False or None: {self.mutating!r}")

    @classmethod
    def parse(cls, name: object, risk: object, mutating: object = None) -> Op:
        """An op from raw data (level names, numeric strings, flag words)."""
        if not isinstance(name, str):
            raise MalformedOpError(f"operation name must be a string: {name!r}")
        return cls(name, parse_risk(risk), parse_mutating(mutating))


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where the risk axis is cut. `math.inf` means "never" for that band."""

    prompt_at: float = Level.MEDIUM.value
    deny_at: float = Level.CRITICAL.value
    review_mutating: bool = False

    def __post_init__(self) -> None:
        for label, value in (("prompt_at", self.prompt_at), ("deny_at", self.deny_at)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidThresholdsError(f"{label} must be a number: {value!r}")
            if math.isnan(value) or value < 0:
                raise InvalidThresholdsError(f"{label} must be >= 0: {value!r}")
            object.__setattr__(self, label, float(value))
        if self.prompt_at > self.deny_at:
            raise InvalidThresholdsError(
                f"prompt_at ({self.prompt_at}) must not be above deny_at ({self.deny_at})"
            )
        if not isinstance(self.review_mutating, bool):
            raise InvalidThresholdsError("review_mutating must be a bool")

    def loosened_by(self, proposed: Thresholds) -> tuple[str, ...]:
        """The fields `proposed` would make less strict than these (empty = not looser)."""
        loose: list[str] = []
        if proposed.prompt_at > self.prompt_at:
            loose.append("prompt_at")
        if proposed.deny_at > self.deny_at:
            loose.append("deny_at")
        if self.review_mutating and not proposed.review_mutating:
            loose.append("review_mutating")
        return tuple(loose)


class AuditRule(enum.StrEnum):
    """Which rule decided an audit."""

    UNPARSEABLE = "unparseable"
    DENY_THRESHOLD = "deny_threshold"
    UNKNOWN_MUTATING = "unknown_mutating"
    PROMPT_THRESHOLD = "prompt_threshold"
    MUTATING_REVIEW = "mutating_review"
    BELOW_THRESHOLDS = "below_thresholds"


@dataclass(frozen=True, slots=True)
class VersionedThresholds:
    """The thresholds in force and the generation they belong to (0 = as constructed)."""

    thresholds: Thresholds
    generation: int


@dataclass(frozen=True, slots=True)
class Audit:
    """One decision: what was decided, by which rule, on which op, under which generation."""

    decision: Decision
    rule: AuditRule
    reason: str
    op: Op | None
    generation: int

    def verdict(self, stage: str = "") -> invoke.Verdict:
        if self.decision is Decision.ALLOW:
            return invoke.Verdict.allow(stage=stage)
        if self.decision is Decision.PROMPT:
            return invoke.Verdict.prompt(self.reason, stage=stage)
        return invoke.Verdict.deny(self.reason, kind=_DENY_KIND, stage=stage)


class AuditGate:
    """Thresholds that only tighten, and the one decision function over them."""

    __slots__ = ("_lock", "_state")

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self._lock = threading.Lock()
        # One reference holds thresholds and generation together, so readers never see a mix.
        self._state = VersionedThresholds(thresholds or Thresholds(), 0)

    def snapshot(self) -> VersionedThresholds:
        return self._state

    @property
    def thresholds(self) -> Thresholds:
        return self._state.thresholds

    @property
    def generation(self) -> int:
        return self._state.generation

    def lower_with(self, mutate: Callable[[Thresholds], Thresholds]) -> VersionedThresholds:
        """Read-modify-write under the lock: `mutate(current)` proposes; looser ⇒ LoosenError.

        `mutate` runs while the lock is held, so concurrent tighteners never lose an update.
        """
        with self._lock:
            current = self._state
            proposed = mutate(current.thresholds)
            if not isinstance(proposed, Thresholds):
                raise InvalidThresholdsError(f"mutate returned {type(proposed).__name__}")
            loose = current.thresholds.loosened_by(proposed)
            if loose:
                raise LoosenError(current.thresholds, proposed, loose)
            if proposed == current.thresholds:
                return current
            self._state = VersionedThresholds(proposed, current.generation + 1)
            return self._state

    def lower(self, proposed: Thresholds) -> VersionedThresholds:
        """Replace the thresholds with `proposed`, which must be at least as strict."""
        return self.lower_with(lambda _current: proposed)

    def tighten(
        self,
        *,
        prompt_at: float | None = None,
        deny_at: float | None = None,
        review_mutating: bool | None = None,
    ) -> VersionedThresholds:
        """Change the named fields, based on the thresholds current at the time of the change."""

        def mutate(current: Thresholds) -> Thresholds:
            deny = current.deny_at if deny_at is None else deny_at
            # Lowering deny_at alone drags prompt_at down with it: stricter, same meaning.
            return Thresholds(
                min(current.prompt_at, deny) if prompt_at is None else prompt_at,
                deny,
                current.review_mutating if review_mutating is None else review_mutating,
            )

        return self.lower_with(mutate)

    def decide(self, op: object) -> Audit:
        """Judge one op; anything that is not a well-formed `Op` is denied."""
        state = self._state
        try:
            checked = _checked(op)
        except MalformedOpError as exc:
            return _unparseable(str(exc), state.generation)
        t = state.thresholds
        name, risk = checked.name, checked.risk
        rule, decision, reason = AuditRule.BELOW_THRESHOLDS, Decision.ALLOW, ""
        if risk >= t.deny_at:
            rule, decision = AuditRule.DENY_THRESHOLD, Decision.DENY
            reason = f"{name!r}: risk {risk:g} is at or above the deny threshold {t.deny_at:g}"
        elif checked.mutating is None:
            rule, decision = AuditRule.UNKNOWN_MUTATING, Decision.PROMPT
            reason = f"{name!r} does not declare whether it changes anything; a person decides"
        elif risk >= t.prompt_at:
            rule, decision = AuditRule.PROMPT_THRESHOLD, Decision.PROMPT
            reason = f"{name!r}: risk {risk:g} is at or above the review threshold {t.prompt_at:g}"
        elif checked.mutating and t.review_mutating:
            rule, decision = AuditRule.MUTATING_REVIEW, Decision.PROMPT
            reason = f"{name!r} changes state and every change needs a person's approval"
        return Audit(decision, rule, reason, checked, state.generation)

    def decide_with(self, build: Callable[[], object]) -> Audit:
        """Build the op with `build()` and judge it; a build that raises is a denial."""
        try:
            op = build()
        except Exception as exc:  # fail closed: an op that cannot be built is not allowed
            return _unparseable(
                f"the operation could not be read from the call ({type(exc).__name__}: {exc})",
                self._state.generation,
            )
        return self.decide(op)


def _checked(op: object) -> Op:
    if not isinstance(op, Op):
        raise MalformedOpError(f"expected an Op, got {type(op).__name__}")
    # An Op is validated when built; re-validate in case its fields were forced afterwards.
    return Op(op.name, op.risk, op.mutating)


def _unparseable(why: str, generation: int) -> Audit:
    reason = f"audit gate could not judge this call: {why}; it was not run"
    return Audit(Decision.DENY, AuditRule.UNPARSEABLE, reason, None, generation)


def with_audit_gate(
    tool_fn: Callable[P, Awaitable[R]],
    gate: AuditGate,
    op_of: Callable[P, object],
    *,
    approve: Callable[[Audit], Awaitable[bool]] | None = None,
) -> Callable[P, Awaitable[R]]:
    """`tool_fn` behind the gate: called only on ALLOW, or on PROMPT when `approve` says True.

    A refusal raises `AuditDeniedError` / `ReviewRequiredError` (carrying the `Audit`) without
    calling the tool. `op_of` receives the same arguments as the tool.
    """

    @functools.wraps(tool_fn)
    async def gated(*args: P.args, **kwargs: P.kwargs) -> R:
        audit = gate.decide_with(lambda: op_of(*args, **kwargs))
        if audit.decision is Decision.ALLOW:
            return await tool_fn(*args, **kwargs)
        if audit.decision is Decision.PROMPT:
            # Only an explicit True approves; any other answer leaves the tool uncalled.
            if approve is not None and (await approve(audit)) is True:
                return await tool_fn(*args, **kwargs)
            raise ReviewRequiredError(audit)
        raise AuditDeniedError(audit)

    return gated


@dataclass(frozen=True, slots=True)
class AuditStage:
    """The gate as a ring of `invoke.Chain`; PROMPT goes to the chain's approval loop."""

    gate: AuditGate
    op_of: Callable[[invoke.Call], object]
    name: str = "policy"

    async def judge(self, call: invoke.Call) -> invoke.Verdict:
        return self.gate.decide_with(lambda: self.op_of(call)).verdict(self.name)


def stage(
    gate: AuditGate, op_of: Callable[[invoke.Call], object], *, name: str = "policy"
) -> AuditStage:
    """The audit gate as an `invoke.Stage`; `op_of` is the host's call → `Op` mapping."""
    return AuditStage(gate, op_of, name)
