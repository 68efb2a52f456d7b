"""The `run_bash` executor: the shell engine (`yagent.tools.shell`) as a tool.

The command runs in the workspace. Foreground results carry the receipt, the exit code, the model
text (which states truncation and how the run ended) and the byte counts; the raw output is not
repeated beside the text. Background runs log to the session's state directory.

Where it runs is the command gate's word (`CommandGate.confinement`, the provider the judgement
picked): inside bubblewrap under a namespaces preset — foreground and background alike, so
`is_background` is no way out of the sandbox — or on the host. A sandboxed run is under the
sandbox's resource limits; a foreground one is supervised (at its process limit it is killed),
and a run a limit ended has the `limit` receipt naming it. A foreground payload is the same in
and out of the sandbox (recorded sessions replay identically) apart from the jobs view; a
sandboxed background run's text says what the sandbox means for it. A surface without a command
gate runs on the host.

With a session sandbox (`tools.jobs`: bubblewrap over the whole workspace, no egress proxy), every
command runs in that one sandbox: `is_background` starts a job there, and a foreground line that
leaves processes running (`cmd &`, `nohup cmd &`) turns them into a job instead of losing them.
Jobs keep running across calls — a server a job started is reachable from later commands on the
sandbox's loopback — and every result after one exists ends with a short `jobs` view (text and
payload "jobs"). `list_jobs` lists them with their last output lines; `stop_job` stops one.
Without a session sandbox (host presets, an egress proxy, a worker confined to areas) a background
run is a process of its own as before, and list_jobs says so.

Behind the egress proxy (`[sandbox] allow_hosts`), a foreground run gets its own tag
(`proxyserver.watch`): when the proxy decided anything for it, the text ends with one
`[egress: …]` line (what was allowed, what was refused and why, what was not kept), the payload
carries the same under "egress", and an `egress` event goes to the host's publisher
(`invocation.PUBLISH` in the context's services, when the host set one). A background run is not
attributed (it outlives the call that could report it); its text says so.

A command whose process cannot be started (`shell.SpawnError`: a line over the kernel's 128 KiB
for one argument, no bash, a full process table) fails saying nothing ran, with a resend-safe kind
(`too_large`, `not_found`, `permission`, `overloaded`) — never an uncertain outcome left for
`yagent reconcile`.
"""

from __future__ import annotations

import errno
import functools
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.confine.sandbox import Supervision
from yagent.kernel.judge import toolfail
from yagent.tools import shell
from yagent.tools.adapter import ToolContext
from yagent.tools.commands import Confinement
from yagent.tools.egress import proxyserver
from yagent.tools.egress.attribution import Report
from yagent.tools.files import shellwatch
from yagent.tools.invocation import PUBLISH, needs
from yagent.tools.jobs import JobError, SessionSandbox
from yagent.tools.jobstate import jobs_view
from yagent.toolspec import params as p

SANDBOXED_BACKGROUND_NOTE = (
    " It runs inside the sandbox: it has its own process and network namespaces, so other "
    "commands cannot signal it or connect to a port it opens, and it ends when yagent exits."
)
UNATTRIBUTED_BACKGROUND_NOTE = (
    " Its requests through the egress proxy are judged as usual but not reported here: only a "
    "foreground run's result lists what the proxy allowed and refused for it."
)


def _log_path(ctx: ToolContext) -> Path:
    base = ctx.state_dir or Path(tempfile.gettempdir()) / "yagent"
    return base / "background" / f"bash-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns()}.log"


async def _confinement(ctx: ToolContext) -> Confinement | None:
    gate = ctx.surface.options.commands
    return None if gate is None else await gate.confinement()


@needs(PUBLISH)
async def run_bash(ctx: ToolContext, args: p.RunBashArgs) -> dict[str, Any]:
    """A foreground run of a session (with a state directory) is watched: the workspace files
    it changed go to the session's edit journal (`files.shellwatch`), for `/diff` and `/undo`.
    A process that could not start fails as `_not_started` says, watched or not."""
    try:
        return await _run_watched(ctx, args)
    except shell.SpawnError as exc:
        raise _not_started(args.command, exc) from exc


async def _run_watched(ctx: ToolContext, args: p.RunBashArgs) -> dict[str, Any]:
    if ctx.state_dir is None or args.is_background:
        return await _run_bash(ctx, args)
    home = ctx.state_dir.parent.parent  # <home>/state/<session>: never the workspace's own
    take = functools.partial(shellwatch.take, key=str(ctx.state_dir))
    before = await anyio.to_thread.run_sync(take, ctx.workspace, home)
    try:
        return await _run_bash(ctx, args)
    finally:
        with anyio.CancelScope(shield=True):  # a stopped command's changes are recorded too
            call_id = ctx.call.call_id
            await anyio.to_thread.run_sync(
                shellwatch.settle, ctx.state_dir, call_id, "run_bash", before, ctx.workspace, home
            )


