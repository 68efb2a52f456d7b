"""Claude Code's tool names, mapped onto yagent's: for `.claude/agents/*.md` `tools:` and a skill's
`allowed-tools`.

Contract:
- `CLAUDE_TOOLS` is the one table: each Claude Code tool name that has a yagent counterpart maps
  to the yagent tools doing that work (Glob → list_dir and print_dir_tree; Bash → run_bash and its
  background-job tools). yagent's own tool names are accepted as themselves.
- `UNSUPPORTED` names Claude tools yagent does not have, each with the reason; they are errors,
  never silently dropped (an agent that loses a tool it was written for must not start quietly).
- A permission-rule form such as `Bash(git status:*)` is parsed into (tool, pattern); whether a
  pattern may stand (agents' `tools:` lists take none; a skill's grant cannot be scoped by it)
  is the caller's decision.
- An unknown name is a `ToolNameError` naming it and suggesting the closest known names.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("run_bash", "list_jobs", "stop_job"),
    "BashOutput": ("list_jobs",),
    "KillShell": ("stop_job",),
    "KillBash": ("stop_job",),
    "Read": ("read_file",),
    "Write": ("write_file",),
    "Edit": ("search_replace_in_file",),
    "MultiEdit": ("search_replace_in_file",),
    "Grep": ("search",),
    "Glob": ("list_dir", "print_dir_tree"),
    "LS": ("list_dir",),
    "WebFetch": ("web_fetch",),
    "Skill": ("use_skill",),
}
UNSUPPORTED: dict[str, str] = {
    "WebSearch": "yagent has no web search tool (web_fetch reads a page you name)",
    "NotebookEdit": "yagent has no notebook editor",
    "NotebookRead": "yagent has no notebook reader (read_file reads the .ipynb as text)",
    "Task": "yagent sub-agents do not start other agents",
    "TodoWrite": "yagent has no to-do list tool",
    "ExitPlanMode": "yagent has no plan mode",
    "SlashCommand": "yagent has no slash commands",
}


def claude_names(tool: str) -> tuple[str, ...]:
    """Claude Code's names for yagent's `tool` — those whose first yagent counterpart it is (a
    Claude-style hook matcher is tested against these as well as yagent's own name)."""
    return tuple(claude for claude, ours in CLAUDE_TOOLS.items() if ours[0] == tool)


_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$")


class ToolNameError(ValueError):
    """A tool name that is neither Claude Code's nor yagent's, or one yagent cannot provide."""


def split_names(value: object) -> list[str]:
    """A `tools:` / `allowed-tools:` value — a comma- or space-separated string, or a list — as
    names. Commas inside a rule's parentheses do not split it."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if not isinstance(value, str):
        raise ToolNameError(f"expected a list or a comma-separated string, got {value!r}")
    names, depth, word = [], 0, ""
    for char in value:
        depth += (char == "(") - (char == ")")
        if depth == 0 and (char == "," or (char.isspace() and "(" not in word)):
            if word.strip():
                names.append(word.strip())
            word = ""
            continue
        word += char
    if word.strip():
        names.append(word.strip())
    return names


def parse(entry: str) -> tuple[str, str | None]:
    """`Bash(git status:*)` → ("Bash", "git status:*"); `Read` → ("Read", None)."""
    match = _RULE.match(entry)
    if match is None:
        raise ToolNameError(f"{entry!r} is not a tool name or a Tool(pattern) rule")
    return match.group(1), match.group(2)


def to_yagent(name: str, known: Iterable[str]) -> tuple[str, ...]:
    """The yagent tools a Claude (or yagent) tool name stands for; `ToolNameError` otherwise."""
    own = set(known)
    if name in CLAUDE_TOOLS:
        return CLAUDE_TOOLS[name]
    if name in own:
        return (name,)
    if name in UNSUPPORTED:
        raise ToolNameError(f"tool {name!r} cannot be provided: {UNSUPPORTED[name]}")
    if name.startswith("mcp__"):
        raise ToolNameError(
            f"tool {name!r}: MCP tools are granted with the agent's `external` switch, not by name"
        )
    close = difflib.get_close_matches(name, [*CLAUDE_TOOLS, *sorted(own)], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ToolNameError(f"unknown tool {name!r}{hint}")
