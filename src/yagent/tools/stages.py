"""The workspace guard as rings of the judgement chain: command policy, boundary, authorization —
and the grant ring, which says why a known tool is not this agent's.

The boundary ring first refuses (DENY, whatever stands) a call whose paths lie in what the
sandbox hides (`WorkspaceGuard.unreadable`). Boundary and authorization return PROMPT with the
guard's reason when a person must be asked and no standing permission covers the call, ALLOW
otherwise. A tool the surface does not know is not theirs to judge (the tooldisclose gate before
them refuses it). A standing permission is looked up (the person's settings file) only when a
question would otherwise be asked: a call with nothing to ask costs no lookup, and the answer is
the same as looking it up first (`tests/tools/test_ring_standing.py`).

The command-policy ring (present when the surface has a `CommandGate`) is the authorization ring
for every spec with a `command_arg`: it judges the command line (cmdpolicy × gatecheck) and folds
the guard's danger reasons into its one question, so a person is asked once per call, and
AuthorizationStage leaves those specs to it. Under a preset whose approval mode is allowlist
(`read-only`) it also denies every tool whose effect is WRITE — built-in file writers and MCP tools
that do not declare `readOnlyHint` alike: nothing that writes runs unreviewed there, and nobody is
asked.
"""

from __future__ import annotations

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.gatecheck import ApprovalMode
from yagent.kernel.judge.invoke import Call, Verdict
from yagent.tools.commands import STAGE, CommandGate
from yagent.tools.toolview import ToolView
from yagent.toolspec import Effect
from yagent.toolspec.profiles import PROFILES


class GrantStage:
    """A yagent tool this run's profile does not grant (or this run switched off) is refused
    naming that reason and the agents that have it — not as a tool that does not exist. Names
    yagent does not know are left to the tooldisclose gate after it."""

    name = "profile"

    def __init__(self, surface: ToolView) -> None:
        self._surface = surface

    async def judge(self, call: Call) -> Verdict:
        surface = self._surface
        spec = None if surface.spec(call.tool) is not None else surface.known(call.tool)
        if spec is None:
            return Verdict.allow(self.name)
        own = surface.profile
        if own.grants(spec):
            reason = f"{call.tool} is switched off in this run (-Y or no deferred loading)"
        else:
            holders = sorted(p.name for p in PROFILES.values() if p.grants(spec))
            have = f"agents that have it: {', '.join(holders)}" if holders else "no agent has it"
            reason = (
                f"{call.tool} is not one of the {own.name} agent's tools ({have}); do not call "
                "it here: delegate to an agent that has it, or use your own tools"
            )
        return Verdict.deny(reason, kind=toolfail.Kind.PERMISSION, retryable=False, stage=self.name)


class CommandPolicyStage:
    name = STAGE

    def __init__(self, surface: ToolView, gate: CommandGate) -> None:
        self._surface = surface
        self._gate = gate

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        if spec is None:
            return Verdict.allow(self.name)
        if not spec.command_arg:
            if spec.effect is Effect.WRITE and self._gate.preset.mode is ApprovalMode.ALLOWLIST:
                return Verdict.deny(
                    f"preset {self._gate.preset.name!r} runs only allow-listed commands and "
                    f"writes nothing: {spec.name} "
                    + (
                        "may change things (it is not declared read-only)"
                        if spec.external
                        else "writes files"
                    ),
                    kind=toolfail.Kind.PERMISSION,
                    retryable=False,
                    stage=self.name,
                )
            return Verdict.allow(self.name)
        command = call.args.get(spec.command_arg)
        if not isinstance(command, str):
            return Verdict.deny(
                f"{spec.command_arg} must be a string",
                kind=toolfail.Kind.INVALID_ARGS,
                stage=self.name,
            )
        guard = self._surface.guard
        return await self._gate.judge(
            command, danger=guard.danger(spec, call.args), standing=guard.standing(spec)
        )


class BoundaryStage:
    name = "workspace_boundary"

    def __init__(self, surface: ToolView) -> None:
        self._surface = surface

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        guard = self._surface.guard
        if spec is None:
            return Verdict.allow(self.name)
        hidden = guard.unreadable(spec, call.args)
        if hidden:
            return Verdict.deny(
                hidden, kind=toolfail.Kind.PERMISSION, retryable=False, stage=self.name
            )
        too_long = guard.unresolvable(spec, call.args)
        if too_long:  # the model's bad argument, as the file tools call a path no system takes
            return Verdict.deny(
                too_long, kind=toolfail.Kind.INVALID_ARGS, retryable=False, stage=self.name
            )
        protected = guard.protected(spec, call.args)
        if protected:
            return Verdict.prompt(protected, stage=self.name)
        reason = guard.boundary(spec, call.args)
        if reason is None or guard.standing(spec):  # standing only answers a question
            return Verdict.allow(self.name)
        return Verdict.prompt(reason, stage=self.name)


class AuthorizationStage:
    name = "authorization"

    def __init__(self, surface: ToolView) -> None:
        self._surface = surface

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        guard = self._surface.guard
        if (
            spec is None
            or self._surface.judges_commands(spec)
            or not guard.can_be_dangerous(spec)  # nothing to ask: no standing to look up
            or guard.standing(spec)
        ):
            return Verdict.allow(self.name)
        reason = guard.danger(spec, call.args)
        return Verdict.prompt(reason, stage=self.name) if reason else Verdict.allow(self.name)
