"""The command gate: how yagent judges a shell command line and where it lets it run.

Guarantees:
- `approval(line)` is `cmdpolicy.decide_command` on the bash AST with the active rules, relative
  operands placed in the workspace and `~` at `$HOME`, links followed, workspace scripts read
  (ADR 0028): FORBIDDEN is a deny, PROMPT a question, ALLOW a pass. A line cmdpolicy cannot
  judge (`UnjudgeableError`) is a question, never an allow. A URL on the line (in any command
  the line can run) that netguard refuses even with loopback and private space open — cloud
  metadata, link-local, numeric spellings, blocked names — makes the line FORBIDDEN.
- `judge(...)` puts that approval through `gatecheck` with the active preset's requirement and
  approval mode: FORBIDDEN denies in every mode (also under -y / standing permissions); a
  question is asked (ASK), denied (ALLOWLIST), or passed unasked (AUTO in a sandbox, NEVER_ASK);
  a standing permission (-y, "always", "skip all", project) answers a question the gate would
  ask; a requirement no registered sandbox meets denies (no downgrade).
- Except a line the forbidden rules cannot be checked against — a command name or code known
  only at run time, a run-time word where a forbidden rule's word could stand (`rm -rf $X`), or a
  line cmdpolicy cannot read: it is never run without a person's answer. Where a standing
  permission or the preset would have run it unasked, it is a question put to a person saying
  so; with nobody to ask it is refused (docs/adr/0031-run-time-words-are-not-auto-approved.md).
- `confinement()` names the sandbox the same gate picks for an approved call, and how to launch
  a command in it: bubblewrap for a NAMESPACES preset (workspace writable, every `.git` and
  `.yagent` at any depth read-only, what `tools.readmask` hides — yagent's home and model key
  files, credential stores, other homes, `[sandbox] deny_read` — invisible, private /tmp, network
  per the preset's egress; secrets-looking variables, yagent's model keys' variables whatever
  their names, and a measured test run's coverage start-up dropped from the environment), the
  host itself for an IN_PROCESS preset. A gate `confined(areas)` to a worker's declared writable
  areas binds the workspace read-only and only those areas writable; under an IN_PROCESS preset
  it refuses to run commands at all (the host cannot confine them), and an area bwrap refuses
  (missing, a symbolic link on the way) leaves no sandbox, so commands are denied. Under a PROXY
  egress preset with an egress proxy, the command runs behind `sandboxbridge` inside the sandbox,
  its proxy variables naming the bridge (`proxyserver.route`); the network stays unshared, so the
  proxy (allow-list × netguard) is the only way out. A proxy that is not running refuses the run.
- Every sandboxed command runs under the gate's resource `limits` (default `sandbox.Limits()`):
  memory, CPU time, file size and open files per process, and processes per sandbox — the gate's
  (and each confined worker's own), background runs included. The confinement carries the
  `supervision` a foreground run is polled with, so a command at its process limit is killed at
  once and a run a limit ended says which.
- `remember(line)` turns "don't ask again" into allow rules, one per exact command the line runs
  that needed the question, appended to the project's rules file and active at once — all or
  nothing: a line with something a rule cannot cover (a write redirection, dynamic code, a
  run-time word, environment steering) writes no rule at all, and the answer says why.
Bubblewrap is probed once, lazily (off the event loop): unusable ⇒ not registered ⇒ denied.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from yagent.kernel.confine import cmdpolicy, netguard, sandbox
from yagent.kernel.judge import invoke, toolfail
from yagent.kernel.judge.gatecheck import Action, Judgement
from yagent.kernel.judge.preset import Preset
from yagent.tools.egress import proxyserver
from yagent.tools.guard import PROTECTED_PATHS
from yagent.tools.jobs import SessionSandbox
from yagent.tools.readmask import ReadMask, tool_paths_under
from yagent.tools.readpatterns import ReadPatternError
from yagent.tools.shellrules import RuleFile, ShellRulesError, remembered_rule

STAGE = "command_policy"
PROTECTED = PROTECTED_PATHS
"""Workspace paths a sandboxed command may read but not write: the repository's metadata (hooks
and config there run on the host later) and yagent's own configuration (its rules)."""
SHALLOW = ("node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache")
"""Directories the sandbox's search for nested `.git`/`.yagent` looks into two levels only (big,
generated, rarely holding repositories — but never skipped)."""
SECRET_ENV = ("*API_KEY*", "*APIKEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "AWS_*")
"""Variables not passed into the sandbox (a seam): a confined command needs no credentials."""
HOST_TOOLING_ENV = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")
"""Not passed into the sandbox either: coverage.py's start-up in every Python child of a measured
test run (`make cover`). Inside, it would measure the sandbox's own helpers (the job supervisor,
the egress bridge) within the program's memory and process limits, and could not write its data
through the read-only root (a traceback on the command's stderr)."""
_URL = re.compile(r"https?://[^\s'\"<>|;&()]+", re.IGNORECASE)
# Open the classes an Allow may open: what remains refused is never a legitimate shell target.
_SCREEN = netguard.Allow(loopback=True, private=True)

Launcher = Callable[[Sequence[str]], list[str]]
Approval = invoke.Verdict | invoke.Decision
ProviderFactory = Callable[[], Sequence[sandbox.Provider]]


MASKED = ("/tmp", "/run")  # the sandbox mounts empty ones; tools installed there must be shown


def masked_tool_paths(
    env: Mapping[str, str] | None = None, hidden: Sequence[Path] = ()
) -> tuple[str, ...]:
    """This interpreter's prefixes and the PATH directories that live under a directory the
    sandbox masks (a checkout or virtualenv under /tmp, an interpreter in a hidden home): bound
    back read-only, so `python` and the tools on PATH still exist inside the sandbox."""
    env = os.environ if env is None else env
    candidates = [sys.prefix, sys.base_prefix, *env.get("PATH", "").split(os.pathsep)]
    return tool_paths_under([*map(Path, MASKED), *hidden], candidates)


@dataclass(frozen=True, slots=True)
class Confinement:
    """Where an approved command runs: the provider's name and level, and how to launch it."""

    provider: str
    level: sandbox.Level
    launcher: Launcher | None
    env: Mapping[str, str] | None
    session: SessionSandbox | None = None
    """The session's long-lived sandbox (its commands and background jobs run there), when the
    gate keeps one: bubblewrap, the whole workspace, no egress proxy in between."""
    supervision: sandbox.Supervision | None = None
    """What the host polls while a foreground command runs (limits, the sandbox's task count)."""

    @property
    def sandboxed(self) -> bool:
        return self.level >= sandbox.Level.NAMESPACES


@dataclass(frozen=True, slots=True)
class Remembered:
    rules: tuple[cmdpolicy.PrefixRule, ...]
    skipped: tuple[str, ...]


def sandbox_env(env: Mapping[str, str], keys: Collection[str] = ()) -> dict[str, str]:
    """`env` without the variables `SECRET_ENV` names (matched case-insensitively), nor
    `HOST_TOOLING_ENV`, nor `keys` (yagent's own model keys' variables: `ReadMask.key_env`)."""
    return {
        k: v
        for k, v in env.items()
        if not any(fnmatch.fnmatchcase(k.upper(), p) for p in SECRET_ENV)
        and k not in (*HOST_TOOLING_ENV, *keys)
    }


class CommandGate:
    """cmdpolicy × gatecheck for one workspace and one preset."""

    def __init__(
        self,
        policy: cmdpolicy.Policy,
        preset: Preset,
        workspace: Path,
        *,
        rules: RuleFile | None = None,
        providers: ProviderFactory | None = None,
        areas: Sequence[str] | None = None,
        egress_proxy: proxyserver.EgressProxy | None = None,
        keep_background: bool = False,
        limits: sandbox.Limits | None = None,
        reads: ReadMask | None = None,
    ) -> None:
        self._policy = policy
        self.keep_background = keep_background
        self.limits = sandbox.Limits() if limits is None else limits
        self.reads = reads or ReadMask(workspace)
        self.egress_proxy = egress_proxy
        self.preset = preset
        self.workspace = workspace
        self._rules = rules
        self._providers = providers or self._default_providers
        self.areas = None if areas is None else tuple(areas)  # None: the whole workspace
        self._registry: sandbox.Registry | None = None
        self._unavailable = ""
        self._lock = anyio.Lock()
        self.session: SessionSandbox | None = None

    @property
    def policy(self) -> cmdpolicy.Policy:
        return self._policy

    def confined(self, areas: Sequence[str]) -> CommandGate:
        """This gate for a worker confined to `areas` (workspace-relative, existing, no symbolic
        link on the way): its sandbox keeps the rest of the workspace read-only."""
        return CommandGate(
            self._policy,
            self.preset,
            self.workspace,
            rules=self._rules,
            areas=areas,
            egress_proxy=self.egress_proxy,
            limits=self.limits,
            reads=self.reads,
        )

    # -- judging ------------------------------------------------------------------------------
    def approval(self, line: str) -> invoke.Verdict:
        """The approval layer's word on `line` (see the module contract)."""
        return self._approval(line)[0]

    def _approval(self, line: str) -> tuple[invoke.Verdict, str]:
        """The approval, and why the forbidden rules could not be checked ("" when they were)."""
        try:
            home, cwd, hidden = os.environ.get("HOME"), str(self.workspace), self.reads.denies
            verdict = cmdpolicy.decide_command(
                self._policy, line, cwd=cwd, home=home, disk=True, readable=lambda p: not hidden(p)
            )
        except cmdpolicy.UnjudgeableError as exc:
            reason = f"cmdpolicy cannot judge this command line ({exc.reason}); a person must"
            return invoke.Verdict.prompt(reason, stage=STAGE), reason
        refused = _refused_urls(verdict)
        if refused:
            return invoke.Verdict.deny(
                "forbidden: the command line reaches an address netguard never opens: "
                + "; ".join(refused),
                kind=toolfail.Kind.FORBIDDEN,
                stage=STAGE,
            ), ""
        unchecked = "; ".join(s.detail for s in verdict.uncheckable)
        return verdict.to_invoke(STAGE), unchecked

    async def judge(self, line: str, *, danger: str | None, standing: bool) -> invoke.Verdict:
        """The joint verdict for running `line`; `danger` is the workspace guard's reason."""
        approval, unchecked = self._approval(line)
        if danger and approval.decision is not invoke.Decision.DENY:
            said = approval.reason if approval.decision is invoke.Decision.PROMPT else ""
            approval = invoke.Verdict.prompt("\n".join(filter(None, (said, danger))), stage=STAGE)
        judgement = await self._judgement(approval)
        unasked = judgement.action is Action.RUN and approval.decision is invoke.Decision.PROMPT
        if unchecked and (unasked or (judgement.action is Action.ASK and standing)):
            return invoke.Verdict.prompt(_person_only(approval.reason, unchecked), stage=STAGE)
        if judgement.action is Action.ASK and standing:
            judgement = await self._judgement(invoke.Decision.ALLOW)
        verdict = judgement.to_verdict(STAGE)
        if verdict.decision is not invoke.Decision.DENY:
            return verdict
        reason = verdict.reason
        if self._unavailable:
            reason += f" (bubblewrap is unusable here: {self._unavailable})"
        # PERMISSION, not cmdpolicy's FORBIDDEN: the failure table's FORBIDDEN guidance speaks of
        # tools missing from the catalog, which would mislead the model here.
        return invoke.Verdict.deny(reason, kind=_PERM, retryable=False, stage=STAGE)

    async def confinement(self) -> Confinement:
        """The sandbox an approved command runs in (the provider the gate picks)."""
        judgement = await self._judgement(invoke.Decision.ALLOW)
        provider = judgement.provider
        if judgement.action is not Action.RUN or provider is None:
            raise toolfail.ToolFailure(toolfail.Kind.PERMISSION, judgement.reason)
        egress = self.preset.egress.mode
        if isinstance(provider, sandbox.BwrapProvider):
            env = provider.program_env(sandbox_env(os.environ, self.reads.key_env))
            launcher: Launcher = functools.partial(provider.wrap, egress=egress)
            if egress is sandbox.EgressMode.PROXY and self.egress_proxy is not None:
                try:  # the bridge inside, the proxy variables naming it, the proxy's socket bound
                    env, launcher = proxyserver.route(
                        self.egress_proxy, self.preset.egress, env, launcher
                    )
                except proxyserver.ProxyError as exc:
                    raise toolfail.ToolFailure(toolfail.Kind.PERMISSION, str(exc)) from exc
                return Confinement(
                    provider.name, provider.level, launcher, env, None, provider.supervision()
                )
            if self.areas is None:  # the whole workspace: the session's one sandbox
                if self.session is None:
                    watch = provider.supervision()
                    self.session = SessionSandbox(
                        launcher,
                        env,
                        self.workspace,
                        keep=self.keep_background,
                        explain=watch.explain if watch is not None else None,
                    )
                return Confinement(
                    provider.name,
                    provider.level,
                    launcher,
                    env,
                    self.session,
                    provider.supervision(),
                )
            return Confinement(
                provider.name, provider.level, launcher, env, None, provider.supervision()
            )
        if provider.level >= sandbox.Level.NAMESPACES:  # a sandbox yagent cannot launch into
            raise toolfail.ToolFailure(
                toolfail.Kind.PERMISSION, f"sandbox {provider.name!r} cannot run shell commands"
            )
        if self.areas is not None:  # the host cannot keep a command inside declared areas
            raise toolfail.ToolFailure(
                toolfail.Kind.PERMISSION,
                f"preset {self.preset.name!r} runs commands on the host: they cannot be confined "
                "to this worker's declared areas",
            )
        return Confinement(provider.name, provider.level, None, None)

    async def _judgement(self, approval: Approval) -> Judgement:
        gate = self.preset.gate(await self.registry())
        return gate.judge(approval, self.preset.requirement)

    async def registry(self) -> sandbox.Registry:
        async with self._lock:
            if self._registry is None:
                providers = await anyio.to_thread.run_sync(self._providers)
                self._registry = sandbox.Registry(providers)
            return self._registry

    def _default_providers(self) -> list[sandbox.Provider]:
        found: list[sandbox.Provider] = [sandbox.HostProvider(self.workspace)]
        if self.preset.level < sandbox.Level.NAMESPACES:
            return found  # nothing asks for more: do not touch the workspace with a probe
        try:
            proxy = self.egress_proxy
            hidden = self.reads.hidden()
            bridge = proxyserver.bridge_paths()  # the egress bridge and the job host run from there
            bwrap = sandbox.BwrapProvider(
                self.workspace,
                protected=PROTECTED,
                protected_names=PROTECTED,
                shallow=SHALLOW,
                hidden=hidden,
                readable=(*masked_tool_paths(hidden=hidden), *self.reads.shown(), *bridge),
                proxy_dir=proxy.directory if proxy is not None else None,
                limits=self.limits,
                **self._areas(),
            )
            bwrap.probe()
        except sandbox.SandboxError as exc:
            self._unavailable = str(exc)
            return found
        except ReadPatternError as exc:  # what must be hidden is unknown: no provider at all
            self._unavailable = str(exc)
            return []
        found.append(bwrap)
        return found

    def _areas(self) -> dict[str, Any]:
        if self.areas is None:
            return {}
        root = Path(os.path.realpath(self.workspace))
        return {"workspace_writable": False, "writable": [root / a for a in self.areas]}

    # -- remembering --------------------------------------------------------------------------
    def remember(self, line: str) -> Remembered:
        """Allow rules for the exact commands of `line` that needed a question (see contract)."""
        try:
            verdict = cmdpolicy.decide_command(self._policy, line)
        except cmdpolicy.UnjudgeableError as exc:
            return Remembered((), (f"the line cannot be judged: {exc.reason}",))
        skipped = [f"{s} (no rule can cover it)" for s in verdict.signals]
        rules: list[cmdpolicy.PrefixRule] = []
        when = time.strftime("%Y-%m-%d")
        for command in verdict.commands:
            if command.decision is not cmdpolicy.Permission.PROMPT:
                continue
            if command.signals or not command.exact:
                facts = ", ".join(str(s) for s in command.signals) or "a run-time word"
                skipped.append(f"{' '.join(command.argv)}: {facts}")
                continue
            name = "remembered-" + hashlib.sha256("\0".join(command.argv).encode()).hexdigest()[:12]
            if all(r.name != name for r in (*self._policy.rules, *rules)):
                rules.append(remembered_rule(command.argv, name, when))
        if skipped or not rules:  # all or nothing: a rule that would not make THIS line pass
            return Remembered((), tuple(skipped))  # would only widen what runs unasked
        try:
            policy = self._policy.with_rules(*rules)
            if self._rules is not None:
                self._rules.append(rules)
        except (cmdpolicy.PolicyError, ShellRulesError, OSError) as exc:
            return Remembered((), (*skipped, f"not written: {exc}"))
        self._policy = policy
        return Remembered(tuple(rules), tuple(skipped))


_PERM = toolfail.Kind.PERMISSION


def _person_only(question: str, unchecked: str) -> str:
    """The question for a line no standing permission may answer (ADR 0031)."""
    return (
        f"{question}\nOnly a person can approve this line: whether a forbidden rule applies is "
        f"known only when it runs ({unchecked}). -y and standing permissions do not answer it "
        "(docs/adr/0031-run-time-words-are-not-auto-approved.md); spell the command and its "
        "operands out, or ask the person."
    )


def _refused_urls(verdict: cmdpolicy.Verdict) -> list[str]:
    guard = netguard.Guard()
    refused: list[str] = []
    for command in verdict.commands:
        for word in command.argv:
            for url in _URL.findall(word):
                try:
                    guard.screen(url, _SCREEN)
                except (netguard.NameBlockedError, netguard.AddressBlockedError) as exc:
                    refused.append(f"{url}: {exc.reason}")
                except netguard.BlockedError:
                    continue  # not a URL netguard can read: the rules judge the command
    return refused
