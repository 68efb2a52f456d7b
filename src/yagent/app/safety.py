"""The app's safety parts, built from configuration: preset, command gate, pii surfaces.

`build(config, workspace)` resolves `[agent] preset` (an unknown name never reaches here: the
config refuses it), builds ONE cmdpolicy policy from the built-in rules, the configured
`[[shell.rules]]` (user then project) and the project's remembered rules (those `config.load` let
apply: allow rules only from a trusted file), and the pii policy from `[pii]`. A rule yagent
appends keeps the file trusted only if it was trusted (or absent) before (`trust.carry_over`).
Anything that does not hold — a rule whose examples disagree, a duplicate rule name, an unreadable
rules file, a configuration loaded for another workspace — is a `ConfigError` naming it: the app
does not start on a rule set it could not check (nor on `[sandbox] allow_hosts` naming a loopback
or private host, which the proxy could never reach: `localnet.refuse_local`). A non-empty
`[sandbox] allow_hosts` turns a sandboxed preset's egress into PROXY (the allow-list, the sandbox's
own loopback bypassed) and builds the egress proxy the app serves for its lifetime; empty keeps the
preset as shipped (network cut). `[sandbox] keep_background` leaves the session sandbox's
background jobs running when the app closes (`tools.jobs`). `read_mask` is what sandboxed commands
and file tools cannot read (`tools.readmask` defaults with `[sandbox] deny_read` / `allow_read`);
the command gate and the workspace guard are given the same one. `for_log` / `for_display` are the
pii passes for event payloads. `local_net` is the netguard opening `[network] allow_local` gives
the browser and web_fetch (strict when empty); `with_allow_local` adds the CLI's `--allow-local`
entries for one run (a bad entry is a ConfigError naming it); `session_openings` adds what the
person opened for the project for good (`tools.localask`: "always" to the local-opening question).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from yagent.app import trust
from yagent.app.config import Config, ConfigError
from yagent.app.network import NetworkSettings
from yagent.kernel.confine import egress, netguard, pii
from yagent.kernel.confine.sandbox import Level
from yagent.kernel.judge import preset as presets
from yagent.tools import outbound
from yagent.tools.commands import CommandGate
from yagent.tools.egress.allowlist import AllowList, AllowListError
from yagent.tools.egress.proxyserver import LOOPBACK_BYPASS, EgressProxy
from yagent.tools.localask import Openings
from yagent.tools.localnet import LocalNetError, allow_of, refuse_local
from yagent.tools.readmask import ReadMask
from yagent.tools.settings import Settings, SettingsError
from yagent.tools.shellrules import RuleFile, ShellRulesError, build_policy


@dataclass(frozen=True, slots=True)
class Safety:
    preset: presets.Preset
    commands: CommandGate
    pii: pii.PolicyStore
    egress_proxy: EgressProxy | None = None
    local_net: netguard.Allow = netguard.STRICT

    def for_log(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """An event payload as the rollout, the session store and the trace may keep it."""
        return outbound.for_surface(payload, pii.Surface.LOG, self.pii)

    def for_display(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """An event payload as the terminal may show it."""
        return outbound.for_surface(payload, pii.Surface.DISPLAY, self.pii)

    def for_log_and_display(
        self, payload: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(`for_log`, `for_display`) of one payload, two copies (an observer that edits its own
        does not change the display's). One policy snapshot decides: a payload without personal
        data — the common case — is judged with one whole-payload scan for both surfaces,
        whatever their actions (it leaves both unchanged); one with a finding is judged by each
        surface's own policy, once for both when they act alike (the same text comes out)."""
        before = self.pii.snapshot()
        policy = before.policy
        log, display = policy.log, policy.display
        if (log is display is pii.Action.OFF) or pii.is_clean(payload, policy.kinds):
            return dict(payload), dict(payload)
        logged = self.for_log(payload)
        if log is display and self.pii.snapshot().generation == before.generation:
            return logged, dict(logged)  # not changed meanwhile: the log's judgement holds
        return logged, self.for_display(payload)


