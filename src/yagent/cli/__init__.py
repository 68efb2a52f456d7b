"""The `yagent` command.

    yagent                      interactive session in the current directory
    yagent run "task" [-y|-Y] [--json] [--agent NAME]   (task `-` or piped: read from stdin)
                                [--allow-local PORT|HOST:PORT]  (also on the interactive entry)
    yagent fanout PLAN.toml [-y] [--json] [--max-parallel N]   parallel sub-agents, each
                                confined to the worktree it declares (exit 2: plan refused)
    yagent batch TASKS.jsonl|toml [--engine local|temporal] [--json]   many tasks, each in
                                its own checkout; `batch status|results|cancel BATCH`
    yagent worker --engine temporal --address HOST:PORT   a worker of a Temporal fleet
    yagent sessions [show ID]   list sessions / show one
    yagent resume [ID] [--json|--replay REC]   continue a session (the latest here by default):
                                an interrupted run from its checkpoint, else a new turn
    yagent replay SESSION       replay a recorded session's model side with real tools
    yagent doctor               check provider, rg, chromium, bwrap, settings
    yagent reconcile [SESSION] [--applied|--not-applied KEY]   side effects of unknown outcome
    yagent undo [SESSION]       revert the last turn's file changes (a one-shot run's too):
                                exit 0 undone, 1 nothing to undo, 2 refused
    yagent trace SESSION [--html [FILE]]   rows per turn, or a self-contained HTML timeline
    yagent memory add TEXT [--global] | list   memories injected into every agent's context
    yagent trust [-C DIR] [--show|--revoke] [--yes]   review and trust the workspace's own
                                .yagent/ files (until then their loosening keys are withheld)
    yagent rules import [--from claude|codex|FILE] [--scope project|user] [--dry-run]
                                Claude permissions and Codex prefix rules into a config

Exit status: 0 done, 1 the run did not finish (error, timeout, cancelled, nothing submitted),
2 usage or configuration error, or the session is already running in another yagent process
(the message says what to fix), 75 the disk holding the yagent home is full (a run stopped at a
step boundary: free space and `yagent resume SID`), 130 cancelled, 143 shut down.

Start-up: this package imports nothing but `yagent.cli.quick`, and refuses httpx's own command line
for the whole process (below). `--version` and `--help` are
answered from there without loading click or the app (`quick` says when); the interactive session
on a terminal shows its prompt before the app loads (`yagent.cli.early`); every other command goes
through `yagent.cli.root`, which imports a command's module only when that command runs, and the
runner (the whole app) only when a task runs. Provider SDKs, MCP, mini-racer, tree-sitter,
Playwright and OpenTelemetry load at their own factories, when used (docs/performance.md).
"""

from __future__ import annotations

import os
import sys

from yagent.cli import quick

TYPE_CHECKING = False  # `typing` (and the `re` it imports) is most of a `--version`'s budget
if TYPE_CHECKING:
    from typing import NoReturn

# httpx's `__init__` imports its own command line (`httpx._main`: rich's progress bars and syntax
# highlighting, pygments' lexer table; ≈ 35 ms CPU of the ≈ 90 ms `import httpx` costs) and falls
# back to a stub `httpx.main` when that import fails. yagent never runs httpx's command line, so
# every `yagent` process — every entry point imports this package before anything imports httpx
# — has it refused; `setdefault` leaves a process that already imported it as it is.
# `tests/cli/test_startup_deferred.py` is the gate (docs/performance.md, "Seventh pass").
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """The `yagent` command: exit status as documented above."""
    args = sys.argv[1:] if argv is None else list(argv)
    page = quick.answer(args)
    if page is not None:
        sys.stdout.write(page)
        return 0
    # click and the commands load here, for every command but the two answered above; the
    # interactive session's prompt is drawn first, on a terminal (`early`).
    from yagent.cli import early

    if not early.wanted(args):
        from yagent.cli.root import main as run_command

        return run_command(args)
    with early.paint():
        from yagent.cli.root import main as run_command

        return run_command(args)


def entry() -> NoReturn:
    """The process entry point (the `yagent` console script, `python -m yagent.cli`): `main`,
    then exit with its status. Once temporalio ran (batch, worker, doctor's Temporal row, the
    Temporal engine), the process leaves without the interpreter's teardown — collecting the
    SDK's native client there crashes (abort or segfault seen with temporalio 1.35), which would
    turn the exit status into a signal; only standard output and error are left to flush. An
    in-process caller of `main` gets the status back and keeps its interpreter. One app per
    process here: no collection runs during start-up, and what it built is frozen once the app
    is open or the command that opens none is imported (`app.gcpolicy`)."""
    from yagent.app import gcpolicy

    gcpolicy.hold_until_open()
    code = main()
    if "temporalio" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
