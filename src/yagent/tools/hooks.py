"""Command hooks: the host transport for `yagent.kernel.judge.hookengine`.

Each hook is a shell command (`bash -c`, in the workspace, its own process group) that receives
one JSON object on stdin and answers with its exit code and output. The object carries yagent's
fields and Claude Code's: `event` (yagent's name), `hook_event_name` (Claude's spelling),
`session_id`, `cwd`, `transcript_path` (the session's messages as JSON lines), and per event
`tool_name` / `tool_input` / `call_id` (tool events), `tool_response` (`post_tool_use`),
`prompt` (`user_prompt_submit`), `source` (`session_start`), `reason` (`session_end`),
`trigger` (`pre_compact`), `stop_hook_active` and `status` (`stop`, `subagent_stop`).
A `style = "claude"` hook gets Claude's tool names in `tool_name` (`Bash`, `Read`…, yagent's in
`yagent_tool_name`) and `file_path` beside `path` in `tool_input`.

The answer:
- exit 2: DENY, the reason is stderr with stdout kept beside it;
- exit 0 with stdout that is a JSON object: `decision` `deny`/`block` → DENY, `ask` → PROMPT,
  `allow`/`approve` → ALLOW; `hookSpecificOutput.permissionDecision` `deny` / `ask` / `allow`
  the same (its `permissionDecisionReason` the reason); `continue: false` → DENY with its
  `stopReason`. The strictest answer wins. An unknown decision value is a failure.
- exit 0 with stdout that starts like JSON (`{` or `[`) but is not a JSON object: the hook
  *failed* — for a blocking hook that is a denial whose reason holds the raw output.
- exit 0 otherwise (no output, plain text): ALLOW (the text is kept as the reason, for the log).
- any other exit code, or a command that cannot start: the hook *failed* (the engine denies for
  a blocking hook and records it for a non-blocking one) — except for a `style = "claude"`
  hook, where it is Claude Code's non-blocking error: ALLOW, with the exit status and output in
  the reason the host reports.
Reasons keep at most `REASON_CAP` characters of output, and say when they cut.
Timeouts are the engine's; on cancellation the hook's whole process group is killed.
Configuration (`[[hooks]]` in config): name, event (one of `hooknames.EVENTS` or Claude Code's
spelling; anything else is refused naming the closest), matcher (yagent style: a tool-name
prefix; Claude style: a regular expression matched against the whole of yagent's name or one of
Claude's names for the tool, `*` or empty for all), command, blocking (default true), timeout
(seconds), on_timeout (`allow`/`deny`), style (`yagent` or `claude`).
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

from yagent.kernel.judge import hookengine
from yagent.kernel.judge.invoke import Decision
from yagent.tools import hooknames

OUTPUT_CAP = 64 * 1024
REASON_CAP = 2000
STYLES = ("yagent", "claude")
_EVENT_FIELDS: tuple[str, ...] = ("tool_response", "prompt", "source", "reason", "trigger")
_EVENT_FIELDS += ("stop_hook_active", "status", "agent", "custom_instructions")


class HookRunError(Exception):
    """The hook command could not give an answer (it is not the hook saying no)."""


class CommandRunner:
    def __init__(
        self, commands: Mapping[str, str], *, cwd: Path, styles: Mapping[str, str] | None = None
    ) -> None:
        self._commands = dict(commands)
        self._styles = dict(styles or {})
        self._cwd = cwd

    def style(self, hook: str) -> str:
        return self._styles.get(hook, "yagent")

    async def run(self, hook: hookengine.Hook, event: hookengine.Event) -> hookengine.HookResult:
        command = self._commands.get(hook.name)
        if command is None:
            raise HookRunError(f"no command configured for hook {hook.name!r}")
        claude = self.style(hook.name) == "claude"
        body = body_of(event, cwd=self._cwd, claude=claude)
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
        return interpret(hook.name, code, out, err, claude=claude)


def body_of(event: hookengine.Event, *, cwd: Path, claude: bool = False) -> dict[str, Any]:
    """The JSON object a hook command reads on stdin (see the module contract)."""
    payload = event.payload
    body: dict[str, Any] = {
        "event": event.name,
        "hook_event_name": hooknames.claude_name(event.name),
        "session_id": str(payload.get("session_id", "")),
        "cwd": str(payload.get("cwd") or cwd),
        "transcript_path": str(payload.get("transcript_path", "")),
    }
    if event.name in hooknames.TOOL_EVENTS:
        tool = str(payload.get("tool", event.tool))
        args = dict(payload.get("args", {}))
        aliases = hooknames.tool_aliases(tool)
        if claude:
            body["yagent_tool_name"] = tool
            if "path" in args and "file_path" not in args:
                args["file_path"] = args["path"]
        body["tool_name"] = aliases[0] if claude and aliases else tool
        body["tool_input"] = args
        body["call_id"] = str(payload.get("call_id", ""))
    for key in _EVENT_FIELDS:
        if key in payload:
            body[key] = payload[key]
    return body


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


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) <= REASON_CAP:
        return text
    return text[:REASON_CAP] + f" [cut: {len(text) - REASON_CAP} more characters]"


def _output(err: str, out: str) -> str:
    """stderr and stdout, both kept (either may be empty)."""
    err, out = _clip(err), _clip(out)
    if err and out:
        return f"{err} [stdout: {out}]"
    return err or out


_ANSWERS = {
    "deny": Decision.DENY,
    "block": Decision.DENY,
    "ask": Decision.PROMPT,
    "allow": Decision.ALLOW,
    "approve": Decision.ALLOW,
}
_RANK = {Decision.ALLOW: 0, Decision.PROMPT: 1, Decision.DENY: 2}


def interpret(
    name: str, code: int, out: str, err: str, *, claude: bool = False
) -> hookengine.HookResult:
    """A hook process's exit code and output as its answer (see the module contract)."""
    if code == 2:
        reason = _output(err, out) or f"hook {name} blocked this call"
        return hookengine.HookResult(Decision.DENY, reason)
    if code != 0:
        said = _output(err, out) or "no output"
        if claude:
            why = "a non-blocking error for a Claude Code hook, so the call goes on"
            return hookengine.HookResult(
                Decision.ALLOW, f"hook {name} exited with status {code} ({why}): {said}"
            )
        raise HookRunError(f"hook {name} exited with status {code}: {said}")
    data = _json_answer(name, out)
    if data is None:
        return hookengine.HookResult(Decision.ALLOW, _clip(out))
    return _decided(name, data)


