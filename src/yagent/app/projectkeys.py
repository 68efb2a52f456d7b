"""Which keys of a repository's own safety files apply before the person trusted them.

A project file (`.yagent/config.toml`, `.yagent/shell-rules.toml`) comes with the repository, so
it is the repository's word, not the person's. Until the person trusted its content
(`app.trust`), only what cannot loosen yagent's safety applies:

- `[agent]` tuning (timeouts, parallelism, context, spill and schema sizes, deferred tools, drain
  budget, effect lease) and `default` — unless it names an agent the project itself defines;
- `[agent] preset` when it is no looser than the preset otherwise in force on any axis (sandbox
  level, approval mode, egress);
- `[[shell.rules]]` (and remembered rules) whose verdict is `forbidden`, or `prompt` where the
  rules in force do not forbid that prefix (a longer `prompt` prefix would otherwise lift a
  `forbidden`); `[shell] default = "forbidden"`;
- `[[side_effects]]` rules that are not exemptions (`effect` absent or true);
- `[sandbox] allow_hosts` listing only hosts already allowed, `deny_read` (it only hides more),
  `allow_read` listing only paths the user's own file already re-opens, and resource limits
  (`memory_mb`, `max_processes`, `cpu_seconds`, `file_size_mb`, `open_files`) no higher than in
  force; `[pii]` actions no weaker than those in force; `[audit]` thresholds no higher,
  `review_mutating = true`;
- any key whose value equals the one already in force (it changes nothing).
Everything else — looser presets, allow rules, hooks, MCP servers, `[llm]` (where your code and
key go), agents, exemptions, unknown keys — is WITHHELD and reported by dotted name (`hooks`,
`agent.preset`, `shell.rules[2]`), never silently dropped. When unsure, a key needs trust.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yagent.app.trust import CONFIG_FILE, Status
from yagent.kernel.confine import cmdpolicy
from yagent.kernel.confine.sandbox import Limits, default_memory_mb
from yagent.kernel.judge import preset as presets

_TUNING = frozenset(
    {
        "max_parallel_tools",
        "max_parallel_agents",
        "tool_timeout",
        "idle_timeout",
        "total_timeout",
        "deferred_tools",
        "schema_budget",
        "context_window",
        "compact_at",
        "max_tool_output",
        "drain_budget",
        "effect_lease",
    }
)
_PII_RANK = {"off": 0, "mask": 1, "block": 2}
_SECRET_KEY = re.compile(r"key|token|secret|passw|auth|cookie|credential", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_NOTICE_NAMES = 8


@dataclass(frozen=True, slots=True)
class Withheld:
    """One project key that was not applied: which file, its dotted name, its value, and why."""

    file: str
    key: str
    value: Any
    reason: Status


@dataclass(frozen=True, slots=True)
class ProjectState:
    """What the workspace's own files contributed, and what they were not allowed to."""

    withheld: tuple[Withheld, ...] = ()
    remembered: tuple[dict[str, Any], ...] = ()  # shell-rules.toml entries that apply
    digests: Mapping[str, str] = field(default_factory=dict)  # file → sha256 of what was read
    status: Mapping[str, Status] = field(default_factory=dict)  # file → trust status
    home: Path | None = None
    workspace: Path | None = None


Judge = Callable[[str, Any, Mapping[str, Any]], bool]


def _agent(key: str, value: Any, base: Mapping[str, Any], project: Mapping[str, Any]) -> bool:
    if key in _TUNING:
        return True
    if key == "preset":
        return isinstance(value, str) and preset_not_looser(value, str(base.get("preset")))
    if key == "default":
        own = project.get("agents")
        return not (isinstance(own, Mapping) and value in own)
    return False


def _shell(key: str, value: Any, base: Mapping[str, Any], _project: Mapping[str, Any]) -> bool:
    return key == "default" and value == "forbidden"


def _sandbox(key: str, value: Any, base: Mapping[str, Any], _project: Mapping[str, Any]) -> bool:
    if key in _LIMITS:  # a lower limit only tightens; the base is the user's value or the default
        now = base.get(key)
        now = _LIMITS[key]() if now is None else now
        return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= now
    if key == "deny_read":
        return True  # hides more; the lists add up (config._build), so nothing is un-hidden
    if key not in ("allow_hosts", "allow_read") or not isinstance(value, list):
        return False
    allowed = base.get(key) or []
    return all(entry in allowed for entry in value)


_LIMITS: dict[str, Callable[[], int]] = {
    "memory_mb": default_memory_mb,
    "max_processes": lambda: Limits().max_processes,
    "cpu_seconds": lambda: Limits().cpu_seconds,
    "file_size_mb": lambda: Limits().file_size_mb,
    "open_files": lambda: Limits().open_files,
}


def _pii(key: str, value: Any, base: Mapping[str, Any], _project: Mapping[str, Any]) -> bool:
    now = _PII_RANK.get(str(base.get(key)))
    return now is not None and isinstance(value, str) and _PII_RANK.get(value, -1) >= now


def _audit(key: str, value: Any, base: Mapping[str, Any], _project: Mapping[str, Any]) -> bool:
    if key == "review_mutating":
        return value is True
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return key in ("prompt_at", "deny_at") and number and value <= base.get(key, 0)


def _never(key: str, value: Any, base: Mapping[str, Any], _project: Mapping[str, Any]) -> bool:
    return False


