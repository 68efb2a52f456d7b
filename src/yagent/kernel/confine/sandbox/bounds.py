"""How a bubblewrap sandbox applies its resource `Limits`: the parts of its argv that bound it.

Guarantees:
- `Bounds.of(limits)` fixes the limits in force (`Limits.in_force`: clamped to this process's hard
  limits) and the `prlimit` prefix that sets them before every program; as root it also makes the
  mapped user (`identity.Identity`), since the kernel never holds uid 0 to `RLIMIT_NPROC`.
  `Bounds.of(None)` bounds nothing and changes no argv.
- Under the mapped user, bwrap is started inside its namespace (`entry`), makes no nested user
  namespace (`unshare`: a nested one would unmap root's files) and keeps `identity.CAPS`
  (`caps`); otherwise bwrap unshares everything and keeps no capability.
- The private `/tmp` and `/run` are each at most `memory_mb` (`tmpfs_size`).
- `supervision()` is what a host polls during a run (the task count only under the mapped user,
  where it is the sandbox's own); `program_env` adds what git needs under the mapped user.
Refuses: no `prlimit` on PATH (`UnavailableError`), and what `Identity.create` refuses.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass

from yagent.kernel.confine.sandbox.errors import UnavailableError
from yagent.kernel.confine.sandbox.identity import CAPS, Identity
from yagent.kernel.confine.sandbox.limits import MIB, Limits, Supervision

_UNSHARED = ("ipc", "pid", "net", "uts", "cgroup-try")


@dataclass(frozen=True, slots=True)
class Bounds:
    """The limits in force for one sandbox and how its argv applies them."""

    limits: Limits | None = None
    identity: Identity | None = None
    prlimit: tuple[str, ...] = ()

    @classmethod
    def of(cls, limits: Limits | None) -> Bounds:
        if limits is None:
            return cls()
        found = shutil.which("prlimit")
        if found is None:
            raise UnavailableError("`prlimit` (util-linux) is not on PATH: limits cannot be set")
        held = limits.in_force()
        # root is exempt from RLIMIT_NPROC: run as a mapped non-root uid
        identity = Identity.create() if os.geteuid() == 0 else None
        return cls(held, identity, tuple(held.prlimit(found)))

    def entry(self) -> list[str]:
        return [] if self.identity is None else self.identity.enter()

    def unshare(self) -> list[str]:
        if self.identity is None:
            return ["--unshare-all"]
        return [f"--unshare-{kind}" for kind in _UNSHARED]

    def caps(self) -> list[str]:
        if self.identity is None:
            return []
        return [word for cap in CAPS for word in ("--cap-add", cap)]

    def tmpfs_size(self) -> list[str]:
        return [] if self.limits is None else ["--size", str(self.limits.memory_mb * MIB)]

    def supervision(self) -> Supervision | None:
        if self.limits is None:
            return None
        count = self.identity.tasks if self.identity is not None else None
        return Supervision(self.limits, count)

    def program_env(self, env: Mapping[str, str]) -> dict[str, str]:
        return dict(env) if self.identity is None else self.identity.git_env(env)
