"""The areas ring (stage `worktree`): a confined worker's tool calls stay inside its declared areas.

A worker running beside others (a parallel sub-agent) holds a `kernel.judge.areas.Declaration`:
the areas it may write and the ones it may only read, relative to the workspace. This stage —
on the worker's own Surface, right after the tooldisclose gate — judges every call by the spec's
declared facts, never by the tool's name:
- `path_args`: every path the call names (the workspace root when it names none: that is where
  such a tool then works) is resolved as the workspace guard resolves it (`realpath`: symbolic
  links followed, `..` collapsed) and must lie inside the workspace and inside the declaration —
  readable for a read-only effect, writable for any other. A symbolic link inside an area that
  points into another worker's area is judged where it points.
- `command_arg` (a shell line): allowed only when the Surface's command gate is itself confined
  to the declaration's writable areas (its sandbox keeps the rest of the workspace read-only);
  otherwise refused — the stage cannot see where a command writes.
- external (MCP) tools are judged by their effect like built-in tools that name no path: a
  mutating one (not declared read-only) is refused — it changes things in another process where
  nobody can see or confine its paths; a read-only one passes (reads are not confined by the
  sandbox either, see the known limit).
- a write-effect tool that names no path is refused (where it writes cannot be judged); other
  tools without paths (thinking, flow control, loading tools, fetching pages, programs — whose
  host calls come back through this same ring one by one) pass.
Every refusal is a DENY (kind PERMISSION, not retryable) naming the worker, the path and its
areas: the declaration is the contract, so nobody is asked to widen it mid-run.
Known limit: reads by shell commands are not confined (the sandbox shows the whole workspace
read-only); only the file tools keep a worker's reads inside its read areas.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from yagent.kernel.judge import areas, toolfail
from yagent.kernel.judge.invoke import Call, Verdict
from yagent.tools.commands import CommandGate
from yagent.tools.toolview import ToolView
from yagent.toolspec import Effect, Spec

STAGE = "worktree"


def describe(declaration: areas.Declaration) -> str:
    """The areas of a declaration, as a person (and a model) reads them."""

    def show(areas: tuple[areas.Parts, ...]) -> str:
        return ", ".join("/".join(a) or "." for a in areas) or "nothing"

    return f"write: {show(declaration.writable)}; read: {show(declaration.read_only)}"


class WorktreeStage:
    name = STAGE

    def __init__(
        self,
        surface: ToolView,
        declaration: areas.Declaration,
        commands: CommandGate | None = None,
    ) -> None:
        self._surface = surface
        self._declaration = declaration
        self._commands = commands

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        if spec is None:
            return Verdict.allow(self.name)  # the disclosure gate before this one refuses it
        reason = self.refusal(spec, call.args)
        if reason is None:
            return Verdict.allow(self.name)
        owner = self._declaration.owner
        return Verdict.deny(
            f"{reason} (worker {owner!r} is confined to {describe(self._declaration)})",
            kind=toolfail.Kind.PERMISSION,
            retryable=False,
            stage=self.name,
        )

    def refusal(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call leaves the declared areas, or None."""
        if spec.external:
            if "read-only" in spec.tags:
                return None
            return f"{spec.name} is an external tool that may change things: it cannot be confined"
        if spec.command_arg:
            gate = self._commands
            if gate is None or gate.areas is None:
                return f"{spec.name} would run a command outside a confined sandbox"
            return None
        if spec.path_args:
            return self._paths(spec, spec.arg_paths_of(args) or (".",))
        if spec.effect is Effect.WRITE:
            return f"{spec.name} writes files but names no path that could be judged"
        return None

    def _paths(self, spec: Spec, paths: tuple[str, ...]) -> str | None:
        guard = self._surface.guard
        need = areas.Access.READ if spec.read_only else areas.Access.WRITE
        verb = "read" if spec.read_only else "write"
        for path in paths:
            resolved = guard.resolve(path)
            rel = os.path.relpath(resolved, guard.workspace)
            if rel == ".." or rel.startswith("../"):
                return f"{spec.name} may not {verb} {path!r}: it resolves outside the workspace"
            try:
                granted = self._declaration.access(rel)
            except areas.DeclarationError as exc:
                return f"{spec.name} may not {verb} {path!r}: {exc}"
            if granted < need:
                where = "read-only" if granted is areas.Access.READ else "outside its areas"
                return f"{spec.name} may not {verb} {path!r} ({rel}): it is {where}"
        return None