def _not_started(command: str, exc: shell.SpawnError) -> toolfail.ToolFailure:
    """The failure for a command whose process could not be started: nothing ran, so the call
    is safe to send again once changed (a resend-safe kind, never an uncertain outcome)."""
    if exc.errno == errno.E2BIG:
        size = len(command.encode())
        return toolfail.ToolFailure(
            toolfail.Kind.TOO_LARGE,
            f"the command did not start, nothing ran: the line is {size} bytes, more than the "
            "kernel takes in one argument (128 KiB); write the script to a file with write_file "
            "and run that file",
        )
    kind = {
        errno.ENOENT: toolfail.Kind.NOT_FOUND,
        errno.EACCES: toolfail.Kind.PERMISSION,
        errno.EPERM: toolfail.Kind.PERMISSION,
    }.get(exc.errno or 0, toolfail.Kind.OVERLOADED)
    return toolfail.ToolFailure(kind, f"the command did not start, nothing ran: {exc.strerror}")


async def _run_bash(ctx: ToolContext, args: p.RunBashArgs) -> dict[str, Any]:
    where = await _confinement(ctx)
    if where is not None and where.session is not None:
        try:
            return await _in_session(ctx, args, where.session, where.env or {}, where.supervision)
        except JobError as exc:
            raise toolfail.ToolFailure(toolfail.Kind.INTERNAL, str(exc)) from exc
    launcher = where.launcher if where is not None else None
    env = where.env if where is not None else None
    if args.is_background:
        handle = await shell.run_background(
            args.command, cwd=ctx.workspace, log_path=_log_path(ctx), env=env, launcher=launcher
        )
        payload = handle.to_payload()
        if where is not None and where.sandboxed:
            payload["text"] += SANDBOXED_BACKGROUND_NOTE
        if isinstance(launcher, proxyserver.Bridged):
            payload["text"] += UNATTRIBUTED_BACKGROUND_NOTE
    else:
        with proxyserver.watch(launcher) as watch:
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
    publish = ctx.services.get(PUBLISH)
    if publish is not None:
        event = {"delegation_id": ctx.delegation_id, "call_id": ctx.call.call_id}
        publish("egress", {**event, "name": "run_bash", **payload["egress"]})


JOB_STARTED = (
    "started in the background as job {id}: pid {pid} in the session sandbox; output goes to "
    "{log}. It keeps running across calls in the same sandbox (later commands reach its ports "
    "on 127.0.0.1 and its pids); list_jobs shows it with its last output lines, stop_job stops "
    "it, and it is stopped when the session ends."
)


async def _in_session(
    ctx: ToolContext,
    args: p.RunBashArgs,
    session: SessionSandbox,
    env: dict[str, str] | Any,
    supervision: Supervision | None,
) -> dict[str, Any]:
    if args.is_background:
        job = await session.start_job(
            args.command,
            ["bash", "-c", args.command],
            cwd=ctx.workspace,
            env=env,
            log=_log_path(ctx),
        )
        text = JOB_STARTED.format(id=job.id, pid=job.pid, log=job.log)
        payload: dict[str, Any] = {"job": job.id, "pid": job.pid, "log_path": job.log}
        payload["text"] = text
    else:
        result = await shell.run_foreground(
            args.command,
            cwd=ctx.workspace,
            timeout=args.timeout,
            env=env,
            launcher=session.launcher(_log_path(ctx)),
            supervision=supervision,
        )
        payload = result.to_payload()
        payload.pop("output", None)
    jobs = await session.jobs()
    if jobs:
        payload["jobs"] = [job.line() for job in jobs]
        text = payload["text"]
        payload["text"] = text + ("" if text.endswith("\n") else "\n") + jobs_view(jobs)
    return payload


def _session(ctx: ToolContext) -> SessionSandbox | None:
    gate = ctx.surface.options.commands
    return None if gate is None else gate.session


NO_SESSION = (
    "no background jobs: no session sandbox is running here (none started yet, or commands run "
    "on the host, behind the egress proxy, or confined to a worker's areas, where a background "
    "run is a process of its own: stop it with `kill -TERM -<pgid>`)"
)


async def list_jobs(ctx: ToolContext, args: p.ListJobsArgs) -> dict[str, Any]:
    session = _session(ctx)
    try:
        jobs = [] if session is None else await session.jobs()
    except JobError as exc:
        raise toolfail.ToolFailure(toolfail.Kind.INTERNAL, str(exc)) from exc
    if not jobs:
        text = "no background jobs in this session" if session is not None else NO_SESSION
        return {"jobs": [], "text": text}
    blocks = []
    for job in jobs:
        lines = [job.line(), f"  log: {job.log}"]
        lines += [f"  | {line}" for line in job.tail] or ["  (no output yet)"]
        blocks.append("\n".join(lines))
    return {"jobs": [job.to_payload() for job in jobs], "text": "\n".join(blocks)}


async def stop_job(ctx: ToolContext, args: p.StopJobArgs) -> dict[str, Any]:
    session = _session(ctx)
    if session is None or not session.started:
        raise toolfail.ToolFailure(toolfail.Kind.NOT_FOUND, f"no job {args.id}: {NO_SESSION}")
    try:
        job, killed = await session.stop(args.id)
    except JobError as exc:
        raise toolfail.ToolFailure(toolfail.Kind.NOT_FOUND, str(exc)) from exc
    how = f"; SIGKILL was needed for pids {', '.join(map(str, killed))}" if killed else ""
    text = f"stopped {job.line()}{how}"
    if job.tail:
        text += "\nlast output:\n" + "\n".join(f"  | {line}" for line in job.tail)
    return {"job": job.to_payload(), "killed": list(killed), "text": text}
