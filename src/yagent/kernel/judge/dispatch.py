"""dispatch: the delegation guard — permission is topology.

Contract:
- The host describes who may delegate to whom through an `EdgeSource` (`slugs()`,
  `dispatch_allow(slug)`). `Guard` reads it once, at construction, into an immutable allow
  matrix; later changes to the source do not leak in (build a new guard to change topology).
- Construction refuses a topology it cannot vouch for: a cycle (a self-edge is a cycle of length
  1) raises `CycleError` naming the cycle; an edge to a slug that is not listed raises
  `UnknownSlugError`; a source that raises or yields non-strings raises `TopologyError`.
- `check(caller, callee, depth)` is a pure function of the matrix and `max_depth`. `depth` is the
  caller's own delegation depth (the root is 0); the callee would run at `depth + 1`, which must
  not exceed `max_depth`. Rules in order: self_dispatch, unknown_caller, unknown_callee, depth,
  not_allowed. A refusal raises `DenyError` carrying the rule and the edge.
- `stage` adapts the guard to `invoke.Chain`; the host decides which calls are delegations.
Left to the host: where the topology comes from, which calls are delegations, and what a
slug names.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from yagent.kernel.judge import invoke, toolfail


@runtime_checkable
class EdgeSource(Protocol):
    """The host's topology: every slug, and for each slug the slugs it may dispatch to."""

    def slugs(self) -> Iterable[str]: ...

    def dispatch_allow(self, slug: str) -> Iterable[str]: ...


class DispatchError(Exception):
    """Root of this package's errors."""


class TopologyError(DispatchError):
    """The source's topology cannot be materialised."""


class CycleError(TopologyError):
    """The allow matrix has a cycle; `cycle` lists it, first slug repeated at the end."""

    def __init__(self, cycle: tuple[str, ...]) -> None:
        super().__init__(f"dispatch topology has a cycle: {' -> '.join(cycle)}")
        self.cycle = cycle


class UnknownSlugError(TopologyError):
    """An edge points at a slug the source does not list."""

    def __init__(self, slug: str, target: str) -> None:
        super().__init__(f"dispatch topology: {slug!r} may dispatch to unknown slug {target!r}")
        self.slug = slug
        self.target = target


class Refusal(enum.StrEnum):
    """Which rule refused a delegation."""

    SELF_DISPATCH = "self_dispatch"
    UNKNOWN_CALLER = "unknown_caller"
    UNKNOWN_CALLEE = "unknown_callee"
    DEPTH = "depth"
    NOT_ALLOWED = "not_allowed"


class DenyError(DispatchError, toolfail.ToolFailure):
    """A refused delegation: which rule, which edge, at which depth."""

    def __init__(
        self, rule: Refusal, caller: str, callee: str, depth: object, max_depth: int, detail: str
    ) -> None:
        toolfail.ToolFailure.__init__(self, toolfail.Kind.PERMISSION, detail)
        self.rule = rule
        self.caller = caller
        self.callee = callee
        self.depth = depth
        self.max_depth = max_depth


def _read(what: str, values: Iterable[object]) -> tuple[str, ...]:
    # A bare string is iterable too; reading it as slugs would invent one-letter agents.
    if isinstance(values, str | bytes):
        raise TopologyError(f"{what} returned a string, not a collection of slugs")
    try:
        items = tuple(values)
    except Exception as exc:
        raise TopologyError(f"{what} could not be read: {exc}") from exc
    slugs: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise TopologyError(f"{what} yielded {item!r}, not a non-empty slug")
        slugs.append(item)
    return tuple(slugs)


def _materialise(source: EdgeSource) -> dict[str, frozenset[str]]:
    try:
        listed = source.slugs()
    except Exception as exc:
        raise TopologyError(f"slugs() failed: {exc}") from exc
    slugs = sorted(set(_read("slugs()", listed)))
    matrix: dict[str, frozenset[str]] = {}
    for slug in slugs:
        try:
            raw = source.dispatch_allow(slug)
        except Exception as exc:
            raise TopologyError(f"dispatch_allow({slug!r}) failed: {exc}") from exc
        matrix[slug] = frozenset(_read(f"dispatch_allow({slug!r})", raw))
    for slug in slugs:
        for target in sorted(matrix[slug]):
            if target not in matrix:
                raise UnknownSlugError(slug, target)
    return matrix


