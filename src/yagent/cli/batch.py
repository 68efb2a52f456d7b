"""`yagent batch FILE | status BATCH | results BATCH | cancel BATCH` — many tasks, one command.

`yagent batch TASKS.jsonl|TASKS.toml [--engine local|temporal] [--address HOST:PORT]
[--task-queue Q] [--id ID] [--max-parallel N] [--heartbeat S] [--detach] [--json]` checks the
file (`scale.tasks`), submits the batch and shows its progress until every task is final: a live
table on a terminal, one line per change otherwise, JSON lines with `--json` (`{"type": "task",
...}` per change, then `{"type": "batch", ...}`). The batch id is the file's hash unless `--id`
names one; submitting a batch again re-runs nothing (it shows the batch as it stands).
`--engine local` (the default) runs the tasks in this process, `--max-parallel` at once; `--engine
temporal` hands them to the workers of `--task-queue` (`yagent worker`) and watches; `--detach`
returns once submitted. `--address` defaults to `$YAGENT_TEMPORAL_ADDRESS`, else 127.0.0.1:7233.
`status` shows each task's state, `results` each final task's result (`--json`: one object per
task; `--patches DIR` writes `<task>.patch` files), `cancel` cancels what is not final.

Exit status: 0 every task completed, 1 some task failed or was cancelled (or, `status`, is not
final), 2 a malformed batch file (the line is named), a mistyped verb that names no file (`statsu`:
the verb meant is given), an unknown key (the nearest name is given),
an unknown batch id, or an unreachable Temporal address (one line, within the connect timeout)
— a server lost while a batch is watched is waited for (`PATIENCE`, said on one line) first.
With `--json` the lines leave through `cli.lineout` (a writer thread: a reader that stops
reading never stops the batch); a reader that closes the pipe stops the batch as Ctrl-C does
(its records stay resumable), exit 141; one that takes nothing for `[agent] stdout_wait` seconds
at the end (the setting in force where the command runs, as for `run`), exit 74 — one line on
stderr either way.
temporalio and the app load only when the command runs (`import yagent.cli` stays light).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import click

from yagent.cli import lineout, suggest
from yagent.cli.terminal import home_dir
from yagent.scale import states as st
from yagent.scale.tasks import Batch, BatchFileError, load

DEFAULT_ADDRESS = "127.0.0.1:7233"
WATCH_EVERY = 0.5
PATIENCE = 300.0  # seconds the watcher waits for a Temporal server that went away
_VERBS = ("status", "results", "cancel")


class Bad(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"yagent batch: {self.message}", err=True)


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("args", nargs=-1, required=True, metavar="FILE | status|results|cancel BATCH")
@click.option("--engine", type=click.Choice(["local", "temporal"]), default="local")
@click.option(
    "--address",
    default=DEFAULT_ADDRESS,
    show_default=True,
    envvar="YAGENT_TEMPORAL_ADDRESS",
    help="Temporal frontend.",
)
@click.option("--task-queue", default="yagent", show_default=True)
@click.option("--id", "batch_id", default=None, help="Name the batch (default: the file's hash).")
@click.option("--max-parallel", type=click.IntRange(1), default=4, show_default=True)
@click.option("--heartbeat", type=click.FloatRange(1), default=30.0, show_default=True)
@click.option("--detach", is_flag=True, help="Return once submitted (temporal).")
@click.option("--patches", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--json", "json_mode", is_flag=True, help="JSON lines.")
def batch(args: tuple[str, ...], **opts: Any) -> None:
    """Run many tasks, each in its own checkout; status, results, cancel."""
    meant = None if args[0] in _VERBS else suggest.closest(args[0], _VERBS)
    if meant is not None and not Path(args[0]).exists():  # a file of that name is the file
        raise click.UsageError(f"no batch file or command {args[0]!r} (did you mean {meant!r}?)")
    if args[0] in _VERBS and len(args) != 2:
        raise click.UsageError(f"`yagent batch {args[0]}` takes one BATCH id")
    if args[0] not in _VERBS and len(args) != 1:
        raise click.UsageError("give one batch file (or status|results|cancel BATCH)")
    try:
        if args[0] in _VERBS:
            code = anyio.run(_verb, args[0], args[1], opts)
        else:
            try:
                spec = load(Path(args[0]), batch_id=opts["batch_id"])
            except BatchFileError as exc:
                raise Bad(str(exc)) from None
            code = anyio.run(_submit, spec, opts)
    except Bad as exc:
        exc.show()
        code = exc.exit_code
    sys.exit(code)


def _exit_code(states: Sequence[st.TaskState]) -> int:
    return 0 if all(t.state == st.COMPLETED for t in states) else 1


async def _temporal(address: str) -> Any:
    from yagent.scale.temporal.worker import Unreachable, connect

    try:
        return await connect(address)
    except Unreachable as exc:
        raise Bad(str(exc)) from None


def _stdout_wait() -> float:
    """`[agent] stdout_wait` as `run` would read it here (a bad configuration refuses, exit 2)."""
    from yagent.app.config import load
    from yagent.app.workspace import locate

    return load(home=home_dir(), workspace=locate(Path.cwd()).root).agent.stdout_wait


async def _submit(spec: Batch, opts: dict[str, Any]) -> int:
    wait = _stdout_wait() if opts["json_mode"] else lineout.WAIT
    view = _View(spec.id, [t.id for t in spec.tasks], opts["json_mode"], wait)
    code, refused = 1, []
    try:
        async with anyio.create_task_group() as tg:

            async def stop_when_gone() -> None:  # the --json reader went away: as on Ctrl-C
                await view.reader_gone()
                view.stopped = True
                tg.cancel_scope.cancel()

            tg.start_soon(stop_when_gone)
            try:
                code = await _run(spec, opts, view)
            except Bad as exc:  # said as itself, not inside the task group's exception group
                refused.append(exc)
            tg.cancel_scope.cancel()
        if refused:
            raise refused[0]
    finally:
        with anyio.CancelScope(shield=True):
            failed = await view.end()
    return code if failed is None else failed


async def _run(spec: Batch, opts: dict[str, Any], view: _View) -> int:
    if opts["engine"] == "local":
        from yagent.scale import local

        home = home_dir()
        with view:
            new = await local.run_batch(
                home, home / "work", spec, max_parallel=opts["max_parallel"], on_change=view.change
            )
        return view.close(new)
    from yagent.scale.temporal import client as tc

    client = await _temporal(opts["address"])
    options = {"heartbeat": opts["heartbeat"]}
    new = await tc.submit(client, spec, opts["task_queue"], options)
    if opts["detach"]:
        view.emit({"type": "batch", "batch_id": spec.id, "new": new, "detached": True})
        return 0
    from temporalio.service import RPCError

    lost_since: float | None = None
    with view:
        while True:
            try:
                current = await tc.states(client, spec.id)
            except RPCError as exc:  # the server went away: wait for it, bounded, and say so
                now = time.monotonic()
                if lost_since is None:
                    lost_since = now
                    view.notice(f"lost the Temporal server ({exc}); waiting for it")
                elif now - lost_since > PATIENCE:
                    raise Bad(
                        f"the Temporal server at {opts['address']} did not come back "
                        f"within {PATIENCE:g}s; `yagent batch status {spec.id}` later"
                    ) from None
                await anyio.sleep(WATCH_EVERY)
                continue
            if lost_since is not None:
                lost_since = None
                view.notice("the Temporal server is back")
            for task in current:
                view.change(task)
            if st.done(current):
                break
            await anyio.sleep(WATCH_EVERY)
    return view.close(new)


async def _verb(verb: str, batch_id: str, opts: dict[str, Any]) -> int:
    calls: dict[str, Callable[[], Awaitable[Any]]]
    if opts["engine"] == "local":
        from yagent.scale import local

        home = home_dir()
        unknown: type[Exception] = local.UnknownBatch
        calls = {
            "status": lambda: _now(local.states(home, batch_id)),
            "results": lambda: _now(local.results(home, batch_id)),
            "cancel": lambda: local.cancel(home, batch_id),
        }
    else:
        from yagent.scale.temporal import client as tc

        client = await _temporal(opts["address"])
        unknown = tc.UnknownBatch
        calls = {
            "status": lambda: tc.states(client, batch_id),
            "results": lambda: tc.results(client, batch_id),
            "cancel": lambda: tc.cancel(client, batch_id),
        }
    try:
        found = await calls[verb]()
    except unknown as exc:
        raise Bad(str(exc.args[0] if exc.args else exc)) from None
    if verb == "status":
        return _show_status(batch_id, found, opts["json_mode"])
    if verb == "results":
        return _show_results(found, opts["json_mode"], opts["patches"])
    click.echo(
        json.dumps({"batch_id": batch_id, "cancelled": found})
        if opts["json_mode"]
        else f"batch {batch_id}: {found} task(s) cancelled"
    )
    return 0


async def _now(value: Any) -> Any:
    return value


def _show_status(batch_id: str, found: list[st.TaskState], json_mode: bool) -> int:
    for task in found:
        if json_mode:
            click.echo(json.dumps({"type": "task", **task.to_dict()}))
        else:
            click.echo(f"{task.id}\t{task.state}" + (f"\t{task.detail}" if task.detail else ""))
    counts = st.counts(found)
    if json_mode:
        click.echo(json.dumps({"type": "batch", "batch_id": batch_id, "counts": counts}))
    else:
        click.echo(f"batch {batch_id}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return _exit_code(found)


def _show_results(found: list[dict[str, Any]], json_mode: bool, patches: Path | None) -> int:
    if patches is not None:
        patches.mkdir(parents=True, exist_ok=True)
    for result in found:
        if patches is not None and result.get("patch"):
            (patches / f"{result['id']}.patch").write_text(str(result["patch"]))
        if json_mode:
            click.echo(json.dumps(result))
            continue
        files = str(result.get("patch", "")).count("\ndiff --git") + str(
            result.get("patch", "")
        ).startswith("diff --git")
        extra = " (patch truncated)" if result.get("patch_truncated") else ""
        uncertain = len(result.get("uncertain") or ())
        line = f"{result['id']}\t{result.get('status')}\t{files} file(s) changed{extra}"
        if uncertain:
            line += f"\t{uncertain} side effect(s) uncertain"
        click.echo(line)
        if "pushed" in result:
            click.echo("  " + _push_line(result))
        report = str(result.get("report") or result.get("error") or "").strip()
        if report:
            click.echo("  " + report.splitlines()[0][:200])
    states = [st.TaskState(str(r["id"]), str(r.get("status"))) for r in found]
    return _exit_code(states)


def _push_line(result: dict[str, Any]) -> str:
    if result.get("pushed"):
        commit = str(result.get("commit", ""))[:12]
        return f"pushed {result.get('branch')} {commit} to {result.get('remote')}"
    if result.get("push_error"):
        return f"push failed: {result['push_error']}"
    return f"nothing pushed: {result.get('push_note', '')}"


class _View:
    """The batch's progress: a live table on a terminal, lines otherwise, JSON with --json."""

    def __init__(self, batch_id: str, ids: list[str], json_mode: bool, wait: float) -> None:
        self.batch_id = batch_id
        self.wait = wait  # seconds `end` waits for a --json reader that takes nothing
        self.states = {i: st.TaskState(i, st.PENDING) for i in ids}
        self.json_mode = json_mode
        self.out = lineout.stdout() if json_mode else None
        self.stopped = False  # the batch was stopped: the --json reader went away
        self.live: Any = None
        if not json_mode and sys.stdout.isatty():
            from rich.live import Live

            self.live = Live(self._table(), refresh_per_second=4, transient=False)

    def __enter__(self) -> _View:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def emit(self, line: dict[str, Any]) -> None:
        if self.out is None:
            click.echo(json.dumps(line))
        else:
            self.out.write(json.dumps(line) + "\n")

    async def reader_gone(self) -> None:
        """Return once the --json reader has gone; never otherwise."""
        if self.out is None:
            await anyio.sleep_forever()
        else:
            await self.out.wait_gone()

    async def end(self) -> int | None:
        """The --json stream finished (`lineout.end`); None when every line was written."""
        if self.out is None:
            return None
        kept = (
            f"batch {self.batch_id}'s records are kept (`yagent batch status {self.batch_id}`; "
            "the same `yagent batch FILE` resumes it)"
        )
        return await lineout.end(self.out, self.wait, kept, stopped=self.stopped)

    def notice(self, text: str) -> None:
        if self.json_mode:
            self.emit({"type": "notice", "batch_id": self.batch_id, "text": text})
        else:
            click.echo(f"yagent batch: {text}", err=True)

    def change(self, task: st.TaskState) -> None:
        if self.states.get(task.id) == task:
            return
        self.states[task.id] = task
        if self.json_mode:
            self.emit({"type": "task", **task.to_dict()})
        elif self.live is not None:
            self.live.update(self._table())
        else:
            click.echo(f"{task.id}: {task.state}" + (f" ({task.detail})" if task.detail else ""))

    def _table(self) -> Any:
        from rich.table import Table

        counts = st.counts(list(self.states.values()))
        title = f"batch {self.batch_id}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        table = Table(title=title)
        for column in ("task", "state", "detail"):
            table.add_column(column)
        for task in self.states.values():
            table.add_row(task.id, task.state, task.detail[:80])
        return table

    def close(self, new: bool) -> int:
        found = list(self.states.values())
        counts = st.counts(found)
        if self.json_mode:
            self.emit({"type": "batch", "batch_id": self.batch_id, "new": new, "counts": counts})
        else:
            again = "" if new else " (submitted before: nothing re-run)"
            summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            click.echo(f"batch {self.batch_id}{again}: {summary}")
        return _exit_code(found)
