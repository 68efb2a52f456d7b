"""Command hooks: the host transport for `yagent.kernel.hookengine`.

The convention people already use with other coding agents: each hook is a shell command that
receives one JSON object on stdin — `{"event", "tool_name", "tool_input", "call_id"}` — and answers:
- exit code 2: DENY, with stderr (or stdout) as the reason shown to the model;
- exit code 0 with JSON on stdout whose `decision` is `deny`/`block` (or
  `hookSpecificOutput.permissionDecision == "deny"`): DENY with its `reason`;
- exit code 0 otherwise: ALLOW;
- any other exit code, or a command that cannot start: the hook *failed* — the engine denies for a
  blocking hook (fail closed) and records it for a non-blocking one.
Timeouts are the engine's; on cancellation the hook's whole process group is killed.
Configuration (`[[hooks]]` in config): name, event (default `pre_tool_use`), matcher (tool-name
prefix), command, blocking (default true), timeout (seconds), on_timeout (`allow`/`deny`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel import hookengine
from yagent.kernel.invoke import Decision

OUTPUT_CAP = 64 * 1024


class HookRunError(Exception):
    """The hook command could not give an answer (it is not the hook saying no)."""


class CommandRunner:
    def __init__(self, commands: Mapping[str, str], *, cwd: Path) -> None:
        self._commands = dict(commands)
        self._cwd = cwd

    async def run(self, hook: hookengine.Hook, event: hookengine.Event) -> hookengine.HookResult:
        command = self._commands.get(hook.name)
        if command is None:
            raise HookRunError(f"no command configured for hook {hook.name!r}")
        body = {
            "event": event.name,
            "tool_name": event.tool,
            "tool_input": event.payload.get("args", {}),
            "call_id": event.payload.get("call_id", ""),
        }
        proc = await anyio.open_process(
            ["bash", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self._cwd,
            start_new_session=True,
        )
        try:
            async with proc:
                assert proc.stdin is not None
                assert proc.stdout is not None
                assert proc.stderr is not None
                # a hook that does not read its input still answers with its exit code
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await proc.stdin.send(json.dumps(body).encode())
                await proc.stdin.aclose()
                out, err = await _drain(proc.stdout), await _drain(proc.stderr)
                code = await proc.wait()
        except BaseException:
            _kill_group(proc.pid)
            raise
        return interpret(hook.name, code, out, err)


async def _drain(stream: Any) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in stream:
        if size < OUTPUT_CAP:
            chunks.append(chunk[: OUTPUT_CAP - size])
        size += len(chunk)
    text = b"".join(chunks).decode("utf-8", "replace")
    return text + (f"\n[hook output truncated: {size} bytes]" if size > OUTPUT_CAP else "")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def interpret(name: str, code: int, out: str, err: str) -> hookengine.HookResult:
    """A hook process's exit code and output as its answer (see the module contract)."""
    if code == 2:
        reason = (err.strip() or out.strip()) or f"hook {name} blocked this call"
        return hookengine.HookResult(Decision.DENY, reason)
    if code != 0:
        raise HookRunError(f"hook {name} exited with status {code}: {err.strip()[:500]}")
    try:
        data = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        data = {}
    if isinstance(data, dict):
        specific = data.get("hookSpecificOutput")
        decision = str(data.get("decision", "")).lower()
        if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
            decision = "deny"
            data.setdefault("reason", specific.get("permissionDecisionReason", ""))
        if decision in ("deny", "block"):
            reason = str(data.get("reason") or f"hook {name} blocked this call")
            return hookengine.HookResult(Decision.DENY, reason)
    return hookengine.HookResult(Decision.ALLOW, "")


_KEYS = {"name", "event", "matcher", "command", "blocking", "timeout", "on_timeout"}


class HookConfigError(ValueError):
    pass


def from_config(
    entries: Iterable[Mapping[str, Any]], *, cwd: Path
) -> tuple[hookengine.Engine, CommandRunner]:
    """Hooks from configuration entries; unknown keys and missing commands are errors."""
    hooks: list[hookengine.Hook] = []
    commands: dict[str, str] = {}
    for index, entry in enumerate(entries):
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise HookConfigError(f"hooks[{index}]: unknown keys {unknown}")
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise HookConfigError(f"hooks[{index}]: 'command' must be a non-empty string")
        on_timeout = entry.get("on_timeout")
        try:
            hook = hookengine.Hook(
                name=str(entry.get("name", f"hook{index}")),
                event=str(entry.get("event", hookengine.PRE_TOOL_USE)),
                tool_prefix=str(entry.get("matcher", "")),
                blocking=entry.get("blocking", True),
                timeout=entry.get("timeout", hookengine.DEFAULT_TIMEOUT),
                on_timeout=Decision(on_timeout) if on_timeout is not None else None,
            )
        except (hookengine.HookConfigError, ValueError) as exc:
            raise HookConfigError(f"hooks[{index}]: {exc}") from exc
        hooks.append(hook)
        commands[hook.name] = command
    runner = CommandRunner(commands, cwd=cwd)
    return hookengine.Engine(hooks, runner), runner
