"""`yagent sessions`, `resume` (from `cli.resume`), `replay`, `doctor` (the stores' integrity,
with `--salvage` a copy of what a damaged one still holds; provider, tools, settings, egress, the
workspace's project trust, the `[store] url` database and the Temporal frontend of
`YAGENT_TEMPORAL_ADDRESS`: `cli.scaledoctor`). Exit 1 when a required check fails."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import click
import httpx
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from yagent.app import projectkeys
from yagent.app.config import ConfigError, load
from yagent.app.engines import (
    OLLAMA_URL,
    NoProviderError,
    build_engine,
    keyless_notice,
    ollama_models,
)
from yagent.app.recording import markers, parallel_recording, recording_of
from yagent.app.sessionstore import sessions_here
from yagent.cli.mcpdoctor import mcp_rows
from yagent.cli.safetext import visible
from yagent.cli.scaledoctor import ADDRESS_ENV, database_rows, temporal_rows
from yagent.cli.terminal import terminal_ask
from yagent.kernel.confine.sandbox import Level
from yagent.kernel.durable import sqlitefile
from yagent.kernel.judge.preset import BUILTIN as BUILTIN_PRESETS
from yagent.llm.replay import Recording, ReplayEngine
from yagent.tools.guard import Yolo
from yagent.tools.search import find_rg
from yagent.tools.settings import Settings, SettingsError

FULL_BELOW = 64 * 1024  # bytes free under which `yagent doctor` calls the home's disk full


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@click.group(invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Sessions of every workspace.")
@click.option("--limit", default=20, show_default=True)
@click.pass_context
def sessions(ctx: click.Context, show_all: bool, limit: int) -> None:
    """List sessions (newest first)."""
    if ctx.invoked_subcommand is not None:
        return
    workspace = None if show_all else str(Path.cwd().resolve())
    with sessions_here(_home()) as store:
        rows = store.list_sessions(limit=limit, workspace=workspace)
    table = Table("id", "updated", "status", "title", "workspace")
    for info in rows:
        plain = (Text(info.status), Text(visible(info.title)), Text(visible(info.workspace)))
        table.add_row(info.id[:12], _when(info.updated_at), *plain)
    Console().print(table if rows else "no sessions yet" + ("" if show_all else " here (--all?)"))


@sessions.command("show")
@click.argument("session")
@click.option("--json", "json_mode", is_flag=True)
def show(session: str, json_mode: bool) -> None:
    """Show one session: messages, tool calls, usage."""
    with sessions_here(_home()) as store:
        info = store.get_session(session)
        data = store.export_session(info.id)
    if json_mode:
        click.echo(json.dumps(data, ensure_ascii=False, default=str, indent=2))
        return
    console = Console()
    rest = f" · {info.status} · {info.workspace} · {info.id}"
    console.print(f"[bold]{escape(visible(info.title))}[/]{escape(visible(rest))}")
    for m in data.get("messages", []):  # stored text is untrusted: never markup, never controls
        body = visible(str(m.get("content", ""))[:300])
        calls = ", ".join(visible(c["name"]) for c in m.get("tool_calls", []) or [])
        shown = f"{body} → {calls}" if calls else body
        console.print(f"[cyan]{m.get('role')}[/] {escape(shown)}")
    usage = data.get("usage", {})
    console.print(f"[dim]usage: {json.dumps(usage, default=str)}[/]")


@click.command()
@click.argument("session")
@click.option("--save", type=click.Path(dir_okay=False), help="Write the recording to a file.")
@click.option("-y", "yes", is_flag=True)
def replay(session: str, save: str | None, yes: bool) -> None:
    """Replay SESSION's model side against this workspace, tools run for real."""
    from yagent.agents import catalog
    from yagent.cli.runner import Options, run_once

    with sessions_here(_home()) as store:
        sid = store.get_session(session).id
        parallel = parallel_recording(store, sid)
        recording, task, agent = recording_of(store, sid)
    if parallel is not None:
        sys.exit(_replay_parallel(parallel[0], parallel[1], save, yes))
    if save:
        recording.save(save)
        click.echo(f"recording written to {save}")
        return
    marked = markers(recording, agent, catalog.builtin(agent, 0).marker)
    engine = ReplayEngine(recording, markers=marked)
    opts = Options(Path.cwd().resolve(), _home(), Yolo.YOLO if yes else Yolo.OFF, agent=agent)
    _, result = anyio.run(lambda: run_once(opts, task, ask=terminal_ask(), engine=engine))
    sys.exit(0 if result is not None and not engine.divergences else 1)


