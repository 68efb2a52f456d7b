"""Parallel sub-agents, each confined to a declared worktree: the plan, checked before it runs.

Contract:
- `prepare(services, assignments)` checks the whole plan before anything starts and raises
  `FanoutError` naming the tasks and paths: an empty plan; a name that is not a plain word
  (letters, digits, `.`, `_`, `-`) or is used twice; an empty task; neither or both of `agent` and
  `capabilities`; an unknown agent; capabilities no agent has (`kernel.judge.delegate.choose`: the
  least capable agent that has them all, ties by name — an agent's capabilities are the effects of
  the tools it may use: read, write, exec, network, browser…); a preset whose commands run on the
  host (nothing could confine them); a declaration `kernel.judge.areas` refuses (wildcards, `..`,
  absolute paths, one path both read and written); writable areas that overlap between tasks
  (every conflict listed); a writable area in a protected path (`.git`, `.yagent`, at any depth,
  any case: only a person may write there); a writable area with a symbolic link on the way or a
  file where a directory must be. Only then is a missing writable area created, as an empty
  directory (so declare the directory of a file that does not exist yet), and each task's sandbox
  probed (one that cannot be built refuses the plan). No session exists before `run_parallel`.
- Running a checked plan, and resuming one, is `app.fanrun`: each task its own agent run in ONE
  session with its own delegation id and `Lane` (the worktree ring on its Surface and a command
  gate whose sandbox keeps the workspace read-only except the task's writable areas), each
  ending in a `kernel.judge.delegate` receipt.
- Each task's agent prompt carries `marker(name)` on its first line (scripted and replay engines
  route each task's requests by it), followed by the task's areas (`app.lane`, re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.agents import catalog
from yagent.app.services import PlanServices
from yagent.kernel.confine import sandbox
from yagent.kernel.judge import areas, delegate, toolfail
from yagent.tools.commands import CommandGate
from yagent.tools.guard import PROTECTED_PATHS

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PROTECTED = frozenset(name.casefold() for name in PROTECTED_PATHS)


class FanoutError(Exception):
    """A parallel plan refused before anything started (the message says what to fix)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """One task of a parallel run: who runs it (an agent, or the capabilities it needs) and the
    worktree it declares (workspace-relative, exact paths)."""

    name: str
    task: str
    agent: str = ""
    capabilities: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    read: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Task:
    """A checked assignment: the agent chosen for it, its declaration, its confined gate."""

    assignment: Assignment
    executor: delegate.Executor
    required: frozenset[str]
    declaration: areas.Declaration
    commands: CommandGate


@dataclass(frozen=True, slots=True)
class Plan:
    tasks: tuple[Task, ...]
    max_parallel: int
    created: tuple[str, ...] = ()  # writable areas that did not exist (created unless a dry run)


@dataclass(frozen=True, slots=True)
class TaskReceipt:
    name: str
    delegation_id: str
    receipt: delegate.Receipt
    run_status: str  # how the agent run ended; "" when it never ended on its own

    def to_dict(self) -> dict[str, Any]:
        r = self.receipt
        return {
            "name": self.name,
            "delegation_id": self.delegation_id,
            "agent": r.executor,
            "status": r.status.value,
            "run_status": self.run_status,
            "reason": r.reason,
            "output": r.output,
        }


@dataclass(frozen=True, slots=True)
class ParallelRun:
    session_id: str
    tasks: tuple[TaskReceipt, ...]

    @property
    def receipts(self) -> list[delegate.Receipt]:
        return [t.receipt for t in self.tasks]

    @property
    def ok(self) -> bool:
        return all(t.receipt.ok for t in self.tasks)


# -- checking -----------------------------------------------------------------------------------
def executors(services: PlanServices) -> list[delegate.Executor]:
    """The catalog: every built-in and configured agent with the effects of its tools."""
    names = sorted({*catalog.BUILTIN_AGENTS, *services.config.agents})
    return [delegate.Executor.of(n, _capabilities(services, n)) for n in names]


def _capabilities(services: PlanServices, name: str) -> set[str]:
    return {spec.effect.value for spec in services.surface(services.agent(name)).specs()}


