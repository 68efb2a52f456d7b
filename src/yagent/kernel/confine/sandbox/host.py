"""The unconfined provider: a plain child process of the host, declared at the weakest level.

It isolates nothing (same filesystem, same network, same user) and says so: its level is
`IN_PROCESS` and it declares no egress enforcement, so the registry only picks it when nothing
stronger was asked for, and it refuses (`SetupError`) a program whose egress mode is anything but
`UNRESTRICTED` rather than run it with a network it was told it would not have. What it does
guarantee is the run contract every provider shares: the
complete environment comes from the `Program` (nothing inherited), the working directory defaults
to the one it was built with, and the program's process group is killed when the run ends.
"""

from __future__ import annotations

import os
from pathlib import Path

from yagent.kernel.confine.sandbox import process, provider
from yagent.kernel.confine.sandbox.errors import SetupError
from yagent.kernel.confine.sandbox.levels import EgressMode, Level
from yagent.kernel.confine.sandbox.provider import Program, Result


class HostProvider:
    """Runs programs directly on the host (no isolation); level `IN_PROCESS`."""

    def __init__(self, workdir: str | os.PathLike[str], *, name: str = "host") -> None:
        self._workdir = Path(workdir)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def level(self) -> Level:
        return Level.IN_PROCESS

    async def run(self, program: Program) -> Result:
        if program.egress is not EgressMode.UNRESTRICTED:
            raise SetupError(
                f"the host provider cannot hold egress {program.egress.name.lower()!r}: it "
                "isolates nothing; run the program on a sandbox that enforces it"
            )
        cwd = self._workdir / program.cwd if program.cwd else self._workdir
        if not cwd.is_dir():
            raise SetupError(f"working directory {str(cwd)!r} does not exist")
        try:
            done = await process.run_process(
                program.argv,
                cwd=str(cwd),
                env=program.env,
                deadline=program.timeout,
                limit=provider.MAX_OUTPUT_BYTES,
            )
        except OSError as exc:  # the program could not be started at all
            raise SetupError(f"could not start {program.argv[0]!r}", str(exc)) from exc
        return Result(
            exit_code=done.exit_code,
            output=done.output,
            timed_out=done.timed_out,
            truncated=done.truncated,
            dropped=done.dropped,
            provider=self._name,
        )
