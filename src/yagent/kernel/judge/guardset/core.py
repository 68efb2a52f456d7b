"""guardset core: guards, the immutable set, and the merge of several judgements into one.

`Set.evaluate` asks every guard (concurrently) and merges what they said; the order of the result
never depends on which guard finished first. Merge rules, in one place (`merge`):
- any DENY wins; denials are listed by (rank, name); the outcome is retryable only if every denial
  is; the guidance points at the denial that really blocks (the first non-retryable by rank, else
  the first by rank);
- otherwise any PROMPT wins (a person must approve);
- otherwise ALLOW.
When every guard allowed, `evaluate` one at a time builds that ALLOW outcome directly (the guards
are already in set order: nothing to rank) — the outcome `merge` gives, as a differential test
holds.
A guard that raises, or returns something that is not a Verdict, is an internal DENY (fail closed)
with the exception chained. Cancellation is not a guard failure: it propagates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import anyio

from yagent.kernel.judge import invoke, toolfail

STAGE_NAME = "guardset"
"""The default name of the ring the whole set forms in an `invoke.Chain`."""


class GuardsetError(Exception):
    """Root of this package's errors."""


class EmptySetError(GuardsetError):
    """A set must hold at least one guard: revoking every guard is a breach, not a downgrade."""


class DuplicateGuardError(GuardsetError):
    """Two guards in one set share a name (the name is how a guard is revoked and reported)."""


class UnknownGuardError(GuardsetError, KeyError):
    """A guard named for revocation or lookup is not in the set (a typo must not pass silently)."""


@dataclass(frozen=True, slots=True)
class Guard:
    """One independent judgement. Lower `rank` is more important; `name` breaks rank ties."""

    name: str
    rank: int
    check: Callable[[invoke.Call], Awaitable[invoke.Verdict]]

    def __post_init__(self) -> None:
        if not self.name:
            raise GuardsetError("guardset.Guard: name must not be empty")


def _order(guard: Guard) -> tuple[int, str]:
    return (guard.rank, guard.name)


@dataclass(frozen=True, slots=True, init=False)
class Set:
    """An immutable, non-empty set of guards, kept in (rank, name) order.

    `generation` is stamped by the `Assembly` that installed the set; a set built by hand has the
    generation it was given (0 by default). Changing a set means building a new one.
    """

    guards: tuple[Guard, ...]
    generation: int = 0

    def __init__(self, guards: Iterable[Guard], *, generation: int = 0) -> None:
        ordered = tuple(sorted(guards, key=_order))
        if not ordered:
            raise EmptySetError("guardset.Set: a set needs at least one guard")
        names = [g.name for g in ordered]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise DuplicateGuardError(f"guardset.Set: duplicate guard names {twice}")
        object.__setattr__(self, "guards", ordered)
        object.__setattr__(self, "generation", generation)

    @classmethod
    def of(cls, *guards: Guard) -> Set:
        return cls(guards)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.guards)

    def __len__(self) -> int:
        return len(self.guards)

    def __iter__(self) -> Iterator[Guard]:
        return iter(self.guards)

    def __contains__(self, name: object) -> bool:
        return any(g.name == name for g in self.guards)

    def get(self, name: str) -> Guard:
        for guard in self.guards:
            if guard.name == name:
                return guard
        raise UnknownGuardError(name)

    def without(self, *names: str) -> Set:
        """A new set lacking the named guards. Unknown names and emptying the set are refused."""
        missing = sorted(set(names) - set(self.names))
        if missing:
            raise UnknownGuardError(f"guardset.Set.without: no guards named {missing}")
        kept = [g for g in self.guards if g.name not in names]
        if not kept:
            raise EmptySetError(
                "guardset.Set.without: revoking every guard is a breach, not a downgrade; "
                "install a deny-all guard instead if nothing may run"
            )
        return Set(kept, generation=self.generation)

    def with_guards(self, *guards: Guard) -> Set:
        """A new set with `guards` added, or replacing same-named guards."""
        replaced = {g.name for g in guards}
        kept = [g for g in self.guards if g.name not in replaced]
        return Set([*kept, *guards], generation=self.generation)

    def with_generation(self, generation: int) -> Set:
        return Set(self.guards, generation=generation)

    async def evaluate(self, call: invoke.Call, *, concurrently: bool = True) -> Outcome:
        """Ask every guard — concurrently, or one at a time in set order for guards that do not
        wait on anything (no task per guard) — and merge their verdicts in set order."""
        if not concurrently:
            spoken_in_order = [await _check_one(guard, call) for guard in self.guards]
            if all(v.decision is invoke.Decision.ALLOW for v in spoken_in_order):
                return _all_allowed(self.guards, spoken_in_order, self.generation)
            return merge(self.guards, spoken_in_order, generation=self.generation)
        verdicts: list[invoke.Verdict | None] = [None] * len(self.guards)

        async def ask(index: int, guard: Guard) -> None:
            verdicts[index] = await _check_one(guard, call)

        async with anyio.create_task_group() as group:
            for index, guard in enumerate(self.guards):
                group.start_soon(ask, index, guard)
        spoken = tuple(v for v in verdicts if v is not None)
        return merge(self.guards, spoken, generation=self.generation)


