"""`yagent worker --engine temporal --address HOST:PORT [--task-queue Q] [--max-parallel N]
[--work-dir DIR]`: a worker of a Temporal fleet (docs/scale-out.md).

It runs batch tasks (`scale.temporal`) with the stores of this yagent home, in checkouts under
`--work-dir` (default `<home>/work`), until SIGINT/SIGTERM (it stops polling; activities in flight
get a grace period, then Temporal retries them on another worker). An unreachable address is one
line and exit 2 within the connect timeout; `--engine local` is refused (exit 2): the local engine
runs inside `yagent batch` itself. `--address` defaults to `$YAGENT_TEMPORAL_ADDRESS`, else
127.0.0.1:7233.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from yagent.cli.terminal import home_dir


@click.command()
@click.option("--engine", type=click.Choice(["temporal", "local"]), default="temporal")
@click.option(
    "--address",
    default="127.0.0.1:7233",
    show_default=True,
    envvar="YAGENT_TEMPORAL_ADDRESS",
    help="Temporal frontend.",
)
@click.option("--task-queue", default="yagent", show_default=True)
@click.option("--max-parallel", type=click.IntRange(1), default=4, show_default=True)
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
def worker(**opts: Any) -> None:
    """Run batch tasks for a Temporal server until stopped."""
    if opts["engine"] != "temporal":
        click.echo("yagent worker: the local engine runs inside `yagent batch`", err=True)
        sys.exit(2)
    sys.exit(anyio.run(_serve, opts))


async def _serve(opts: dict[str, Any]) -> int:
    from yagent.scale.temporal.worker import Unreachable, connect, serve

    home = home_dir()
    try:
        client = await connect(opts["address"])
    except Unreachable as exc:
        click.echo(f"yagent worker: {exc}", err=True)
        return 2
    click.echo(
        f"yagent worker: polling {opts['task_queue']!r} at {opts['address']}"
        f" (at most {opts['max_parallel']} at once)",
        err=True,
    )
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(stop_on_signal)
        await serve(
            client,
            home=home,
            work=opts["work_dir"] or home / "work",
            task_queue=opts["task_queue"],
            max_parallel=opts["max_parallel"],
        )
        tg.cancel_scope.cancel()
    return 0
