"""Hook configuration: the `[[hooks]]` entry as the config file holds it, and the workspace's
Claude Code hooks (`.claude/settings.json`, read by `app.claudehooks`) joined to it behind trust.

Contract:
- `HookEntry` is one `[[hooks]]` table; unknown keys are errors, and `event` must be one of
  `tools.hooknames.EVENTS` or Claude Code's spelling (stored as yagent's name) — a typo is
  refused with the closest name, never left unrun.
- `claude_hooks(workspace)` reads and checks the workspace's Claude Code hooks whatever the
  trust (`claudehooks.ClaudeHooksError` when they cannot be read as written). `ClaudeHooks.raw`
  is the content to hash for trust (None when the file has no hook to run); `split(status)`
  gives the entries that apply — all of them when the file is trusted, none otherwise — and
  what is withheld (`hooks`, listing each command), for `app.config.load` to merge.
- `ClaudeHooks.notices` names what yagent cannot run from the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from yagent.app import claudehooks, projectkeys, trust
from yagent.tools import hooknames


class HookEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    event: str = "pre_tool_use"
    matcher: str = ""
    command: str
    blocking: bool = True
    timeout: float = Field(30.0, gt=0)
    on_timeout: Literal["allow", "deny"] | None = None
    style: Literal["yagent", "claude"] = "yagent"

    @field_validator("event")
    @classmethod
    def _known_event(cls, value: str) -> str:
        return hooknames.canonical_event(value)  # a typo is refused with the closest name


@dataclass(frozen=True, slots=True)
class ClaudeHooks:
    read: claudehooks.Read | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def raw(self) -> bytes | None:
        return self.read.raw if self.read is not None and self.read.entries else None

    def split(
        self, status: trust.Status | None
    ) -> tuple[list[HookEntry], list[projectkeys.Withheld]]:
        if self.read is None or not self.read.entries or status is None:
            return [], []
        if status is trust.Status.TRUSTED:
            return [HookEntry.model_validate(e) for e in self.read.entries], []
        shown = [{k: e[k] for k in ("event", "matcher", "command")} for e in self.read.entries]
        return [], projectkeys.withheld(trust.CLAUDE_SETTINGS, status, [("hooks", shown)])


def claude_hooks(workspace: Path) -> ClaudeHooks:
    read = claudehooks.read(workspace)
    if read is None or not read.skipped:
        return ClaudeHooks(read)
    said = f"{trust.CLAUDE_SETTINGS}: not run by yagent: {'; '.join(read.skipped)}"
    return ClaudeHooks(read, [said])