def _replay_parallel(recording: Recording, plan: list[Any], save: str | None, yes: bool) -> int:
    """A parallel session: saved per task, or its stored plan run again against the replay."""
    from yagent.app.fanout import FanoutError
    from yagent.app.fanrun import assignment_of
    from yagent.app.lane import marker
    from yagent.cli.fanout import run_plan
    from yagent.cli.runner import Options, normalise

    if save:
        recording.save(save)
        click.echo(f"recording written to {save} (one identity per task)")
        return 0
    try:
        assignments = [assignment_of(raw) for raw in plan]
    except TypeError as exc:
        raise click.ClickException(f"the session's stored plan is unreadable: {exc}") from None
    markers = {a.name: marker(a.name) for a in assignments}
    engine = ReplayEngine(recording, markers=markers, normalise=normalise)
    opts = Options(Path.cwd().resolve(), _home(), Yolo.YOLO if yes else Yolo.OFF)
    try:
        outcome = anyio.run(lambda: run_plan(opts, assignments, ask=terminal_ask(), engine=engine))
    except FanoutError as exc:
        raise click.ClickException(f"parallel plan refused: {exc}") from None
    return 0 if outcome.ok and not engine.divergences else 1


def _checks(home: Path, workspace: Path) -> list[tuple[str, bool, str, bool]]:
    """(check, ok, detail, required) rows."""
    rows: list[tuple[str, bool, str, bool]] = []
    try:
        config = load(home=home, workspace=workspace)
        rows.append(("config", True, ", ".join(config.sources) or "defaults", True))
    except ConfigError as exc:
        return [("config", False, str(exc), True)]
    rows.append(_provider(config))
    try:
        Settings(home).load()
        rows.append(("settings", True, str(home / "settings.json"), True))
    except SettingsError as exc:
        rows.append(("settings", False, str(exc), True))
    rg = find_rg()
    found = (
        f"{rg.path} ({rg.source})" if rg else "not found: search uses the slower Python fallback"
    )
    rows.append(("ripgrep", rg is not None, found, False))
    for name, tool in (("chromium", "chromium"), ("bwrap", "bwrap")):
        path = shutil.which(tool)
        rows.append(
            (
                name,
                path is not None,
                path
                or f"{tool} not found (apt-get install "
                f"{'bubblewrap' if tool == 'bwrap' else tool})",
                False,
            )
        )
    rows.append(_egress(config))
    rows.append(_trust(config))
    rows.extend(mcp_rows(config))
    rows.extend(database_rows(config.store.url))
    rows.extend(temporal_rows(os.environ.get(ADDRESS_ENV, "").strip()))
    return rows


def _trust(config: Any) -> tuple[str, bool, str, bool]:
    """Whether the workspace's own files are trusted, and what waits for `yagent trust`."""
    project = config.project
    if not project.digests:
        return ("project trust", True, "no project files (.yagent/config.toml, shell-rules)", False)
    states = "; ".join(f"{f}: {s.value}" for f, s in project.status.items())
    line = projectkeys.notice(project)
    return ("project trust", line is None, f"{states}" + (f" — {line}" if line else ""), False)


