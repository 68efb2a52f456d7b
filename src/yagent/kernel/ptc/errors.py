"""ptc errors: one hierarchy, each error carrying its `toolfail` kind.

Every refusal and every abort is a `toolfail.ToolFailure`, so `toolfail.classify(exc)` gives the
right kind without a table of its own: a host that turns exceptions into tool results tells "the
guard said no" from "a budget ran out" from "the host is misconfigured" by kind, never by text.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.tooldisclose import IdentCollisionError

if TYPE_CHECKING:
    from yagent.kernel.ptc.result import CallRecord, Usage


class Cause(enum.StrEnum):
    """Why a program was aborted. Stable strings: they travel in results and logs."""

    WALL = "wall"  # the wall-clock budget
    DEADLINE = "deadline"  # the caller's deadline came before the wall budget
    CALLS = "calls"  # too many host calls
    BYTES = "bytes"  # too many bytes returned to the program
    HEAP = "heap"  # V8's hard heap limit
    OOM_KILLED = "oom_killed"  # the worker was killed by the cgroup's memory.max
    SIGNAL = "signal"  # the worker died of a signal nobody sent on purpose
    EXIT = "exit"  # the worker exited without a result
    PROTOCOL = "protocol"  # the other side broke the message protocol
    ENGINE = "engine"  # the V8 engine failed on the driver's own code
    UNMANAGED = "unmanaged"  # a host call came back without any judgement


BUDGET_CAUSES: frozenset[Cause] = frozenset(
    {Cause.WALL, Cause.DEADLINE, Cause.CALLS, Cause.BYTES, Cause.HEAP, Cause.OOM_KILLED}
)

KIND_OF_CAUSE: Mapping[Cause, toolfail.Kind] = MappingProxyType(
    {
        **dict.fromkeys(BUDGET_CAUSES, toolfail.Kind.BUDGET),
        Cause.SIGNAL: toolfail.Kind.INTERNAL,
        Cause.EXIT: toolfail.Kind.INTERNAL,
        Cause.PROTOCOL: toolfail.Kind.INTERNAL,
        Cause.ENGINE: toolfail.Kind.INTERNAL,
        Cause.UNMANAGED: toolfail.Kind.UNMANAGED,
    }
)


class PtcError(toolfail.ToolFailure):
    """Base of every refusal and abort raised by `yagent.kernel.ptc`."""


class AssemblyError(PtcError, ValueError):
    """Bindings that cannot be assembled (a host configuration error)."""

    def __init__(self, message: str) -> None:
        super().__init__(toolfail.Kind.INTERNAL, message)


class BindingCollisionError(AssemblyError, IdentCollisionError):
    """Two tools normalise to one program identifier; `tools` names both (all) of them."""

    def __init__(self, ident: str, tools: tuple[str, ...]) -> None:
        names = " and ".join(repr(t) for t in tools)
        super().__init__(
            f"tools {names} both become host.{ident} in a program: refusing to bind either, "
            "one would silently shadow the other"
        )
        self.ident = ident
        self.tools = tools


class UnmanagedError(PtcError):
    """Tool bindings without a judgement chain: the program is refused before it runs."""

    def __init__(self, message: str) -> None:
        super().__init__(toolfail.Kind.UNMANAGED, message)


class CapabilityError(PtcError):
    """A required sandbox capability this runner cannot provide here (fail closed)."""

    def __init__(self, message: str, *, missing: Mapping[str, str] | None = None) -> None:
        super().__init__(toolfail.Kind.INTERNAL, message)
        self.missing = dict(missing or {})


class EgressError(PtcError):
    """An egress mode no given backend enforces: the worker is never spawned."""

    def __init__(self, message: str) -> None:
        super().__init__(toolfail.Kind.INTERNAL, message)


class Stop(Exception):
    """Raised inside a run to abort it; runners add logs and usage and raise `AbortedError`."""

    def __init__(self, cause: Cause, detail: str) -> None:
        super().__init__(f"{cause.value}: {detail}")
        self.cause = cause
        self.detail = detail


class AbortedError(PtcError):
    """The program was stopped before it finished: `cause` says why, `kind` how to treat it.

    `logs` and `calls` are what the program printed and called before it was stopped; `stderr`
    is the worker's redacted stderr (subprocess form only).
    """

    def __init__(
        self,
        cause: Cause,
        detail: str,
        *,
        logs: tuple[str, ...] = (),
        calls: tuple[CallRecord, ...] = (),
        usage: Usage | None = None,
        stderr: str = "",
        exit_code: int | None = None,
        signal: int | None = None,
    ) -> None:
        super().__init__(KIND_OF_CAUSE[cause], f"program aborted ({cause.value}): {detail}")
        self.cause = cause
        self.detail = detail
        self.logs = logs
        self.calls = calls
        self.usage = usage
        self.stderr = stderr
        self.exit_code = exit_code
        self.signal = signal

    @property
    def budget(self) -> str | None:
        """Which budget ran out, or None when the abort is not a budget's."""
        return self.cause.value if self.cause in BUDGET_CAUSES else None
