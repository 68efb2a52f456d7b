"""`ToolView`: what a judgement stage may read of the run's tools.

Contract: a stage of the Surface's chain sees the tool lookup (`spec` for this run's tools,
`known` for every built-in tool), the run's profile, the workspace guard and whether the
command-policy ring judges a spec — nothing else of the Surface. `Surface` satisfies it; the
stages depend on this protocol, so the Surface can import them without an import loop.
"""

from __future__ import annotations

from typing import Protocol

from yagent.tools.guard import WorkspaceGuard
from yagent.toolspec import Spec
from yagent.toolspec.profiles import Profile


class ToolView(Protocol):
    @property
    def profile(self) -> Profile: ...

    @property
    def guard(self) -> WorkspaceGuard: ...

    def spec(self, name: str) -> Spec | None:
        """This run's tool of that name, or None when the run does not have it."""
        ...

    def known(self, name: str) -> Spec | None:
        """A built-in tool of that name, granted to this run or not."""
        ...

    def judges_commands(self, spec: Spec) -> bool:
        """Whether the command-policy ring (not the authorization ring) judges `spec`."""
        ...
