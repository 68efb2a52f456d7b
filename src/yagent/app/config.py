"""Configuration: `~/.yagent/config.toml`, then `<workspace>/.yagent/config.toml`, then environment.

Contract:
- Later sources override earlier ones key by key (sections merge); unknown keys anywhere are
  errors naming the file and the key, and the closest known key when one is close (`modle` →
  `model`) — a typo never silently falls back to a default.
- API keys come only from the environment (`api_key_env`, default by provider) or a key file
  (`api_key_file`); a key written into config.toml is refused. Keys are `SecretStr`: never printed,
  never in `repr`. Environment overrides: YAGENT_PROVIDER, YAGENT_MODEL, YAGENT_BASE_URL,
  YAGENT_STORE_URL (`[store] url`, `app.storeconfig`).
- Safety: `[agent] preset` names one of the built-in presets (an unknown name is an error, never
  a fallback); `[[shell.rules]]` from the user's and the project's file are concatenated (user
  first), not overridden, and are checked as cmdpolicy rules when the app is assembled; `[pii]`
  sets the action per surface (default: mask for the model and the logs, off for the display).
- Limits: `[sandbox] memory_mb`, `max_processes`, `cpu_seconds`, `file_size_mb`, `open_files`
  bound sandboxed commands (positive integers; a project's file may only lower them).
- Egress: `[sandbox] allow_hosts` lists the hosts sandboxed commands may reach through the
  egress proxy; an entry that cannot be read is an error naming it (key by key like the rest: a
  project's list replaces the user's). Local services for the browser: `[network]`, `app.network`.
- Reads: `[sandbox] deny_read` adds paths no sandboxed command or file tool may read (entries
  add up across files, like shell rules: a project can hide more, never less); `allow_read`
  re-opens hidden paths (key by key: a project's list replaces the user's, and applies untrusted
  only when it re-opens nothing the user's own list does not). Entries are non-empty paths,
  `~`-expanded, relative ones taken against the workspace (`tools.readmask`).
- Durability: `[[side_effects]]` rules (tools.effects) add up across files like shell rules;
  `[agent] drain_budget` and `effect_lease` set the Ctrl-C drain and the side-effect lease.
- Project trust: the workspace's files (`.yagent/config.toml`, `.yagent/shell-rules.toml`) come
  with the repository. Every key is validated, but until the person trusted the file's exact
  content (`app.trust`, `yagent trust`) only the keys `app.projectkeys` judges harmless or
  tightening apply; the rest are withheld and listed in `Config.project.withheld` with the reason
  (not trusted / changed since trusted). The user's own file is never affected. A trust file that
  cannot be read is an error, never "trust all". The folders other agents' conventions put power in
  (`.claude/agents`, the skills' `allowed-tools`) are trusted the same way, each as one unit
  (`app.projectfolders`).
- Claude Code hooks (`.claude/settings.json`, `app.hookconfig`) are checked whatever the trust
  and join `hooks` once that file is trusted, else are withheld (`hooks`); `hook_notices` says
  what yagent cannot run from it. `.mcp.json`'s servers join `mcp` the same way (`app.mcpjson`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SkipValidation,
    ValidationError,
    field_validator,
)

from yagent.app import claudehooks, configkeys, mcpjson, projectfolders, projectkeys, trust
from yagent.app.hookconfig import HookEntry, claude_hooks
from yagent.app.llmconfig import DEFAULT_KEY_ENV as DEFAULT_KEY_ENV
from yagent.app.llmconfig import ConfigError as ConfigError
from yagent.app.llmconfig import LLMConfig as LLMConfig
from yagent.app.llmconfig import Price as Price
from yagent.app.llmconfig import Provider as Provider
from yagent.app.llmconfig import Strict as Strict
from yagent.app.mcpconfig import McpServer
from yagent.app.mcpsources import McpSourceError
from yagent.app.network import NetworkSettings
from yagent.app.storeconfig import ENV as STORE_URL_ENV
from yagent.app.storeconfig import StoreSettings
from yagent.kernel.confine import cmdpolicy, egress
from yagent.kernel.confine.sandbox import Limits, default_memory_mb
from yagent.kernel.judge import preset as presets
from yagent.tools.egress.allowlist import AllowList, AllowListError
from yagent.tools.shellrules import RuleFile, ShellRulesError, build_policy

CONFIG, RULES, CLAUDE = trust.CONFIG_FILE, trust.RULES_FILE, trust.CLAUDE_SETTINGS


class AgentSettings(Strict):
    default: str = "coding"
    max_parallel_tools: int = Field(4, ge=1, le=32)
    max_parallel_agents: int = Field(4, ge=1, le=32)  # sub-agents of a parallel run at once
    # delegations of one run at once (`app.delegationpool.normalise`: 1 serial, <=0 2, >8 8)
    max_parallel_delegations: int = 2
    delegate_idle_timeout: float | None = Field(600.0, gt=0)  # from the delegation's slot on
    delegate_total_timeout: float | None = Field(3600.0, gt=0)
    tool_timeout: float = Field(180.0, gt=0)
    idle_timeout: float | None = Field(600.0, gt=0)
    total_timeout: float | None = Field(None, gt=0)
    deferred_tools: bool = True
    schema_budget: int | None = Field(None, gt=0)
    preset: str = "workspace-write"

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        try:
            presets.BUILTIN.resolve(value)
        except presets.UnknownPresetError as exc:  # a LookupError: pydantic reports ValueErrors
            raise ValueError(str(exc)) from None
        return value

    context_window: int = Field(128_000, ge=1000, description="input window, tokens")
    compact_at: float = Field(0.8, gt=0.5, le=1.0, description="compact at this window share")
    # ≥ one spill line (2000 chars): a one-line JSON output must show at least its first piece
    max_tool_output: int = Field(20_000, ge=2000, description="tool output chars before spill")
    spill_max_age_days: float = Field(
        14.0, ge=0, allow_inf_nan=False, description="spilled outputs older than this are removed"
    )
    # Ctrl-C / shutdown: seconds the turn in flight may finish (kernel.durable.drain: 0 default,
    # <0 none)
    drain_budget: float = Field(5.0, allow_inf_nan=False, description="seconds")
    effect_lease: float = Field(30.0, gt=0, le=3600, description="side-effect lease, seconds")
    # --json: seconds the command waits at the end for a reader of stdout that stopped reading
    stdout_wait: float = Field(60.0, ge=0, le=86400, allow_inf_nan=False, description="seconds")


class CustomAgent(Strict):
    """`[agents.NAME]`: a custom agent (prompt and tools), or for a built-in agent only
    `delegates` (who it may delegate to, `app.delegationpool.topology`)."""

    prompt: str | None = None
    tools: list[str] | None = None
    delegates: list[str] | None = None
    deny: list[str] = Field(default_factory=list)
    model: str = ""
    max_steps: int = Field(40, gt=0)
    external: bool = False


PiiAction = Literal["off", "mask", "block"]


class ShellSettings(Strict):
    rules: list[dict[str, Any]] = Field(default_factory=list)  # cmdpolicy rule tables
    default: Literal["prompt", "forbidden"] = "prompt"
    builtin_rules: bool = True


class SandboxSettings(Strict):
    """`allow_hosts`: the hosts a sandboxed command may reach through yagent's egress proxy
    (grammar in `tools.egress.allowlist`); empty keeps the sandbox's network cut. The rest bound
    every sandboxed command's resources (`sandbox.Limits`; docs/security.md says what is per process
    and what per sandbox); `memory_mb` unset is a quarter of the machine's memory, at most 4096.
    `deny_read` / `allow_read`: paths hidden from / re-opened to sandboxed commands and file
    tools, on top of the defaults (`tools.readmask`). `keep_background`: background jobs keep
    running after the session ends (default: stopped, with a notice)."""

    allow_hosts: list[str] = Field(default_factory=list)
    deny_read: list[str] = Field(default_factory=list)
    allow_read: list[str] = Field(default_factory=list)
    memory_mb: int | None = Field(None, gt=0, le=1024 * 1024)
    max_processes: int = Field(512, gt=0, le=1_000_000)
    cpu_seconds: int = Field(3600, gt=0, le=10_000_000)
    file_size_mb: int = Field(2048, gt=0, le=1024 * 1024 * 1024)
    open_files: int = Field(4096, gt=0, le=1_048_576)
    keep_background: bool = False

    def limits(self) -> Limits:
        """These settings as the sandbox's limits."""
        return Limits(
            memory_mb=default_memory_mb() if self.memory_mb is None else self.memory_mb,
            max_processes=self.max_processes,
            cpu_seconds=self.cpu_seconds,
            file_size_mb=self.file_size_mb,
            open_files=self.open_files,
        )

    @field_validator("deny_read", "allow_read")
    @classmethod
    def _plain_paths(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not entry.strip() or "\0" in entry:
                raise ValueError(f"path entry {entry!r} must be a non-empty path")
        return value

    @field_validator("allow_hosts")
    @classmethod
    def _readable_hosts(cls, value: list[str]) -> list[str]:
        try:
            egress.Spec(egress.Mode.PROXY, AllowList.parse(value).entries).validate()
        except (AllowListError, egress.SpecError) as exc:
            raise ValueError(str(exc)) from None
        return value


class PiiSettings(Strict):
    model: PiiAction = "mask"
    log: PiiAction = "mask"
    display: PiiAction = "off"


class AuditSettings(Strict):
    """The audit gate's thresholds (risk 0–1): at or over `prompt_at` the person is asked, at or
    over `deny_at` the call is refused. They can only be lowered while yagent runs."""

    prompt_at: float = Field(0.5, ge=0, le=1)
    deny_at: float = Field(1.0, ge=0, le=1)
    review_mutating: bool = False


class Config(Strict):
    llm: LLMConfig = LLMConfig()
    audit: AuditSettings = AuditSettings()
    agent: AgentSettings = AgentSettings()
    shell: ShellSettings = ShellSettings()
    sandbox: SandboxSettings = SandboxSettings()
    network: NetworkSettings = NetworkSettings()
    pii: PiiSettings = PiiSettings()
    store: StoreSettings = StoreSettings()
    mcp: dict[str, McpServer] = Field(default_factory=dict)
    hooks: list[HookEntry] = Field(default_factory=list)
    agents: dict[str, CustomAgent] = Field(default_factory=dict)
    side_effects: list[dict[str, Any]] = Field(default_factory=list)  # tools.effects rules
    sources: list[str] = Field(default_factory=list, exclude=True)
    hook_notices: list[str] = Field(default_factory=list, exclude=True)  # hooks that do not run
    # what the workspace's own files contributed and what was withheld (set by `load`)
    project: SkipValidation[projectkeys.ProjectState] = Field(
        default_factory=projectkeys.ProjectState, exclude=True
    )


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    llm = data.get("llm")
    if isinstance(llm, dict) and "api_key" in llm:
        raise ConfigError(
            f"{path}: [llm] api_key is not allowed in a config file; put the key in an "
            "environment variable (api_key_env) or a file (api_key_file)"
        )
    return data


def _read(path: Path) -> dict[str, Any]:
    return _parse(path.read_bytes(), path)


def _build(files: Sequence[tuple[Path, Mapping[str, Any]]], env: Mapping[str, str]) -> Config:
    merged: dict[str, Any] = {}
    sources: list[str] = []
    rules: list[Any] = []
    effects: list[Any] = []
    denied: list[Any] = []
    for path, data in files:
        shell = data.get("shell")
        if isinstance(shell, dict) and isinstance(shell.get("rules"), list):
            rules.extend(shell["rules"])  # rules add up across files; other keys override
        box = data.get("sandbox")
        if isinstance(box, dict) and isinstance(box.get("deny_read"), list):
            denied.extend(box["deny_read"])  # so do hidden paths: a later file never un-hides
        if isinstance(data.get("side_effects"), list):
            effects.extend(data["side_effects"])  # so do side-effect rules
        merged = _merge(merged, data)
        sources.append(str(path))
    if rules:
        merged["shell"]["rules"] = rules
    if effects:
        merged["side_effects"] = effects
    if denied:
        merged["sandbox"] = {**merged["sandbox"], "deny_read": denied}
    overrides = {
        "provider": env.get("YAGENT_PROVIDER"),
        "model": env.get("YAGENT_MODEL"),
        "base_url": env.get("YAGENT_BASE_URL"),
    }
    llm_over = {k: v for k, v in overrides.items() if v}
    if llm_over:
        merged = _merge(merged, {"llm": llm_over})
    if env.get(STORE_URL_ENV):
        merged = _merge(merged, {"store": {"url": env[STORE_URL_ENV]}})
    if llm_over or env.get(STORE_URL_ENV):
        sources.append("environment")
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            configkeys.problem(Config, e["loc"], e["msg"], e["type"], e.get("input"))
            for e in exc.errors()
        )
        where = ", ".join(sources) or "defaults"
        raise ConfigError(f"invalid configuration ({where}): {problems}") from None
    config.sources = sources
    return config


