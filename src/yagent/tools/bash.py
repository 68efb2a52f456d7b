"""The `run_bash` executor: the shell engine (`yagent.tools.shell`) as a tool.

The command runs in the workspace. Foreground results carry the receipt, the exit code, the model
text (which states truncation and how the run ended) and the byte counts; the raw output is not
repeated beside the text. Background runs log to the session's state directory.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from yagent.tools import shell
from yagent.tools.adapter import ToolContext
from yagent.toolspec import params as p


def _log_path(ctx: ToolContext) -> Path:
    base = ctx.state_dir or Path(tempfile.gettempdir()) / "yagent"
    return base / "background" / f"bash-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns()}.log"


async def run_bash(ctx: ToolContext, args: p.RunBashArgs) -> dict[str, Any]:
    if args.is_background:
        handle = await shell.run_background(
            args.command, cwd=ctx.workspace, log_path=_log_path(ctx)
        )
        return handle.to_payload()
    result = await shell.run_foreground(args.command, cwd=ctx.workspace, timeout=args.timeout)
    payload = result.to_payload()
    payload.pop("output", None)
    return payload
