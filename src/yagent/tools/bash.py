"""The `run_bash` executor: the shell engine (`yagent.tools.shell`) as a tool.

The command runs in the workspace. Foreground results carry the receipt, the exit code, the model
text (which states truncation and how the run ended) and the byte counts; the raw output is not
repeated beside the text. Background runs log to the session's state directory.

Where it runs is the command gate's word (`CommandGate.confinement`, the provider the judgement
picked): inside bubblewrap under a namespaces preset — foreground and background alike, so
`is_background` is no way out of the sandbox — or on the host. A foreground payload is the same in
and out of the sandbox (recorded sessions replay identically); a sandboxed background run's text
says what the sandbox means for it. A surface without a command gate runs on the host.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from yagent.tools import shell
from yagent.tools.adapter import ToolContext
from yagent.tools.commands import Confinement
from yagent.toolspec import params as p

SANDBOXED_BACKGROUND_NOTE = (
    " It runs inside the sandbox: it has its own process and network namespaces, so other "
    "commands cannot signal it or connect to a port it opens, and it ends when yagent exits."
)


def _log_path(ctx: ToolContext) -> Path:
    base = ctx.state_dir or Path(tempfile.gettempdir()) / "yagent"
    return base / "background" / f"bash-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns()}.log"


async def _confinement(ctx: ToolContext) -> Confinement | None:
    gate = ctx.surface.options.commands
    return None if gate is None else await gate.confinement()


async def run_bash(ctx: ToolContext, args: p.RunBashArgs) -> dict[str, Any]:
    where = await _confinement(ctx)
    launcher = where.launcher if where is not None else None
    env = where.env if where is not None else None
    if args.is_background:
        handle = await shell.run_background(
            args.command, cwd=ctx.workspace, log_path=_log_path(ctx), env=env, launcher=launcher
        )
        payload = handle.to_payload()
        if where is not None and where.sandboxed:
            payload["text"] += SANDBOXED_BACKGROUND_NOTE
    else:
        result = await shell.run_foreground(
            args.command, cwd=ctx.workspace, timeout=args.timeout, env=env, launcher=launcher
        )
        payload = result.to_payload()
        payload.pop("output", None)
    return payload
