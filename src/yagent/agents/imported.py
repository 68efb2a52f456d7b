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
- Finding the files and reading their front matter is `agents.agentfiles` (`find`, `AgentFile`);
  `load` reports a file it cannot read as an `AgentConfigError` naming it.
Leaves to the host: whether the project's folder is trusted, and which names win over these.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from yagent.agents import agentfiles
from yagent.agents.agentfiles import AgentFile
from yagent.agents.catalog import AgentConfigError, AgentDef
from yagent.toolspec import claudetools
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import CODING, Profile, custom

MAX_STEPS = 40
CLAUDE_MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku"})
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


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
    try:
        meta, body = agentfiles.front_matter(entry.path)
    except agentfiles.AgentFileError as exc:
        raise AgentConfigError(str(exc)) from None
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