async def _check_one(guard: Guard, call: invoke.Call) -> invoke.Verdict:
    try:
        verdict = await guard.check(call)
    except Exception as exc:  # fail closed: a guard that cannot judge does not allow
        return invoke.Verdict.deny(
            f"guard {guard.name!r} failed while judging this call "
            f"({type(exc).__name__}: {exc}); the call was not run",
            kind=toolfail.Kind.INTERNAL,
            stage=guard.name,
            cause=exc,
        )
    if not isinstance(verdict, invoke.Verdict):
        return invoke.Verdict.deny(
            f"guard {guard.name!r} returned {type(verdict).__name__}, not a Verdict; "
            "the call was not run",
            kind=toolfail.Kind.INTERNAL,
            stage=guard.name,
        )
    return verdict


@dataclass(frozen=True, slots=True)
class Outcome:
    """The merged judgement of one evaluation.

    `verdict` is what the chain sees; `verdicts` holds every guard's verdict in set order;
    `denials`/`prompts` the non-allowing ones; `blocking` the denial the guidance points at;
    `generation` the generation of the set that judged (an in-flight evaluation keeps its set).
    """

    verdict: invoke.Verdict
    verdicts: tuple[invoke.Verdict, ...]
    denials: tuple[invoke.Verdict, ...]
    prompts: tuple[invoke.Verdict, ...]
    blocking: invoke.Verdict | None
    generation: int

    @property
    def allowed(self) -> bool:
        return self.verdict.allowed


def merge(
    guards: Sequence[Guard], verdicts: Sequence[invoke.Verdict], *, generation: int = 0
) -> Outcome:
    """Merge per-guard verdicts (aligned with `guards`) into one outcome. The one merge rule."""
    if len(guards) != len(verdicts):
        raise GuardsetError("guardset.merge: one verdict per guard is required")
    # Each verdict is attributed to its guard so the merged reason can cite it by name (copied
    # only when it names another stage: a verdict is immutable, and most already name theirs).
    ranked = sorted(
        (
            (g, v if v.stage == g.name else dataclasses.replace(v, stage=g.name))
            for g, v in zip(guards, verdicts, strict=True)
        ),
        key=_order_of_pair,
    )
    ordered = tuple(v for _, v in ranked)
    denials = [(g, v) for g, v in ranked if v.decision is invoke.Decision.DENY]
    prompts = tuple(v for v in ordered if v.decision is invoke.Decision.PROMPT)
    blocking: invoke.Verdict | None = None
    if denials:
        blocking = next((v for _, v in denials if not v.retryable), denials[0][1])
        verdict = _merged_denial(denials, blocking)
    elif prompts:
        verdict = invoke.Verdict.prompt(_merged_prompt(prompts), stage=STAGE_NAME)
    else:
        verdict = invoke.Verdict.allow(stage=STAGE_NAME)
    only_denials = tuple(v for _, v in denials)
    return Outcome(verdict, ordered, only_denials, prompts, blocking, generation)


_SET_ALLOW = invoke.Verdict.allow(stage=STAGE_NAME)


def _all_allowed(
    guards: tuple[Guard, ...], verdicts: list[invoke.Verdict], generation: int
) -> Outcome:
    """`merge` of verdicts that all allow, from guards already in set order (the common case,
    without ranking): each verdict attributed to its guard, the set's ALLOW."""
    named = tuple(
        v if v.stage == g.name else dataclasses.replace(v, stage=g.name)
        for g, v in zip(guards, verdicts, strict=True)
    )
    return Outcome(_SET_ALLOW, named, (), (), None, generation)


def _order_of_pair(pair: tuple[Guard, invoke.Verdict]) -> tuple[int, str]:
    return _order(pair[0])


def _merged_denial(
    denials: list[tuple[Guard, invoke.Verdict]], blocking: invoke.Verdict
) -> invoke.Verdict:
    kind = blocking.kind or toolfail.Kind.PERMISSION
    retryable = all(v.retryable for _, v in denials)
    cause = blocking.cause or next((v.cause for _, v in denials if v.cause is not None), None)
    if len(denials) == 1:
        reason = blocking.reason
    else:
        lines = [f"{len(denials)} guards denied this call (most important first):"]
        for number, (guard, denial) in enumerate(denials, start=1):
            again = "retryable" if denial.retryable else "not retryable"
            lines.append(f"{number}. {guard.name} (rank {guard.rank}, {again}): {denial.reason}")
        lines.append(
            f"What blocks this call: {blocking.stage}. Resolve that first: "
            f"{toolfail.guidance(kind)}"
        )
        reason = "\n".join(lines)
    return invoke.Verdict.deny(
        reason, kind=kind, retryable=retryable, stage=STAGE_NAME, cause=cause
    )


def _merged_prompt(prompts: tuple[invoke.Verdict, ...]) -> str:
    if len(prompts) == 1:
        return prompts[0].reason
    lines = [f"{len(prompts)} guards ask for approval:"]
    lines.extend(f"- {p.stage}: {p.reason}" for p in prompts)
    return "\n".join(lines)