def _json_answer(name: str, out: str) -> dict[str, Any] | None:
    """The JSON object a hook printed; None for plain text; a failure for broken JSON."""
    text = out.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise HookRunError(
            f"hook {name} printed output that is not valid JSON ({where}); raw output: "
            f"{_clip(text)}"
        ) from None
    if not isinstance(data, dict):
        raise HookRunError(f"hook {name} printed JSON that is not an object: {_clip(text)}")
    return data


def _decided(name: str, data: Mapping[str, Any]) -> hookengine.HookResult:
    answers: list[tuple[Decision, str]] = []
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, Mapping) and "permissionDecision" in specific:
        why = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
        answers.append((_answer(name, specific["permissionDecision"]), why))
    if data.get("decision") not in (None, ""):
        answers.append((_answer(name, data["decision"]), str(data.get("reason") or "")))
    if data.get("continue") is False:
        answers.append((Decision.DENY, str(data.get("stopReason") or "the hook said stop")))
    if not answers:
        return hookengine.HookResult(Decision.ALLOW, str(data.get("reason") or ""))
    decision, reason = max(answers, key=lambda a: _RANK[a[0]])
    if not reason and decision is not Decision.ALLOW:
        reason = f"hook {name} said {decision.value}"
    return hookengine.HookResult(decision, _clip(reason))


def _answer(name: str, value: Any) -> Decision:
    decision = _ANSWERS.get(str(value).lower()) if isinstance(value, str) else None
    if decision is None:
        known = ", ".join(sorted(_ANSWERS))
        raise HookRunError(f"hook {name} answered decision {value!r}; expected one of {known}")
    return decision


_KEYS = {"name", "event", "matcher", "command", "blocking", "timeout", "on_timeout", "style"}


class HookConfigError(ValueError):
    pass


def from_config(
    entries: Iterable[Mapping[str, Any]], *, cwd: Path
) -> tuple[hookengine.Engine, CommandRunner]:
    """Hooks from configuration entries; unknown keys, unknown events and missing commands are
    errors."""
    hooks: list[hookengine.Hook] = []
    commands: dict[str, str] = {}
    styles: dict[str, str] = {}
    for index, entry in enumerate(entries):
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise HookConfigError(f"hooks[{index}]: unknown keys {unknown}")
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise HookConfigError(f"hooks[{index}]: 'command' must be a non-empty string")
        style = str(entry.get("style", "yagent"))
        if style not in STYLES:
            raise HookConfigError(f"hooks[{index}]: style must be one of {list(STYLES)}")
        on_timeout = entry.get("on_timeout")
        try:
            event = hooknames.canonical_event(str(entry.get("event", hooknames.PRE_TOOL_USE)))
            hook = hookengine.Hook(
                name=str(entry.get("name", f"hook{index}")),
                event=event,
                blocking=entry.get("blocking", True),
                timeout=entry.get("timeout", hookengine.DEFAULT_TIMEOUT),
                on_timeout=Decision(on_timeout) if on_timeout is not None else None,
                **_matcher(style, str(entry.get("matcher", ""))),
            )
        except (hookengine.HookConfigError, ValueError) as exc:
            raise HookConfigError(f"hooks[{index}]: {exc}") from exc
        hooks.append(hook)
        commands[hook.name] = command
        styles[hook.name] = style
    runner = CommandRunner(commands, cwd=cwd, styles=styles)
    return hookengine.Engine(hooks, runner), runner


def _matcher(style: str, matcher: str) -> dict[str, str]:
    if style == "yagent":
        return {"tool_prefix": matcher}
    return {"tool_pattern": "" if matcher in ("", "*") else matcher}
