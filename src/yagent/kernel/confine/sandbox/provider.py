"""What a sandbox backend is: it declares its level and runs one program to completion.

A `Program` is the whole request (argv, working directory, the *complete* environment — nothing
is inherited from the host — a timeout and the egress mode it needs; a program that does not say
it needs the network gets none). A `Result` is the whole answer: the exit code, the interleaved
stdout/stderr output capped at `MAX_OUTPUT_BYTES`, and flags that say when it is not the whole
story (`timed_out`, `truncated`). Every provider kills the program's whole process tree when the
run ends — normally, on timeout or on cancellation — so nothing it started outlives the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from yagent.kernel.confine.sandbox.errors import ProgramError
from yagent.kernel.confine.sandbox.levels import EgressMode, Level

MAX_OUTPUT_BYTES = 1024 * 1024
"""Output kept per run; the rest is read (so the program never blocks) and counted as dropped."""


@dataclass(frozen=True, slots=True)
class Program:
    """One program to run. Checked when built; a bad one raises `ProgramError`."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    timeout: float | None = None
    egress: EgressMode = EgressMode.DENIED

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        egress: EgressMode = EgressMode.DENIED,
    ) -> None:
        args = tuple(argv)
        if not args or not args[0]:
            raise ProgramError("a program needs a non-empty argv")
        for word in args:
            if not isinstance(word, str) or "\0" in word:
                raise ProgramError(f"argv words must be strings without NUL bytes: {word!r}")
        variables = dict(env or {})
        for key, value in variables.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise ProgramError(f"invalid environment variable {key!r}")
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise ProgramError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if cwd is not None and ("\0" in cwd or not cwd):
            raise ProgramError(f"invalid working directory {cwd!r}")
        object.__setattr__(self, "argv", args)
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "env", MappingProxyType(variables))
        object.__setattr__(self, "timeout", timeout)
        object.__setattr__(self, "egress", EgressMode(egress))

    def with_egress(self, egress: EgressMode) -> Program:
        """The same program needing `egress` instead."""
        return Program(self.argv, cwd=self.cwd, env=self.env, timeout=self.timeout, egress=egress)


@dataclass(frozen=True, slots=True)
class Result:
    """How a run ended. `exit_code` is negative (-signal) when the program was killed."""

    exit_code: int
    output: bytes = b""
    timed_out: bool = False
    truncated: bool = False
    """The output is incomplete: over the cap, or the pipe was still held open after the run."""
    dropped: int = 0
    """Bytes read past the cap and not kept."""
    provider: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace")


@runtime_checkable
class Provider(Protocol):
    """A sandbox backend. `level` is self-declared: the kernel cannot check it (see the README)."""

    @property
    def name(self) -> str: ...

    @property
    def level(self) -> Level: ...

    async def run(self, program: Program) -> Result:
        """Run `program` to completion inside the sandbox; its process tree dies with the run.

        Raises `SetupError` when the sandbox could not be built (the program never started).
        """
        ...