def build(config: Config, workspace: Path) -> Safety:
    chosen = presets.BUILTIN.resolve(config.agent.preset)
    project = config.project
    if project.workspace is not None and os.path.realpath(project.workspace) != os.path.realpath(
        workspace
    ):
        raise ConfigError(f"configuration loaded for {project.workspace}, not for {workspace}")
    rules = RuleFile(workspace, on_append=_carry_trust(project.home, workspace))
    try:
        policy = build_policy(
            [*config.shell.rules, *project.remembered],
            default=config.shell.default,
            builtin=config.shell.builtin_rules,
        )
    except ShellRulesError as exc:
        where = ", ".join(config.sources) or "defaults"
        raise ConfigError(f"{exc} (rules from {where} and {rules.path})") from None
    settings = config.pii
    store = pii.PolicyStore(outbound.policy_of(settings.model, settings.log, settings.display))
    chosen, proxy = with_egress(chosen, config.sandbox.allow_hosts)
    reads = read_mask(config, workspace)
    gate = CommandGate(
        policy,
        chosen,
        workspace,
        rules=rules,
        egress_proxy=proxy,
        keep_background=config.sandbox.keep_background,
        limits=config.sandbox.limits(),
        reads=reads,
    )
    return Safety(chosen, gate, store, proxy, allow_of(config.network.allow_local))


def with_allow_local(config: Config, entries: Sequence[str]) -> Config:
    """`config` with `--allow-local` entries added to `[network] allow_local` (this run only)."""
    if not entries:
        return config
    try:
        network = NetworkSettings(allow_local=[*config.network.allow_local, *entries])
    except ValidationError as exc:
        problems = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise ConfigError(f"--allow-local: {problems}") from None
    return config.model_copy(update={"network": network})


def read_mask(config: Config, workspace: Path) -> ReadMask:
    """What no sandboxed command or file tool reads in `workspace` under `config` — the model
    keys of `[llm]` and of every `[llm.providers.*]` section included (their files hidden, their
    variables kept from commands), whatever those are named."""
    box = config.sandbox
    llm = config.llm
    sections = llm.providers.values()
    files = [f for f in (llm.api_key_file, *(s.api_key_file for s in sections)) if f]
    names = [n for n in (llm.api_key_env, *(s.api_key_env for s in sections)) if n]
    return ReadMask(
        Path(workspace),
        deny=tuple(box.deny_read),
        allow=tuple(box.allow_read),
        keys=tuple(os.path.abspath(os.path.expanduser(f)) for f in files),
        key_env=tuple(dict.fromkeys(names)),
    )


def _carry_trust(
    home: Path | None, workspace: Path
) -> Callable[[bytes | None, bytes], None] | None:
    """After yagent appends a remembered rule (the person just consented), the new content stays
    trusted — only if the old one was trusted or absent (`trust.Store.carry_over`)."""
    if home is None:
        return None  # a configuration not loaded from a home: nothing records trust

    def carry(before: bytes | None, after: bytes) -> None:
        try:
            trust.Store(home).carry_over(workspace, trust.RULES_FILE, before, after)
        except (trust.TrustError, OSError) as exc:
            raise ShellRulesError(f"rule written, but its trust was not recorded: {exc}") from exc

    return carry


def with_egress(
    preset: presets.Preset, hosts: Sequence[str]
) -> tuple[presets.Preset, EgressProxy | None]:
    """`preset` with PROXY egress over `hosts`, and the proxy for it; unchanged (and no proxy)
    when the list is empty or the preset runs commands on the host (its network is open)."""
    try:  # a local host can never be reached through the proxy: refused, not ignored
        allowed = refuse_local(AllowList.parse(hosts))
    except AllowListError as exc:
        raise ConfigError(f"[sandbox] {exc}") from None
    if not allowed or preset.level < Level.NAMESPACES:
        return preset, None
    spec = egress.Spec(egress.Mode.PROXY, allowed.entries, LOOPBACK_BYPASS)
    try:
        proxied = dataclasses.replace(preset, egress=spec)
        proxied.check()
    except presets.InvalidPresetError as exc:
        raise ConfigError(f"[sandbox] allow_hosts: {exc}") from None
    return proxied, EgressProxy(allowed)


def session_openings(configured: netguard.Allow, settings: Settings, workspace: Path) -> Openings:
    """What a session's browser and web_fetch start with: `configured` (`[network] allow_local`,
    `--allow-local`) plus what the person opened for this project for good ("always" to the
    question of `tools.localask`, kept in their own settings file: it needs no trust). An
    unreadable entry there is a `ConfigError` naming the file."""
    try:
        remembered = allow_of(settings.local_openings(workspace)).hosts
    except (SettingsError, LocalNetError) as exc:
        raise ConfigError(f"{settings.path}: local_openings: {exc}") from None
    return Openings(hosts=configured.hosts | remembered)
