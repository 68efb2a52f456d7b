"""gatecheck: both layers must agree, in the documented order, and judged = executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command
from yagent.kernel.confine.sandbox import EgressMode, HostProvider, Level, Program, Registry, Result
from yagent.kernel.judge import invoke, toolfail
from yagent.kernel.judge.gatecheck import (
    Action,
    ApprovalMode,
    Gate,
    Judgement,
    Managed,
    Requirement,
)

pytestmark = pytest.mark.anyio

ALLOW, PROMPT, DENY = invoke.Decision.ALLOW, invoke.Decision.PROMPT, invoke.Decision.DENY
NS_DENIED = Requirement(Level.NAMESPACES, EgressMode.DENIED)
HOST_OPEN = Requirement(Level.IN_PROCESS, EgressMode.UNRESTRICTED)
VM = Requirement(Level.HARDWARE, EgressMode.UNRESTRICTED)


class Recording:
    """A backend that records what it ran."""

    def __init__(self, name: str, level: Level, egress: EgressMode | None = None) -> None:
        self._name, self._level, self._egress = name, level, egress
        self.ran: list[Program] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def level(self) -> Level:
        return self._level

    def egress(self) -> EgressMode:
        return self._egress if self._egress is not None else EgressMode.UNRESTRICTED

    async def run(self, program: Program) -> Result:
        self.ran.append(program)
        return Result(0, b"ran", provider=self._name)


@pytest.fixture
def ns() -> Recording:
    return Recording("ns", Level.NAMESPACES, EgressMode.DENIED)


@pytest.fixture
def host() -> Recording:
    return Recording("host", Level.IN_PROCESS)


@pytest.fixture
def registry(ns: Recording, host: Recording) -> Registry:
    return Registry([ns, host])


POLICY = Policy(
    [
        PrefixRule("ls", ("ls",), Permission.ALLOW, match=("ls -la",)),
        PrefixRule("rm", ("rm",), Permission.FORBIDDEN, match=("rm -rf /",)),
    ]
)


@pytest.mark.parametrize("mode", list(ApprovalMode))
@pytest.mark.parametrize("plan", [False, True])
@pytest.mark.parametrize("requirement", [NS_DENIED, HOST_OPEN, VM])
def test_an_approval_denial_is_final_whatever_the_sandbox_mode_or_plan(
    registry: Registry, mode: ApprovalMode, plan: bool, requirement: Requirement
) -> None:
    judgement = Gate(registry, mode=mode, plan=plan).judge(
        invoke.Verdict.deny("rm is forbidden", kind=toolfail.Kind.FORBIDDEN), requirement
    )
    assert judgement.action is Action.DENY
    assert "rm is forbidden" in judgement.reason
    verdict = judgement.to_verdict()
    assert verdict.decision is DENY
    assert verdict.kind is toolfail.Kind.FORBIDDEN


def test_review_asks_before_looking_at_the_sandbox(registry: Registry) -> None:
    # No provider offers HARDWARE; a person is still asked rather than the call being dropped.
    judgement = Gate(registry, mode=ApprovalMode.ASK).judge(
        invoke.Verdict.prompt("writes a file"), VM
    )
    assert judgement.action is Action.ASK
    assert judgement.provider is None
    assert "writes a file" in judgement.reason
    assert judgement.to_verdict().decision is PROMPT


def test_approved_runs_on_the_weakest_provider_that_satisfies(
    registry: Registry, ns: Recording, host: Recording
) -> None:
    gate = Gate(registry)
    assert gate.judge(ALLOW, NS_DENIED).provider is ns
    assert gate.judge(ALLOW, HOST_OPEN).provider is host
    assert gate.judge(ALLOW, HOST_OPEN).to_verdict().allowed


def test_approved_without_a_strong_enough_provider_is_denied_not_downgraded(
    registry: Registry,
) -> None:
    judgement = Gate(registry).judge(ALLOW, VM)
    assert judgement.action is Action.DENY
    assert "refusing to run on a weaker one" in judgement.reason
    assert judgement.to_verdict().kind is toolfail.Kind.PERMISSION


def test_egress_is_part_of_the_requirement(host: Recording) -> None:
    judgement = Gate(Registry([host])).judge(ALLOW, Requirement(Level.IN_PROCESS, EgressMode.PROXY))
    assert judgement.action is Action.DENY


@pytest.mark.parametrize(
    ("mode", "requirement", "action"),
    [
        (ApprovalMode.ALLOWLIST, NS_DENIED, Action.DENY),
        (ApprovalMode.ASK, NS_DENIED, Action.ASK),
        (ApprovalMode.AUTO, NS_DENIED, Action.RUN),
        (ApprovalMode.AUTO, HOST_OPEN, Action.ASK),
        (ApprovalMode.NEVER_ASK, HOST_OPEN, Action.RUN),
        (ApprovalMode.NEVER_ASK, VM, Action.DENY),
        (ApprovalMode.AUTO, VM, Action.DENY),
    ],
)
def test_what_review_means_in_each_mode(
    registry: Registry, mode: ApprovalMode, requirement: Requirement, action: Action
) -> None:
    judgement = Gate(registry, mode=mode).judge(invoke.Verdict.prompt("why"), requirement)
    assert judgement.action is action
    if action is Action.RUN:
        assert "auto-approved" in judgement.reason


def test_approval_modes_are_ordered_strict_to_loose() -> None:
    ranks = [m.looseness for m in ApprovalMode]
    assert ranks == sorted(ranks)
    assert ApprovalMode("ask") is ApprovalMode.ASK
    assert ApprovalMode.ALLOWLIST.looseness < ApprovalMode.NEVER_ASK.looseness


@pytest.mark.parametrize(
    ("approval", "requirement", "would"),
    [(ALLOW, NS_DENIED, Action.RUN), (PROMPT, NS_DENIED, Action.ASK)],
)
def test_plan_mode_judges_but_never_runs(
    registry: Registry,
    ns: Recording,
    approval: invoke.Decision,
    requirement: Requirement,
    would: Action,
) -> None:
    judgement = Gate(registry, plan=True).judge(approval, requirement)
    assert judgement.action is Action.PLAN
    assert judgement.would is would
    assert judgement.reason.startswith("plan mode")
    verdict = judgement.to_verdict()
    assert verdict.decision is DENY
    assert not verdict.retryable
    if would is Action.RUN:
        assert judgement.provider is ns
        assert "'ns'" in judgement.reason


def test_plan_mode_still_reports_a_sandbox_refusal(registry: Registry) -> None:
    assert Gate(registry, plan=True).judge(ALLOW, VM).action is Action.DENY


async def test_execute_and_run_runs_only_on_run_and_only_on_the_judged_provider(
    registry: Registry, ns: Recording, host: Recording
) -> None:
    gate = Gate(registry)
    program = Program(["make"])
    assert not (await gate.execute_and_run(PROMPT, NS_DENIED, program)).executed
    assert not (await gate.execute_and_run(DENY, NS_DENIED, program)).executed
    assert not (await gate.execute_and_run(ALLOW, VM, program)).executed
    assert not (await Gate(registry, plan=True).execute_and_run(ALLOW, NS_DENIED, program)).executed
    assert ns.ran == []
    assert host.ran == []
    run = await gate.execute_and_run(ALLOW, NS_DENIED, program)
    assert run.executed
    assert run.result is not None
    assert run.result.provider == "ns"
    assert ns.ran == [program]
    assert host.ran == []


async def test_the_run_gets_the_stricter_egress_and_that_is_what_is_judged(
    registry: Registry, ns: Recording, host: Recording
) -> None:
    gate = Gate(registry, mode=ApprovalMode.NEVER_ASK)
    wants_network = Program(["curl", "x"], egress=EgressMode.UNRESTRICTED)
    run = await gate.execute_and_run(ALLOW, NS_DENIED, wants_network)
    assert ns.ran[-1].egress is EgressMode.DENIED  # the requirement is stricter
    assert run.judgement.requirement.egress is EgressMode.DENIED
    open_ns = Requirement(Level.NAMESPACES, EgressMode.UNRESTRICTED)
    await gate.execute_and_run(ALLOW, open_ns, Program(["true"]))
    assert ns.ran[-1].egress is EgressMode.DENIED  # the program needs no network: it gets none
    await gate.execute_and_run(ALLOW, open_ns, wants_network)
    assert ns.ran[-1].egress is EgressMode.UNRESTRICTED
    # A program that did not ask for the network is judged as denied: the host cannot hold that.
    run = await Gate(Registry([host])).execute_and_run(ALLOW, HOST_OPEN, Program(["true"]))
    assert run.judgement.action is Action.DENY
    assert host.ran == []
    run = await Gate(Registry([host])).execute_and_run(ALLOW, HOST_OPEN, wants_network)
    assert run.executed
    assert host.ran == [wants_network]


async def test_cmdpolicy_verdicts_are_read_directly(registry: Registry, ns: Recording) -> None:
    gate = Gate(registry)
    assert gate.judge(decide_command(POLICY, "ls -la"), NS_DENIED).action is Action.RUN
    assert gate.judge(decide_command(POLICY, "ls > out"), NS_DENIED).action is Action.ASK
    forbidden = gate.judge(decide_command(POLICY, "ls; rm -rf /"), NS_DENIED)
    assert forbidden.action is Action.DENY
    assert forbidden.to_verdict().kind is toolfail.Kind.FORBIDDEN
    assert gate.judge(Permission.ALLOW, NS_DENIED).action is Action.RUN


@pytest.mark.parametrize("junk", ["allow", None, 1, object()])
def test_an_unreadable_approval_is_a_denial(registry: Registry, junk: object) -> None:
    judgement = Gate(registry, mode=ApprovalMode.NEVER_ASK).judge(junk, HOST_OPEN)  # type: ignore[arg-type]
    assert judgement.action is Action.DENY
    assert "unreadable approval" in judgement.reason
    assert judgement.to_verdict().kind is toolfail.Kind.INTERNAL


async def test_the_gate_as_a_ring_stage(registry: Registry, ns: Recording) -> None:
    async def approval_of(call: invoke.Call) -> invoke.Verdict:
        return decide_command(POLICY, call.args["line"]).to_invoke()

    stage = Gate(registry).stage(approval_of, lambda call: NS_DENIED)
    chain = invoke.Chain([stage])
    executed: list[str] = []

    async def execute(call: invoke.Call) -> str:
        executed.append(call.args["line"])
        return "done"

    ok = await chain.invoke(invoke.Call("shell", {"line": "ls"}), execute)
    refused = await chain.invoke(invoke.Call("shell", {"line": "rm -rf /"}), execute)
    asked = await chain.invoke(invoke.Call("shell", {"line": "ls > f"}), execute)
    assert ok.executed
    assert not refused.executed
    assert not asked.executed
    assert refused.verdict.stage == "gatecheck"
    assert asked.verdict.decision is PROMPT
    assert executed == ["ls"]


async def test_managed_runs_only_what_passed_and_only_on_its_backend(ns: Recording) -> None:
    managed = Managed(ns, NS_DENIED)
    assert managed.name == "ns"
    assert managed.requirement is NS_DENIED
    assert not (await managed.run(Program(["x"]), approval=DENY)).executed
    assert not (await managed.run(Program(["x"]), approval=PROMPT)).executed
    assert ns.ran == []
    run = await managed.run(Program(["x"]), approval=ALLOW)
    assert run.executed
    assert [p.argv for p in ns.ran] == [("x",)]


async def test_managed_refuses_when_its_backend_is_too_weak(host: Recording) -> None:
    managed = Managed(host, NS_DENIED, mode=ApprovalMode.NEVER_ASK)
    judgement: Judgement = managed.judge(ALLOW)
    assert judgement.action is Action.DENY
    assert not (await managed.run(Program(["x"]), approval=ALLOW)).executed
    assert host.ran == []


async def test_managed_plan_mode_never_reaches_the_backend(ns: Recording) -> None:
    run = await Managed(ns, NS_DENIED, plan=True).run(Program(["x"]), approval=ALLOW)
    assert run.judgement.action is Action.PLAN
    assert not run.executed
    assert ns.ran == []


async def test_managed_over_a_real_provider(tmp_path: Path) -> None:
    managed = Managed(HostProvider(tmp_path), HOST_OPEN)
    program = Program(["sh", "-c", "echo real"], egress=EgressMode.UNRESTRICTED)
    run = await managed.run(program, approval=ALLOW)
    assert run.result is not None
    assert run.result.output == b"real\n"


def test_requirement_normalises_plain_numbers() -> None:
    requirement = Requirement(1, 2)  # type: ignore[arg-type]
    assert requirement.level is Level.NAMESPACES
    assert requirement.egress is EgressMode.DENIED
    with pytest.raises(ValueError, match="9"):
        Requirement(9, 0)  # type: ignore[arg-type]


def test_gate_properties(registry: Registry) -> None:
    gate = Gate(registry, mode=ApprovalMode.AUTO, plan=True)
    assert gate.mode is ApprovalMode.AUTO
    assert gate.plan