_SECTIONS: dict[str, Callable[[str, Any, Mapping[str, Any], Mapping[str, Any]], bool]] = {
    "agent": _agent,
    "shell": _shell,
    "sandbox": _sandbox,
    "pii": _pii,
    "audit": _audit,
    "llm": _never,
    "mcp": _never,
    "agents": _never,
}


def preset_not_looser(name: str, than: str) -> bool:
    """Whether preset `name` is at least as strict as `than` on every axis (unknown: False)."""
    try:
        new, now = presets.BUILTIN.resolve(name), presets.BUILTIN.resolve(than)
    except presets.UnknownPresetError:
        return False
    return (
        new.level >= now.level
        and new.mode.looseness <= now.mode.looseness
        and new.egress.mode >= now.egress.mode
    )


def rule_tightens(entry: Any, policy: cmdpolicy.Policy | None) -> bool:
    """Whether a shell rule can only make the rules in force (`policy`) stricter."""
    if not isinstance(entry, Mapping):
        return False
    verdict = entry.get("verdict")
    if verdict == "forbidden":
        return True
    prefix = entry.get("prefix")
    if isinstance(prefix, list) and all(isinstance(t, str) for t in prefix):
        prefix = shlex.join(prefix)
    if verdict != "prompt" or policy is None or not isinstance(prefix, str) or not prefix:
        return False
    try:  # the longer prefix wins: a prompt rule under a forbidding one would lift it
        decided = cmdpolicy.decide_command(policy, prefix).decision
    except cmdpolicy.CmdPolicyError:
        return False
    return decided is not cmdpolicy.Permission.FORBIDDEN


def split_rules(
    entries: Sequence[Any], policy: cmdpolicy.Policy | None, name: str
) -> tuple[list[Any], list[tuple[str, Any]]]:
    """Rules that only tighten, and the others as (`name[i]`, rule)."""
    kept: list[Any] = []
    held: list[tuple[str, Any]] = []
    for index, entry in enumerate(entries):
        if rule_tightens(entry, policy):
            kept.append(entry)
        else:
            held.append((f"{name}[{index}]", entry))
    return kept, held


def _is_effect(rule: Any) -> bool:
    return isinstance(rule, Mapping) and rule.get("effect", True) is True


def split_config(
    project: Mapping[str, Any], baseline: Mapping[str, Any], policy: cmdpolicy.Policy | None
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The part of `project` that applies untrusted, and the withheld keys as (name, value).

    `baseline` is the configuration in force without the project file (the user's file and the
    defaults, as `Config.model_dump()`), `policy` the shell rules it builds (None: unbuildable,
    so no rule can be judged to tighten it)."""
    applied: dict[str, Any] = {}
    held: list[tuple[str, Any]] = []
    for section, value in project.items():
        if section == "side_effects" and isinstance(value, list):
            kept = [r for r in value if _is_effect(r)]
            held += [(f"side_effects[{i}]", r) for i, r in enumerate(value) if not _is_effect(r)]
            if kept:
                applied[section] = kept
            continue
        judge = _SECTIONS.get(section)
        base = baseline.get(section)
        if judge is None or not isinstance(value, Mapping) or not isinstance(base, Mapping):
            if value == base:
                applied[section] = value
            else:
                held.append((section, value))
            continue
        part: dict[str, Any] = {}
        for key, item in value.items():
            if section == "shell" and key == "rules" and isinstance(item, list):
                part[key], rules_held = split_rules(item, policy, "shell.rules")
                held += rules_held
            elif item == base.get(key) or judge(key, item, base, project):
                part[key] = item
            else:
                held.append((f"{section}.{key}", item))
        if part:
            applied[section] = part
    return applied, held


def withheld(file: str, reason: Status, names: Iterable[tuple[str, Any]]) -> list[Withheld]:
    return [Withheld(file, key, value, reason) for key, value in names]


def shown(value: Any, key: str = "") -> Any:
    """`value` as it may be printed: secret-looking keys, environment and header values and URL
    passwords masked (the person reviews what a key does, not the secrets it may carry)."""
    if isinstance(value, Mapping):  # every value of an environment or header table: to hide
        hide = key in ("env", "headers")
        return {str(k): "***" if hide else shown(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown(v, key) for v in value]
    if isinstance(value, str):
        if key.endswith(("_file", "_env")):
            return value  # a path or a variable name, not the secret itself
        if _SECRET_KEY.search(key):
            return "***"
        return _URL_USERINFO.sub("***@", value)
    return value


def describe(item: Withheld) -> str:
    """`key = value` for the review, secrets masked."""
    leaf = item.key.rsplit(".", 1)[-1].split("[", 1)[0]
    return f"{item.key} = {json.dumps(shown(item.value, leaf), ensure_ascii=False, default=str)}"


def notice(state: ProjectState) -> str | None:
    """One line naming what was withheld and how to apply it, or None when nothing was."""
    if not state.withheld:
        return None
    parts = []
    for file in dict.fromkeys(w.file for w in state.withheld):
        items = [w for w in state.withheld if w.file == file]
        names = [w.key for w in items[:_NOTICE_NAMES]]
        more = f" and {len(items) - _NOTICE_NAMES} more" if len(items) > _NOTICE_NAMES else ""
        parts.append(f"{file} ({items[0].reason.value}): {', '.join(names)}{more}")
    hint = "review and apply them with `yagent trust`"
    if any(w.file == CONFIG_FILE for w in state.withheld):
        hint += " (they come with the repository, not from you)"
    return f"project settings not applied — {'; '.join(parts)}; {hint}"
