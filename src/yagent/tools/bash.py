"""The `run_bash` executor: the shell engine (`yagent.tools.shell`) as a tool.

The command runs in the workspace. Foreground results carry the receipt, the exit code, the model
text (which states truncation and how the run ended) and the byte counts; the raw output is not
repeated beside the text. Background runs log to the session's state directory.

Where it runs is the command gate's word (`CommandGate.confinement`, the provider the judgement
picked): inside bubblewrap under a namespaces preset — foreground and background alike, so
`is_background` is no way out of the sandbox — or on the host. A sandboxed run is under the
sandbox's resource limits; a foreground one is supervised (at its process limit it is killed),
and a run a limit ended has the `limit` receipt naming it. A foreground payload is the same in
and out of the sandbox (recorded sessions replay identically); a sandboxed background run's text
says what the sandbox means for it. A surface without a command gate runs on the host.

Behind the egress proxy (`[sandbox] allow_hosts`), a foreground run gets its own tag
(`egressproxy.watch`): when the proxy decided anything for it, the text ends with one
`[egress: …]` line (what was allowed, what was refused and why, what was not kept), the payload
carries the same under "egress", and an `egress` event goes to the host's publisher
(`PUBLISH_KEY` in the context's extras, when the host put one there). A background run is not
attributed (it outlives the call that could report it); its text says so.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from yagent.tools import egressproxy, shell
from yagent.tools.adapter import ToolContext
from yagent.tools.commands import Confinement
from yagent.tools.egresslog import Report
from yagent.toolspec import params as p

SANDBOXED_BACKGROUND_NOTE = (
    " It runs inside the sandbox: it has its own process and network namespaces, so other "
    "commands cannot signal it or connect to a port it opens, and it ends when yagent exits."
)
UNATTRIBUTED_BACKGROUND_NOTE = (
    " Its requests through the egress proxy are judged as usual but not reported here: only a "
    "foreground run's result lists what the proxy allowed and refused for it."
)
PUBLISH_KEY = "publish"
"""Host seam in `ToolContext.extras`: `(kind, payload) -> None`, the session's event publisher."""


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
        if isinstance(launcher, egressproxy.Bridged):
            payload["text"] += UNATTRIBUTED_BACKGROUND_NOTE
    else:
        with egressproxy.watch(launcher) as watch:
            result = await shell.run_foreground(
                args.command,
                cwd=ctx.workspace,
                timeout=args.timeout,
                env=env,
                launcher=watch.launcher,
                supervision=where.supervision if where is not None else None,
            )
        payload = result.to_payload()
        payload.pop("output", None)
        _tell(ctx, payload, watch.report)
    return payload


def _tell(ctx: ToolContext, payload: dict[str, Any], report: Report | None) -> None:
    """The egress note, field and event, when the proxy decided anything for this run."""
    if report is None or not report.worth_telling:
        return
    text = payload["text"]
    payload["text"] = text + ("" if text.endswith("\n") else "\n") + report.note()
    payload["egress"] = report.to_payload()
    publish = ctx.extras.get(PUBLISH_KEY)
    if callable(publish):
        event = {"delegation_id": ctx.delegation_id, "call_id": ctx.extras.get("call_id", "")}
        publish("egress", {**event, "name": "run_bash", **payload["egress"]})