def check(path: Path, raw: bytes) -> None:
    """Refuse `raw` as the content of `path` as `load` would (a `ConfigError`), on its own."""
    _build([(path, _parse(raw, path))], {})


def _policy(config: Config) -> cmdpolicy.Policy | None:
    """The shell rules `config` puts in force (None when they cannot be built)."""
    settings = config.shell
    try:
        return build_policy(
            settings.rules, default=settings.default, builtin=settings.builtin_rules
        )
    except ShellRulesError:
        return None


def load(*, home: Path, workspace: Path, env: Mapping[str, str] | None = None) -> Config:
    """The configuration in force in `workspace` (see the module contract)."""
    env = os.environ if env is None else env
    user_path, project_path = home / "config.toml", workspace / ".yagent" / "config.toml"
    user = [(user_path, _read(user_path))] if user_path.is_file() else []
    project_raw = None
    if project_path.is_file() and not (user and project_path.samefile(user_path)):
        project_raw = project_path.read_bytes()  # read once: what is hashed is what applies
    project = _parse(project_raw, project_path) if project_raw is not None else None
    try:
        rules_raw, remembered = RuleFile(workspace).read()
    except ShellRulesError as exc:
        raise ConfigError(str(exc)) from None
    try:
        claude = claude_hooks(workspace)
        dot_mcp = mcpjson.read(workspace)
    except (claudehooks.ClaudeHooksError, McpSourceError) as exc:
        raise ConfigError(str(exc)) from None
    # every key is checked, trusted or not: a typo is an error whoever wrote it
    config = _build([*user, *([(project_path, project)] if project is not None else [])], env)
    config.hook_notices += claude.notices
    files = ((CONFIG, project_raw), (RULES, rules_raw), (CLAUDE, claude.raw))
    digests = {f: trust.digest(r) for f, r in files if r is not None}
    digests.update(mcpjson.digests(dot_mcp))
    digests.update(projectfolders.digests(workspace))  # .claude/agents, the skills' grants
    if not digests:  # no project file: nothing to trust (a later remembered rule will be)
        config.project = projectkeys.ProjectState(home=home, workspace=workspace)
        return config
    try:
        records = trust.Store(home).records(workspace)
    except trust.TrustError as exc:
        raise ConfigError(str(exc)) from None
    status = {f: trust.status_of(records, f, d) for f, d in digests.items()}
    held: list[projectkeys.Withheld] = []
    if project is not None and status[CONFIG] is not trust.Status.TRUSTED:
        baseline = _build(user, {})
        applied, names = projectkeys.split_config(project, baseline.model_dump(), _policy(baseline))
        held += projectkeys.withheld(CONFIG, status[CONFIG], names)
        config = _build([*user, (project_path, applied)], env)
    claude_applied, claude_held = claude.split(status.get(CLAUDE))
    config.hooks += claude_applied
    held += claude_held
    held += mcpjson.apply(dot_mcp, status.get(trust.MCP_JSON), config.mcp, config.hook_notices)
    if rules_raw is not None and status[RULES] is not trust.Status.TRUSTED:
        remembered, names = projectkeys.split_rules(remembered, _policy(config), "rules")
        held += projectkeys.withheld(RULES, status[RULES], names)
    for folder in projectfolders.FOLDERS:
        if folder in status and status[folder] is not trust.Status.TRUSTED:
            names = projectfolders.withheld(workspace, folder)
            held += projectkeys.withheld(folder, status[folder], names)
    config.project = projectkeys.ProjectState(
        tuple(held), tuple(remembered), digests, status, home, workspace
    )
    return config
