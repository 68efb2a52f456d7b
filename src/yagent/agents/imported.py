"""Claude Code's sub-agents (`.claude/agents/*.md`) as yagent custom agents.

A file is YAML front matter (`name`, `description`, optional `tools`, optional `model`) and a body
that is the agent's instructions:

    ---
    name: code-reviewer
    description: Reviews a change for bugs.
    tools: Read, Grep, Glob, Bash
    model: inherit
    ---
    You are a careful reviewer…

Contract:
- `tools` names Claude Code's tools (or yagent's), mapped by `toolspec.claudetools`; an unknown or
  unsupported name, or a `Tool(pattern)` rule, is an `AgentConfigError` naming the file — an agent
  never starts quietly without a tool it was written for. Without `tools` (Claude: every tool) the
  agent gets the Coding agent's tools and external (MCP) tools.
- `model`: `inherit` and Claude's aliases (`sonnet`, `opus`, `haiku`) mean the configured model
  (they name Anthropic models by family, which an OpenAI-compatible server does not know); any
  other value is used as the model id.
- The agent is stated like a `[agents.X]` agent: it exits on `agent_exit`, retries once on a
  turn without action, stops after `MAX_STEPS`; its prompt's first line names it.
- `find` lists the files by agent name: the project's (`<workspace>/.claude/agents`) before the
  person's (`~/.claude/agents`); a file whose front matter cannot be read is listed under its
  file name so choosing it reports the problem instead of "unknown agent".
Leaves to the host: whether the project's folder is trusted, and which names win over these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from yagent.agents.catalog import AgentConfigError, AgentDef
from yagent.toolspec import BUILTIN, claudetools, custom
from yagent.toolspec.profiles import CODING, Profile

MAX_STEPS = 40
CLAUDE_MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku"})
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True, slots=True)
class AgentFile:
    name: str
    path: Path
    project: bool  # from the workspace's .claude/agents (needs trust), not the person's own


def _front_matter(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentConfigError(f"{path}: cannot be read: {exc}") from None
    parts = text.split("---", 2)
    if not text.startswith("---") or len(parts) < 3:
        raise AgentConfigError(f"{path}: needs YAML front matter between --- lines")
    try:
        meta = yaml.safe_load(parts[1]) or {}
    except yaml.YAMLError as exc:
        raise AgentConfigError(f"{path}: front matter is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise AgentConfigError(f"{path}: front matter must be a mapping")
    return meta, parts[2].strip()


def find(workspace: Path, user_home: Path | None) -> dict[str, AgentFile]:
    """Agent name → its file (module contract: the project's first)."""
    found: dict[str, AgentFile] = {}
    folders = [(workspace / ".claude" / "agents", True)]
    if user_home is not None:
        folders.append((user_home / ".claude" / "agents", False))
    for folder, project in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                name = str(_front_matter(path)[0].get("name") or path.stem)
            except AgentConfigError:
                name = path.stem
            found.setdefault(name, AgentFile(name, path, project))
    return found


def _profile(name: str, tools: Any, path: Path) -> Profile:
    if tools is None:
        return Profile(name, CODING.effects, CODING.names, CODING.deny, external=True)
    known = [spec.name for spec in BUILTIN]
    granted: list[str] = []
    try:
        for entry in claudetools.split_names(tools):
            tool, pattern = claudetools.parse(entry)
            if pattern is not None:
                raise claudetools.ToolNameError(
                    f"{entry!r}: an agent's tools take no pattern (rules belong in shell rules)"
                )
            granted.extend(claudetools.to_yagent(tool, known))
    except claudetools.ToolNameError as exc:
        raise AgentConfigError(f"{path}: tools: {exc}") from None
    return custom(name, tools=list(dict.fromkeys(granted)))


def load(entry: AgentFile, step_retries: int) -> AgentDef:
    """The agent a Claude Code agent file describes (module contract)."""
    meta, body = _front_matter(entry.path)
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        raise AgentConfigError(
            f"{entry.path}: 'name' must be lowercase letters, digits, '-' or '_' (got {name!r})"
        )
    if not isinstance(description, str) or not description.strip():
        raise AgentConfigError(f"{entry.path}: needs a 'description'")
    if not body:
        raise AgentConfigError(f"{entry.path}: the body (the agent's instructions) is empty")
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise AgentConfigError(f"{entry.path}: 'model' must be text")
    header = f"You are yagent's custom agent {name!r}: {description.strip()}"
    return AgentDef(
        name,
        _profile(name, meta.get("tools"), entry.path),
        f"{header}\n\n{body}\n\nWhen done, call agent_exit with your result.",
        True,
        1,
        step_retries,
        MAX_STEPS,
        None,
        "" if model is None or model in CLAUDE_MODEL_ALIASES else model,
    )


def names(files: Iterable[AgentFile]) -> str:
    return ", ".join(sorted(f.name for f in files)) or "none"
