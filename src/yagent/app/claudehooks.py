"""Claude Code's hooks from a workspace's `.claude/settings.json`, as yagent hook entries.

Contract:
- Only the file's `hooks` key is read here: `{"hooks": {EVENT: [{"matcher": M, "hooks":
  [{"type": "command", "command": C, "timeout": S}]}]}}`; the rest of the file is other
  readers' business.
- A file that is not JSON, a `hooks` value of the wrong shape, or an event name that neither
  yagent nor Claude Code knows is a `ClaudeHooksError` naming the file and the place (with the
  closest event name) — a typo never leaves a hook silently unrun.
- What yagent cannot run — Claude Code events it has no counterpart for (`Notification`…) and
  handlers whose `type` is not `command` — is listed in `Read.skipped`, to be said, never
  dropped silently.
- Each command becomes one entry: `style = "claude"` (Claude's tool names and exit codes, see
  `tools.hooks`), the event in yagent's name, the matcher as written (a regular expression; `*`
  or none for all), Claude's default timeout of 60 s unless one is given, blocking.
- Trust is not decided here: the file is a project file (`app.trust.CLAUDE_SETTINGS`), and
  `app.config.load` applies the entries only once the person trusted its content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.tools import hooknames

SETTINGS = Path(".claude") / "settings.json"
CLAUDE_TIMEOUT = 60.0


class ClaudeHooksError(ValueError):
    """`.claude/settings.json` hooks that cannot be read as written."""


@dataclass(frozen=True, slots=True)
class Read:
    raw: bytes  # the file's content, as hashed for trust
    entries: tuple[dict[str, Any], ...]  # `[[hooks]]`-shaped entries
    skipped: tuple[str, ...]  # what is not run, one phrase each


def read(workspace: Path) -> Read | None:
    """The workspace's Claude Code hooks; None when it has no `.claude/settings.json`."""
    path = workspace / SETTINGS
    if not path.is_file():
        return None
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ClaudeHooksError(f"{path}: not valid JSON: {exc}") from None
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        raise ClaudeHooksError(f"{path}: 'hooks' must be an object of event names")
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    for event, groups in hooks.items():
        try:
            ours = hooknames.canonical_event(str(event))
        except hooknames.UnsupportedEventError:
            skipped.append(f"{event} hooks (no such event in yagent)")
            continue
        except hooknames.UnknownEventError as exc:
            raise ClaudeHooksError(f"{path}: hooks.{event}: {exc}") from None
        entries += _entries(path, str(event), ours, groups, skipped)
    return Read(raw, tuple(entries), tuple(skipped))


def _entries(
    path: Path, event: str, ours: str, groups: Any, skipped: list[str]
) -> list[dict[str, Any]]:
    if not isinstance(groups, list):
        raise ClaudeHooksError(f"{path}: hooks.{event} must be a list of matcher groups")
    out: list[dict[str, Any]] = []
    for i, group in enumerate(groups):
        where = f"{path}: hooks.{event}[{i}]"
        handlers = group.get("hooks") if isinstance(group, dict) else None
        matcher = group.get("matcher", "") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not isinstance(matcher, str):
            raise ClaudeHooksError(f"{where} must be {{'matcher': str, 'hooks': [...]}}")
        for j, handler in enumerate(handlers):
            if not isinstance(handler, dict):
                raise ClaudeHooksError(f"{where}.hooks[{j}] must be an object")
            kind = handler.get("type", "command")
            if kind != "command":
                skipped.append(f"{event} hook of type {kind!r} (only 'command' hooks run)")
                continue
            command = handler.get("command")
            timeout = handler.get("timeout", CLAUDE_TIMEOUT)
            if not isinstance(command, str) or not command.strip():
                raise ClaudeHooksError(f"{where}.hooks[{j}]: 'command' must be a non-empty string")
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                raise ClaudeHooksError(f"{where}.hooks[{j}]: 'timeout' must be seconds > 0")
            out.append(
                {
                    "name": f"claude:{event}:{i}:{j}",
                    "event": ours,
                    "matcher": matcher,
                    "command": command,
                    "timeout": float(timeout),
                    "style": "claude",
                }
            )
    return out
