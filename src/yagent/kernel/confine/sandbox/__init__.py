"""sandbox: isolation levels, the provider protocol, the registry, and real providers.

Guarantees:
- `Level` (IN_PROCESS < NAMESPACES < HARDWARE) and `EgressMode` (UNRESTRICTED < PROXY < DENIED)
  compare; the zero value of each is the weakest, so an undeclared backend lands on the weak side.
- A `Provider` declares its level and runs a `Program` (argv, cwd, complete env, timeout, egress
  need) to a `Result` (exit code, capped output, `timed_out` / `truncated` flags); the program's
  whole process tree is killed with the run. A backend claims egress enforcement through
  `EgressEnforcer`; silence is taken as none.
- `Registry.pick(level, egress)` returns the weakest provider that satisfies both, and raises
  `NoProviderError` when none does: never a downgrade.
- `BwrapProvider` (NAMESPACES): read-only root, writable workspace, protected paths read-only,
  private /tmp and /run, network unshared unless egress is unrestricted, capabilities dropped.
  `HostProvider` (IN_PROCESS) isolates nothing and says so.
- `Limits` bound memory, processes, CPU time, file size and open files per program of a
  `BwrapProvider` built with them (as root through a mapped non-root user, `identity`, so the
  process limit holds); `Supervision` is what a host polls during a run and how it names the
  limit that ended one.
Refuses: invalid programs (`ProgramError`), duplicate provider names, sandboxes that could not be
built (`SetupError` — never an exit code).
Leaves to the host: which providers to register (levels are self-declared; an untrusted backend
must not be registered), the program's environment, and HARDWARE backends.
"""

from yagent.kernel.confine.sandbox.bwrap import DEFAULT_PROTECTED, BwrapProvider
from yagent.kernel.confine.sandbox.errors import (
    NoProviderError,
    ProgramError,
    RegistryError,
    SandboxError,
    SetupError,
    UnavailableError,
    UnknownProviderError,
)
from yagent.kernel.confine.sandbox.host import HostProvider
from yagent.kernel.confine.sandbox.levels import EgressEnforcer, EgressMode, Level, egress_of
from yagent.kernel.confine.sandbox.limits import Limits, LimitsError, Supervision, default_memory_mb
from yagent.kernel.confine.sandbox.provider import MAX_OUTPUT_BYTES, Program, Provider, Result
from yagent.kernel.confine.sandbox.registry import Registry

__all__ = [
    "DEFAULT_PROTECTED",
    "MAX_OUTPUT_BYTES",
    "BwrapProvider",
    "EgressEnforcer",
    "EgressMode",
    "HostProvider",
    "Level",
    "Limits",
    "LimitsError",
    "NoProviderError",
    "Program",
    "ProgramError",
    "Provider",
    "Registry",
    "RegistryError",
    "Result",
    "SandboxError",
    "SetupError",
    "Supervision",
    "UnavailableError",
    "UnknownProviderError",
    "default_memory_mb",
    "egress_of",
]
