"""`--engine local|temporal` for the commands whose sub-runs can go to a worker fleet: `yagent run`
(the Director's delegations) and `yagent fanout` (its tasks). docs/scale-out.md.

Contract:
- `engine_options` adds `--engine` (default local: nothing changes), `--address` (default
  `$YAGENT_TEMPORAL_ADDRESS`, else 127.0.0.1:7233), `--task-queue` and `--heartbeat`.
- `on_engine(command, opts, home, workspace, start)` calls `start()` (the command's own run,
  which exits) as it is for the local engine. For `temporal` it first refuses, in one line with
  exit 2, before anything runs: a configuration without a `postgresql://` `[store] url` (the
  workers must see the delegator's session and write their lanes' records where it reads them —
  workers sharing this home on one machine: use the local engine), and an address nothing
  answers at within `CONNECT_TIMEOUT` seconds. Then every lane the run starts goes to Temporal
  (`scale.temporal.remote`), and the process exits without the interpreter's teardown
  (`yagent.cli.entry`: temporalio's native client crashes it).
- `sys.exit(code)` exits with `code` as a `SystemExit`, which `yagent.cli.main` returns.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
CONNECT_TIMEOUT = 5.0


def engine_options(f: F) -> F:
    options = (
        click.option(
            "--engine",
            type=click.Choice(["local", "temporal"]),
            default="local",
            show_default=True,
            help="Where sub-runs run: this process, or the workers of a Temporal server.",
        ),
        click.option(
            "--address",
            default="127.0.0.1:7233",
            show_default=True,
            envvar="YAGENT_TEMPORAL_ADDRESS",
            help="Temporal frontend (--engine temporal).",
        ),
        click.option("--task-queue", default="yagent", show_default=True),
        click.option(
            "--heartbeat",
            type=click.FloatRange(1),
            default=30.0,
            show_default=True,
            help="Seconds of a worker's silence before its sub-run goes to another worker.",
        ),
    )
    for option in reversed(options):
        f = option(f)
    return f


def _refuse(command: str, why: str) -> NoReturn:
    click.echo(f"yagent {command}: {why}", err=True)
    sys.exit(2)


def _reachable(address: str) -> str | None:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), CONNECT_TIMEOUT):
            return None
    except (OSError, ValueError) as exc:
        return str(exc) or type(exc).__name__


def on_engine(
    command: str, opts: dict[str, Any], home: Path, workspace: Path, start: Callable[[], NoReturn]
) -> NoReturn:
    if opts["engine"] != "temporal":
        start()
    from yagent.app.config import load

    url = load(home=home, workspace=workspace).store.url
    if not url:
        _refuse(
            command,
            '--engine temporal needs [store] url = "postgresql://…": the workers must see this '
            "session and record their runs where it reads them (workers sharing this yagent home "
            "on one machine: use --engine local)",
        )
    address = str(opts["address"])
    why = _reachable(address)
    if why is not None:
        _refuse(command, f"cannot reach Temporal at {address}: {why}")
    from yagent.scale.temporal.remote import RemoteLanes, install

    install(RemoteLanes(address, str(opts["task_queue"]), float(opts["heartbeat"])))
    try:
        start()
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.exit(code)
