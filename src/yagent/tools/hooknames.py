"""The hook events yagent runs, their Claude Code spellings, and Claude Code's tool names.

Contract:
- `EVENTS` are the only hook events: a hook for any other name is refused when the configuration
  is read (`canonical_event` raises `UnknownEventError` naming the closest known spelling) — a
  typo never leaves a safety hook silently unrun.
- Claude Code's spellings (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`,
  `SubagentStop`, `SessionStart`, `SessionEnd`, `PreCompact`) are aliases of yagent's names;
  `claude_name` gives the spelling back (a Claude hook reads it in `hook_event_name`).
- Claude Code events yagent does not run (`CLAUDE_ONLY`) are not typos: `canonical_event`
  raises `UnsupportedEventError` for them, so a caller can report them instead of failing.
- `tool_aliases` gives the Claude Code names of a yagent tool (`run_bash` → `Bash`), so a Claude
  matcher such as `Bash|Write` selects yagent's tools; tools without a Claude counterpart have
  none (`Glob`, `Task`, `TodoWrite`, `NotebookEdit` match nothing of yagent's).
"""

from __future__ import annotations

import difflib

from yagent.toolspec import claudetools

PRE_TOOL_USE = "pre_tool_use"
POST_TOOL_USE = "post_tool_use"
USER_PROMPT_SUBMIT = "user_prompt_submit"
STOP = "stop"
SUBAGENT_STOP = "subagent_stop"
SESSION_START = "session_start"
SESSION_END = "session_end"
PRE_COMPACT = "pre_compact"

CLAUDE_NAMES: dict[str, str] = {
    PRE_TOOL_USE: "PreToolUse",
    POST_TOOL_USE: "PostToolUse",
    USER_PROMPT_SUBMIT: "UserPromptSubmit",
    STOP: "Stop",
    SUBAGENT_STOP: "SubagentStop",
    SESSION_START: "SessionStart",
    SESSION_END: "SessionEnd",
    PRE_COMPACT: "PreCompact",
}
EVENTS: tuple[str, ...] = tuple(CLAUDE_NAMES)
TOOL_EVENTS = frozenset({PRE_TOOL_USE, POST_TOOL_USE})
CLAUDE_ONLY = frozenset(
    {"Notification", "PermissionRequest", "PostToolUseFailure", "SubagentStart", "Setup"}
)
_BY_CLAUDE = {claude: ours for ours, claude in CLAUDE_NAMES.items()}


class UnknownEventError(ValueError):
    """A hook event name that neither yagent nor Claude Code knows."""


class UnsupportedEventError(ValueError):
    """A Claude Code hook event that yagent does not run."""


def canonical_event(name: str) -> str:
    """yagent's name for `name` (yagent's own or Claude Code's spelling); see the contract."""
    if name in CLAUDE_NAMES:
        return name
    if name in _BY_CLAUDE:
        return _BY_CLAUDE[name]
    if name in CLAUDE_ONLY:
        raise UnsupportedEventError(f"Claude Code's {name} hooks are not run by yagent")
    known = [*EVENTS, *_BY_CLAUDE]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    if not close:  # case and separators: "PRE-TOOL-USE", "preToolUse"
        folded = {k.replace("_", "").lower(): k for k in known}
        hit = folded.get(name.replace("_", "").replace("-", "").lower())
        close = [hit] if hit else []
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise UnknownEventError(
        f"unknown hook event {name!r}{hint} (known: {', '.join(EVENTS)}, or Claude Code's "
        f"{', '.join(CLAUDE_NAMES.values())})"
    )


def claude_name(event: str) -> str:
    return CLAUDE_NAMES.get(event, event)


def tool_aliases(tool: str) -> tuple[str, ...]:
    return claudetools.claude_names(tool)
