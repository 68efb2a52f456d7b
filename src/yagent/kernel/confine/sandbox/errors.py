"""sandbox errors: one hierarchy, rooted at `SandboxError`.

`NoProviderError` is the registry refusing to downgrade; `UnavailableError` is a backend that
cannot work on this machine at all; `SetupError` is a sandbox that could not be built for one run
(the program never started). None of them is ever turned into an exit code.
"""

from __future__ import annotations

from yagent.kernel.confine.sandbox.levels import EgressMode, Level


class SandboxError(Exception):
    """Root of every error this package raises."""


class ProgramError(SandboxError, ValueError):
    """A program description that cannot be run (empty argv, NUL bytes, bad timeout…)."""


class RegistryError(SandboxError, ValueError):
    """A registry that cannot be built (two providers with one name…)."""


class NoProviderError(SandboxError):
    """No registered provider satisfies the requirement; nothing weaker is used instead."""

    def __init__(
        self, level: Level, egress: EgressMode, available: tuple[tuple[str, Level, EgressMode], ...]
    ) -> None:
        shown = ", ".join(
            f"{n} ({lv.name.lower()}, egress {e.name.lower()})" for n, lv, e in available
        )
        super().__init__(
            f"no sandbox provider offers level {level.name.lower()} with egress "
            f"{egress.name.lower()} (registered: {shown or 'none'}); "
            "refusing to run on a weaker one"
        )
        self.level = level
        self.egress = egress
        self.available = available


class UnknownProviderError(SandboxError, LookupError):
    """No provider is registered under that name."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"no sandbox provider named {name!r} (registered: {list(known)})")
        self.name = name
        self.known = known


class UnavailableError(SandboxError):
    """The backend cannot run on this machine (binary missing, namespaces refused…)."""


class SetupError(SandboxError):
    """The sandbox could not be built for this run; the program did not start."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(f"{reason}: {output.strip()}" if output.strip() else reason)
        self.reason = reason
        self.output = output