def find_cycle(matrix: Mapping[str, Iterable[str]]) -> tuple[str, ...] | None:
    """The first cycle in slug order (closed: first slug repeated at the end), or None."""
    state: dict[str, int] = {}  # absent = unvisited, 1 = on the current path, 2 = done
    for root in sorted(matrix):
        if root in state:
            continue
        path: list[str] = [root]
        stack = [iter(sorted(matrix[root]))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return (*path[path.index(nxt) :], nxt)
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(matrix.get(nxt, ()))))
    return None


class Guard:
    """The materialised allow matrix and the depth limit."""

    __slots__ = ("_matrix", "_max_depth")

    def __init__(self, source: EdgeSource, max_depth: int) -> None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
            raise TopologyError(f"max_depth must be an int >= 0: {max_depth!r}")
        matrix = _materialise(source)
        cycle = find_cycle(matrix)
        if cycle is not None:
            raise CycleError(cycle)
        self._matrix: Mapping[str, frozenset[str]] = MappingProxyType(matrix)
        self._max_depth = max_depth

    @property
    def max_depth(self) -> int:
        return self._max_depth

    @property
    def slugs(self) -> tuple[str, ...]:
        return tuple(self._matrix)

    def allowed(self, caller: str) -> frozenset[str]:
        """The slugs `caller` may dispatch to (empty for an unknown caller)."""
        return self._matrix.get(caller, frozenset())

    def check(self, caller: str, callee: str, depth: int) -> None:
        """Raise `DenyError` unless `caller` (at `depth`) may dispatch to `callee`."""
        limit = self._max_depth

        def deny(rule: Refusal, detail: str) -> DenyError:
            return DenyError(rule, caller, callee, depth, limit, detail)

        if caller == callee:
            raise deny(Refusal.SELF_DISPATCH, f"{caller!r} may not dispatch to itself")
        if not isinstance(caller, str) or caller not in self._matrix:
            raise deny(Refusal.UNKNOWN_CALLER, f"caller {caller!r} is not in the dispatch topology")
        if not isinstance(callee, str) or callee not in self._matrix:
            raise deny(Refusal.UNKNOWN_CALLEE, f"{callee!r} is not in the dispatch topology")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise deny(Refusal.DEPTH, f"delegation depth {depth!r} cannot be judged")
        if depth + 1 > limit:
            raise deny(
                Refusal.DEPTH,
                f"{caller!r} at depth {depth} may not delegate further "
                f"(maximum delegation depth is {limit})",
            )
        if callee not in self._matrix[caller]:
            allowed = ", ".join(sorted(self._matrix[caller])) or "nobody"
            raise deny(
                Refusal.NOT_ALLOWED,
                f"{caller!r} may not dispatch to {callee!r} (it may dispatch to: {allowed})",
            )

    def permits(self, caller: str, callee: str, depth: int) -> bool:
        """`check` as a predicate."""
        try:
            self.check(caller, callee, depth)
        except DenyError:
            return False
        return True


@dataclass(frozen=True, slots=True)
class MappingSource:
    """An `EdgeSource` over a plain mapping slug → allowed slugs (config files, tests)."""

    edges: Mapping[str, Iterable[str]]

    def slugs(self) -> Iterable[str]:
        return tuple(self.edges)

    def dispatch_allow(self, slug: str) -> Iterable[str]:
        return tuple(self.edges.get(slug, ()))


Delegation = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class DispatchStage:
    """The guard as a ring of `invoke.Chain`.

    `delegation_of(call)` returns (caller, callee, depth) for a delegation and None for any
    other call, which passes. A `delegation_of` that raises is a denial (by the chain).
    """

    guard: Guard
    delegation_of: Callable[[invoke.Call], Delegation | None]
    name: str = "dispatch"

    async def judge(self, call: invoke.Call) -> invoke.Verdict:
        edge = self.delegation_of(call)
        if edge is None:
            return invoke.Verdict.allow(stage=self.name)
        caller, callee, depth = edge
        try:
            self.guard.check(caller, callee, depth)
        except DenyError as exc:
            return invoke.Verdict.deny(str(exc), kind=exc.kind, stage=self.name, cause=exc)
        return invoke.Verdict.allow(stage=self.name)


def stage(
    guard: Guard,
    delegation_of: Callable[[invoke.Call], Delegation | None],
    *,
    name: str = "dispatch",
) -> DispatchStage:
    """The guard as an `invoke.Stage`."""
    return DispatchStage(guard, delegation_of, name)