def _egress(config: Any) -> tuple[str, bool, str, bool]:
    """What network a shell command gets under the configured preset and `[sandbox]`."""
    chosen = BUILTIN_PRESETS.resolve(config.agent.preset)
    hosts = config.sandbox.allow_hosts
    if chosen.level < Level.NAMESPACES:
        detail = f"preset {chosen.name!r}: commands run on the host, with its whole network"
    elif hosts:
        detail = (
            f"preset {chosen.name!r}: sandboxed commands reach only {', '.join(hosts)} "
            "through yagent's egress proxy (netguard judges every address)"
        )
    else:
        detail = (
            f"preset {chosen.name!r}: sandboxed commands have no network ([sandbox] allow_hosts)"
        )
    return ("egress", True, detail, False)


def _provider(config: Any) -> tuple[str, bool, str, bool]:
    try:
        engine = anyio.run(build_engine, config.llm)
    except (NoProviderError, ConfigError) as exc:
        return ("provider", False, str(exc).splitlines()[0], True)
    base = config.llm.base_url or {
        "anthropic": "https://api.anthropic.com",
        "openai": "https://api.openai.com/v1",
    }.get(config.llm.provider or "", f"{OLLAMA_URL}/v1")
    try:
        httpx.get(base, timeout=3.0)
    except httpx.HTTPError as exc:
        return ("provider", False, f"{engine.model} at {base}: unreachable ({exc})", True)
    if config.llm.provider in (None, "ollama") and anyio.run(ollama_models) is None:
        return ("provider", False, f"no Ollama server at {OLLAMA_URL}", True)
    keyless = keyless_notice(config.llm)
    return (
        "provider",
        True,
        f"{engine.model} at {base}" + (f" — {keyless}" if keyless else ""),
        True,
    )


def _space(home: Path) -> tuple[str, bool, str, bool]:
    """Whether the disk holding the home has room for a run's record (`FULL_BELOW`)."""
    where = home if home.exists() else home.parent
    try:
        info = os.statvfs(where)
    except OSError as exc:
        return ("disk space", False, f"{where}: cannot be measured ({exc})", True)
    free = info.f_bavail * info.f_frsize
    if free < FULL_BELOW:
        detail = (
            f"the disk holding {where} is full ({free // 1024} KiB free): free space there; "
            "`yagent resume SID` then continues a run it stopped"
        )
        return ("disk space", False, detail, True)
    return ("disk space", True, f"{where}: {free // (1024 * 1024)} MiB free", True)


def _stores(home: Path, salvage: bool) -> list[tuple[str, bool, str, bool]]:
    """`PRAGMA quick_check` on each store (read-only); with `salvage`, a copy of what is still
    readable of a damaged one, written next to it and named in the row."""
    rows: list[tuple[str, bool, str, bool]] = [_space(home)]
    for name in ("sessions.db", "durable.db"):
        path = home / name
        if not path.exists():
            rows.append((name, True, "not created yet", True))
            continue
        verdict = sqlitefile.check(path)
        if verdict == "ok":
            rows.append((name, True, f"{path}: integrity ok", True))
            continue
        detail = f"{path}: {verdict}"
        if salvage:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
            done = sqlitefile.salvage(path, path.with_name(f"{name}.salvage-{stamp}.db"))
            copied = sum(done.rows.values())
            detail += f" — salvage copy {done.dest}: {copied} rows of {len(done.rows)} tables"
            detail += "".join(f"; {problem}" for problem in done.problems[:3])
        else:
            detail += " — `yagent doctor --salvage` copies what is readable into a new file"
        rows.append((name, False, detail + "; then move the damaged file aside", True))
    return rows


@click.command()
@click.option("--salvage", is_flag=True, help="Copy what is readable of a damaged store.")
def doctor(salvage: bool) -> None:
    """Check that yagent can work here."""
    rows = _stores(_home(), salvage) + _checks(_home(), Path.cwd().resolve())
    table = Table("check", "ok", "detail")
    for name, ok, detail, required in rows:
        mark = "[green]ok[/]" if ok else "[red]FAIL[/]" if required else "[yellow]missing[/]"
        table.add_row(name, mark, Text(detail))  # a detail's `[sandbox]` is text, not markup
    Console().print(table)
    sys.exit(0 if all(ok for _, ok, _, required in rows if required) else 1)
