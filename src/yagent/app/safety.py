"""The app's safety parts, built from configuration: preset, command gate, pii surfaces.

`build(config, workspace)` resolves `[agent] preset` (an unknown name never reaches here: the
config refuses it), builds ONE cmdpolicy policy from the built-in rules, the configured
`[[shell.rules]]` (user then project) and the project's remembered rules, and the pii policy from
`[pii]`. Anything that does not hold — a rule whose examples disagree, a duplicate rule name, an
unreadable rules file — is a `ConfigError` naming it: the app does not start on a rule set it
could not check. `for_log` / `for_display` are the pii passes for event payloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.app.config import Config, ConfigError
from yagent.kernel import pii
from yagent.kernel import preset as presets
from yagent.tools import outbound
from yagent.tools.commands import CommandGate
from yagent.tools.shellrules import RuleFile, ShellRulesError, build_policy


@dataclass(frozen=True, slots=True)
class Safety:
    preset: presets.Preset
    commands: CommandGate
    pii: pii.PolicyStore

    def for_log(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """An event payload as the rollout, the session store and the trace may keep it."""
        return outbound.for_surface(payload, pii.Surface.LOG, self.pii)

    def for_display(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """An event payload as the terminal may show it."""
        return outbound.for_surface(payload, pii.Surface.DISPLAY, self.pii)


def build(config: Config, workspace: Path) -> Safety:
    chosen = presets.BUILTIN.resolve(config.agent.preset)
    rules = RuleFile(workspace)
    try:
        policy = build_policy(
            [*config.shell.rules, *rules.entries()],
            default=config.shell.default,
            builtin=config.shell.builtin_rules,
        )
    except ShellRulesError as exc:
        where = ", ".join(config.sources) or "defaults"
        raise ConfigError(f"{exc} (rules from {where} and {rules.path})") from None
    settings = config.pii
    store = pii.PolicyStore(outbound.policy_of(settings.model, settings.log, settings.display))
    return Safety(chosen, CommandGate(policy, chosen, workspace, rules=rules), store)
