"""ptc confinement vocabulary: what a worker really provides, what a run requires, and the
launcher and egress seams of the subprocess form.

Contract:
- `Capability` is what a subprocess worker actually gets: its memory limit (`cgroup` when a
  cgroup v2 `memory.max` was set *and* the worker was verified inside it, else `heap-only`: V8's
  heap limit alone), its isolation (`process`), the launcher (sandbox provider) it ran under and
  that launcher's `sandbox.Level` (a launcher that declares none is `IN_PROCESS`: silence is the
  weak side).
- `Requirements.missing(capability)` lists every requirement the capability does not meet; a run
  with anything missing is refused before the worker starts (fail closed, never downgraded).
- A `Launcher` wraps the worker's argv: `sandbox.BwrapProvider` is one as it is (`name`, `level`,
  `wrap`); `FuncLauncher` makes one from a function.
- Egress uses the sandbox vocabulary (`EgressMode`: UNRESTRICTED < PROXY < DENIED,
  `EgressEnforcer`). `check_egress(mode, backend)` refuses (`EgressError`) any mode above
  unrestricted unless the backend's declared `egress()` reaches it; no backend, or a backend that
  raises while asked, satisfies nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from yagent.kernel.confine.sandbox import EgressEnforcer, EgressMode, Level
from yagent.kernel.ptc.errors import EgressError


class MemoryLimit(enum.StrEnum):
    HEAP_ONLY = "heap-only"  # V8's heap limit; the worker's other memory is unbounded
    CGROUP = "cgroup"  # cgroup v2 memory.max over the whole worker


_MEMORY_ORDER = {MemoryLimit.HEAP_ONLY: 0, MemoryLimit.CGROUP: 1}


@dataclass(frozen=True, slots=True)
class Capability:
    memory_limit: MemoryLimit = MemoryLimit.HEAP_ONLY
    isolation: str = "process"
    launcher: str = ""  # the sandbox provider the worker ran under; "" for none
    level: Level = Level.IN_PROCESS

    def as_dict(self) -> dict[str, str]:
        return {
            "memory_limit": self.memory_limit.value,
            "isolation": self.isolation,
            "launcher": self.launcher or "none",
            "level": self.level.name.lower(),
        }


@dataclass(frozen=True, slots=True)
class Requirements:
    """What a run insists on. Defaults require nothing beyond a separate process."""

    memory_limit: MemoryLimit = MemoryLimit.HEAP_ONLY
    launcher: str = ""  # a launcher of this name must be used; "" requires none
    level: Level = Level.IN_PROCESS

    def missing(self, capability: Capability) -> dict[str, str]:
        """Each requirement `capability` fails: name → what was required."""
        out: dict[str, str] = {}
        if _MEMORY_ORDER[capability.memory_limit] < _MEMORY_ORDER[self.memory_limit]:
            out["memory_limit"] = self.memory_limit.value
        if self.launcher and capability.launcher != self.launcher:
            out["launcher"] = self.launcher
        if capability.level < self.level:
            out["level"] = self.level.name.lower()
        return out


@runtime_checkable
class Launcher(Protocol):
    """Runs the worker under a sandbox provider by wrapping its argv."""

    @property
    def name(self) -> str: ...

    def wrap(self, argv: Sequence[str]) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class FuncLauncher:
    """A launcher from a name, an argv-wrapping function and the level it declares."""

    name: str
    fn: Callable[[Sequence[str]], list[str]]
    level: Level = Level.IN_PROCESS

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return list(self.fn(argv))


def level_of(launcher: object) -> Level:
    """The level a launcher declares; no launcher, or no readable declaration, is IN_PROCESS."""
    try:
        return Level.parse(getattr(launcher, "level", Level.IN_PROCESS))
    except ValueError:
        return Level.IN_PROCESS


def check_egress(mode: EgressMode, backend: object | None) -> None:
    """Refuse a mode no backend enforces (see the module contract)."""
    if mode is EgressMode.UNRESTRICTED:
        return
    if not isinstance(backend, EgressEnforcer):
        raise EgressError(
            f"egress mode {mode.name.lower()} was required but no backend enforces it: "
            "environment variables alone are advice, not enforcement; the worker was not started"
        )
    try:
        declared = EgressMode(backend.egress())
    except Exception as exc:  # a backend that cannot answer does not satisfy (fail closed)
        raise EgressError(
            f"the egress backend failed when asked what it enforces ({type(exc).__name__}: {exc})"
        ) from exc
    if declared < mode:
        raise EgressError(
            f"egress mode {mode.name.lower()} was required but the backend only enforces "
            f"{declared.name.lower()}; the worker was not started"
        )