async def prepare(
    services: PlanServices,
    assignments: Sequence[Assignment],
    *,
    max_parallel: int | None = None,
    dry_run: bool = False,
) -> Plan:
    """The checked plan (see the module contract); `FanoutError` on anything that does not hold.
    `dry_run`: every check, but no missing area is created and no sandbox probed (a probe needs
    the areas to exist) — what `yagent fanout --check` shows."""
    listed = list(assignments)
    if not listed:
        raise FanoutError("a parallel run needs at least one task")
    preset = services.safety.preset
    if preset.level < sandbox.Level.NAMESPACES:
        raise FanoutError(
            f"preset {preset.name!r} runs shell commands on the host ({preset.level.name}): "
            "parallel tasks could not be confined to their declared areas; choose a sandboxed "
            "preset (workspace-write, full-auto, read-only)"
        )
    limit = services.config.agent.max_parallel_agents if max_parallel is None else max_parallel
    if limit < 1:
        raise FanoutError(f"max_parallel must be at least 1, not {limit}")
    seen: set[str] = set()
    for a in listed:
        _check_shape(a, seen)
    declarations = [_declaration(a) for a in listed]
    try:
        areas.check(declarations)
    except areas.ConflictError as exc:
        raise FanoutError(f"{exc}: two tasks may not write the same area") from None
    root = services.workspace.resolve()
    for d in declarations:
        for area in d.writable:
            check_area(root, d.owner, area)
    catalogue = executors(services)
    chosen = [_executor(services, a, catalogue) for a in listed]
    missing = tuple(
        "/".join(area)
        for d in declarations
        for area in d.writable
        if not root.joinpath(*area).exists()
    )
    for shown in () if dry_run else missing:
        root.joinpath(shown).mkdir(parents=True, exist_ok=True)
    tasks = []
    for a, d, (executor, required) in zip(listed, declarations, chosen, strict=True):
        gate = services.safety.commands.confined(["/".join(w) or "." for w in d.writable])
        if dry_run:
            tasks.append(Task(a, executor, required, d, gate))
            continue
        try:
            await gate.confinement()
        except toolfail.ToolFailure as exc:
            raise FanoutError(f"task {a.name!r}: its commands cannot be confined: {exc}") from None
        tasks.append(Task(a, executor, required, d, gate))
    return Plan(tuple(tasks), limit, missing)


def _check_shape(a: Assignment, seen: set[str]) -> None:
    if not isinstance(a.name, str) or not _NAME.fullmatch(a.name):
        raise FanoutError(
            f"task name {a.name!r} must be a plain word (letters, digits, '.', '_', '-')"
        )
    if a.name in seen:
        raise FanoutError(f"two tasks are named {a.name!r}")
    seen.add(a.name)
    if not isinstance(a.task, str) or not a.task.strip():
        raise FanoutError(f"task {a.name!r} has no task text")
    if bool(a.agent) == bool(a.capabilities):
        raise FanoutError(f"task {a.name!r} must name either an agent or capabilities (not both)")


def _declaration(a: Assignment) -> areas.Declaration:
    try:
        return areas.Declaration.of(a.name, writable=a.write, read_only=a.read)
    except areas.DeclarationError as exc:
        raise FanoutError(f"task {a.name!r}: {exc}") from None


def check_area(root: Path, owner: str, area: areas.Parts) -> None:
    """No protected name on the way (only a person may write there), no symbolic link on the
    way (a bind or a mkdir would follow it), no file mid-path."""
    for part in area:
        if part.casefold() in _PROTECTED:
            raise FanoutError(
                f"task {owner!r}: writable area {'/'.join(area)!r} lies in {part!r}, which only a "
                "person may write (file tools ask even under -y; commands see it read-only)"
            )
    path = root
    for i, part in enumerate(area):
        path = path / part
        shown = "/".join(area[: i + 1])
        if path.is_symlink():
            raise FanoutError(
                f"task {owner!r}: writable area {'/'.join(area)!r} goes through the symbolic "
                f"link {shown!r}; declare the real path"
            )
        last = i == len(area) - 1
        if path.exists() and not path.is_dir() and not (last and path.is_file()):
            raise FanoutError(
                f"task {owner!r}: writable area {'/'.join(area)!r}: {shown!r} is not a directory"
            )


def _executor(
    services: PlanServices, a: Assignment, catalogue: list[delegate.Executor]
) -> tuple[delegate.Executor, frozenset[str]]:
    try:
        if a.agent:
            services.agent(a.agent)  # an unknown or broken agent is refused here, not mid-run
            return delegate.Executor.of(a.agent, _capabilities(services, a.agent)), frozenset()
        required = delegate.capabilities(a.capabilities)
        return delegate.choose(required, catalogue), required
    except (delegate.DelegateError, catalog.AgentConfigError) as exc:
        raise FanoutError(f"task {a.name!r}: {exc}") from None
