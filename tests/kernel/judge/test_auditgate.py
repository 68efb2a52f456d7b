"""auditgate: thresholds only tighten, unreadable input is denied, unknown mutation is escalated."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge import auditgate, invoke, toolfail
from yagent.kernel.judge.auditgate import (
    Audit,
    AuditDeniedError,
    AuditGate,
    AuditRule,
    Decision,
    Level,
    LoosenError,
    MalformedOpError,
    Op,
    ReviewRequiredError,
    Thresholds,
)

# --- reading raw data -------------------------------------------------------------------------


READABLE: list[tuple[object, float]] = [(0, 0.0), (1, 1.0), (0.3, 0.3), ("0.4", 0.4)]
READABLE += [(" HIGH ", 0.75), ("low", 0.25), ("none", 0.0), ("critical", 1.0), (Level.MEDIUM, 0.5)]


@pytest.mark.parametrize(("raw", "score"), READABLE)
def test_parse_risk_reads_numbers_and_levels(raw: object, score: float) -> None:
    assert auditgate.parse_risk(raw) == score


@pytest.mark.parametrize(
    "raw", [None, True, False, "", "risky", "nan", "inf", -0.1, 1.5, math.nan, math.inf, [0.1]]
)
def test_parse_risk_refuses_what_it_cannot_read(raw: object) -> None:
    with pytest.raises(MalformedOpError):
        auditgate.parse_risk(raw)


@pytest.mark.parametrize(
    ("raw", "flag"),
    [(None, None), (True, True), (False, False), ("true", True), (" No ", False), ("yes", True)],
)
def test_parse_mutating_keeps_three_states(raw: object, flag: bool | None) -> None:
    assert auditgate.parse_mutating(raw) is flag


@pytest.mark.parametrize("raw", [0, 1, "maybe", "", 0.0, []])
def test_parse_mutating_refuses_junk_rather_than_guessing(raw: object) -> None:
    with pytest.raises(MalformedOpError):
        auditgate.parse_mutating(raw)


def test_op_validates_when_built() -> None:
    assert Op("x", Level.HIGH, True).risk == 0.75
    assert type(Op("x", Level.HIGH, True).risk) is float
    assert Op.parse("x", "medium", "false") == Op("x", 0.5, False)
    bad: list[dict[str, Any]] = [
        {"name": "", "risk": 0.1, "mutating": False},
        {"name": 3, "risk": 0.1, "mutating": False},
        {"name": "x", "risk": "0.1", "mutating": False},
        {"name": "x", "risk": True, "mutating": False},
        {"name": "x", "risk": 2.0, "mutating": False},
        {"name": "x", "risk": 0.1, "mutating": 1},
    ]
    for fields in bad:
        with pytest.raises(MalformedOpError):
            Op(**fields)
    with pytest.raises(MalformedOpError):
        Op.parse(None, 0.1, False)


NOT_AN_ORDER: list[dict[str, Any]] = [{"prompt_at": math.nan}, {"deny_at": -1.0}]
NOT_AN_ORDER += [{"prompt_at": "0.5"}, {"prompt_at": True}, {"review_mutating": 1}]
NOT_AN_ORDER += [{"prompt_at": 0.8, "deny_at": 0.7}]


@pytest.mark.parametrize("fields", NOT_AN_ORDER)
def test_thresholds_refuse_an_order_that_is_not_one(fields: dict[str, Any]) -> None:
    with pytest.raises(auditgate.InvalidThresholdsError):
        Thresholds(**fields)


# --- the decision -------------------------------------------------------------------------------


def decide(op: object, **thresholds: Any) -> Audit:
    return AuditGate(Thresholds(**thresholds)).decide(op)


def test_bands_of_the_risk_axis() -> None:
    t = {"prompt_at": 0.5, "deny_at": 0.8}
    assert decide(Op("read", 0.49, False), **t).decision is Decision.ALLOW
    assert decide(Op("read", 0.49, False), **t).rule is AuditRule.BELOW_THRESHOLDS
    assert decide(Op("edit", 0.5, False), **t).rule is AuditRule.PROMPT_THRESHOLD
    assert decide(Op("edit", 0.79, True), **t).decision is Decision.PROMPT
    assert decide(Op("wipe", 0.8, False), **t).rule is AuditRule.DENY_THRESHOLD
    assert decide(Op("wipe", 1.0, False), **t).decision is Decision.DENY


def test_unknown_mutating_escalates_to_a_person_even_at_zero_risk() -> None:
    audit = decide(Op("mystery", 0.0, None), prompt_at=math.inf, deny_at=math.inf)
    assert audit.decision is Decision.PROMPT
    assert audit.rule is AuditRule.UNKNOWN_MUTATING
    assert "mystery" in audit.reason


def test_deny_threshold_wins_over_unknown_mutating() -> None:
    audit = decide(Op("mystery", 0.9, None), prompt_at=0.5, deny_at=0.9)
    assert audit.decision is Decision.DENY


def test_declared_read_only_is_not_escalated_but_mutating_is_when_asked() -> None:
    t = {"prompt_at": 0.5, "deny_at": 1.0}
    assert decide(Op("read", 0.1, False), **t, review_mutating=True).decision is Decision.ALLOW
    assert decide(Op("write", 0.1, True), **t).decision is Decision.ALLOW
    audit = decide(Op("write", 0.1, True), **t, review_mutating=True)
    assert (audit.decision, audit.rule) == (Decision.PROMPT, AuditRule.MUTATING_REVIEW)


@pytest.mark.parametrize("junk", [None, "op", {"name": "x", "risk": 0.1}, 3])
def test_anything_but_an_op_is_denied(junk: object) -> None:
    audit = decide(junk)
    assert (audit.decision, audit.rule, audit.op) == (Decision.DENY, AuditRule.UNPARSEABLE, None)


def test_an_op_forced_out_of_shape_after_building_is_denied() -> None:
    op = Op("x", 0.1, False)
    object.__setattr__(op, "risk", math.nan)
    assert decide(op).rule is AuditRule.UNPARSEABLE
    object.__setattr__(op, "risk", 0.1)
    object.__setattr__(op, "mutating", "no")
    assert decide(op).decision is Decision.DENY


def test_an_op_that_cannot_be_built_is_denied() -> None:
    gate = AuditGate()

    def build() -> Op:
        return Op.parse("x", "spicy", False)

    audit = gate.decide_with(build)
    assert audit.decision is Decision.DENY
    assert "spicy" in audit.reason
    empty: dict[str, Op] = {}
    assert gate.decide_with(lambda: empty["missing"]).rule is AuditRule.UNPARSEABLE


@given(
    risk=st.floats(0.0, 1.0),
    mutating=st.sampled_from([True, False, None]),
    cuts=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2).map(sorted),
    review=st.booleans(),
)
def test_decision_is_monotone_in_strictness(
    risk: float, mutating: bool | None, cuts: list[float], review: bool
) -> None:
    """Lowering any threshold never turns a stricter answer into a looser one."""
    order = {Decision.ALLOW: 0, Decision.PROMPT: 1, Decision.DENY: 2}
    loose = Thresholds(cuts[0], cuts[1], review)
    strict = Thresholds(cuts[0] / 2, cuts[1] / 2, True)
    op = Op("x", risk, mutating)
    before = AuditGate(loose).decide(op).decision
    after = AuditGate(strict).decide(op).decision
    assert order[after] >= order[before]
    if mutating is None:
        assert before is not Decision.ALLOW


# --- thresholds only tighten --------------------------------------------------------------------


def test_lowering_is_accepted_and_bumps_the_generation() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    assert gate.generation == 0
    snap = gate.lower(Thresholds(0.4, 0.9))
    assert snap == auditgate.VersionedThresholds(Thresholds(0.4, 0.9), 1)
    assert gate.snapshot() == snap
    assert gate.thresholds.prompt_at == 0.4
    assert gate.decide(Op("x", 0.45, False)).generation == 1


def test_an_unchanged_value_is_not_a_new_generation() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    assert gate.lower(Thresholds(0.5, 0.9)).generation == 0


@pytest.mark.parametrize(
    ("proposed", "fields"),
    [
        (Thresholds(0.6, 0.9, review_mutating=True), ("prompt_at",)),
        (Thresholds(0.4, 0.95, review_mutating=True), ("deny_at",)),
        (Thresholds(0.5, 0.9, review_mutating=False), ("review_mutating",)),
        (Thresholds(0.9, math.inf), ("prompt_at", "deny_at", "review_mutating")),
    ],
)
def test_raising_is_refused_and_changes_nothing(
    proposed: Thresholds, fields: tuple[str, ...]
) -> None:
    gate = AuditGate(Thresholds(0.5, 0.9, review_mutating=True))
    before = gate.snapshot()
    with pytest.raises(LoosenError) as err:
        gate.lower(proposed)
    assert err.value.fields == fields
    assert err.value.current == before.thresholds
    assert err.value.proposed == proposed
    assert gate.snapshot() is before


def test_a_mixed_change_that_loosens_anything_is_refused_whole() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    with pytest.raises(LoosenError):
        gate.tighten(prompt_at=0.1, deny_at=0.95)
    assert gate.thresholds == Thresholds(0.5, 0.9)


def test_tighten_changes_named_fields_and_drags_prompt_down_with_deny() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    gate.tighten(review_mutating=True)
    assert gate.thresholds == Thresholds(0.5, 0.9, True)
    gate.tighten(deny_at=0.3)
    assert gate.thresholds == Thresholds(0.3, 0.3, True)
    gate.tighten(prompt_at=0.1)
    assert gate.snapshot() == auditgate.VersionedThresholds(Thresholds(0.1, 0.3, True), 3)
    with pytest.raises(auditgate.InvalidThresholdsError):
        gate.tighten(prompt_at=0.2, deny_at=0.1)
    assert gate.generation == 3


def test_lower_with_refuses_a_mutate_that_returns_junk() -> None:
    gate = AuditGate()
    with pytest.raises(auditgate.InvalidThresholdsError):
        gate.lower_with(lambda _t: "stricter")  # type: ignore[arg-type,return-value]
    assert gate.generation == 0


def test_concurrent_tighteners_do_not_lose_each_others_update() -> None:
    """Read-modify-write is one step: a second tightener sees the first one's result."""
    gate = AuditGate(Thresholds(0.5, 0.9))
    inside_a = threading.Event()
    b_done = threading.Event()

    def mutate_a(current: Thresholds) -> Thresholds:
        inside_a.set()
        # Without the lock, B would run (and finish) here, against the same `current`.
        b_done.wait(timeout=0.2)
        return Thresholds(0.2, current.deny_at, current.review_mutating)

    def mutate_b(current: Thresholds) -> Thresholds:
        return Thresholds(current.prompt_at, current.deny_at, True)

    def run_b() -> None:
        inside_a.wait()
        gate.lower_with(mutate_b)
        b_done.set()

    worker = threading.Thread(target=run_b)
    worker.start()
    gate.lower_with(mutate_a)
    worker.join()
    assert gate.snapshot() == auditgate.VersionedThresholds(Thresholds(0.2, 0.9, True), 2)


# --- entry point 1: one wrapped tool ------------------------------------------------------------


class Tool:
    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []

    async def __call__(self, path: str, risk: float = 0.0) -> str:
        self.calls.append((path, risk))
        return f"done {path}"


def op_of_args(path: str, risk: object = 0.0) -> Op:
    return Op.parse("write_file", risk, True)


@pytest.mark.anyio
async def test_wrapped_tool_runs_when_allowed() -> None:
    tool = Tool()
    gated = auditgate.with_audit_gate(tool, AuditGate(Thresholds(0.5, 0.9)), op_of_args)
    assert await gated("a.txt", risk=0.1) == "done a.txt"
    assert tool.calls == [("a.txt", 0.1)]


@pytest.mark.anyio
async def test_wrapped_tool_is_not_called_when_denied() -> None:
    tool = Tool()
    gated = auditgate.with_audit_gate(tool, AuditGate(Thresholds(0.5, 0.9)), op_of_args)
    with pytest.raises(AuditDeniedError) as err:
        await gated("a.txt", risk=0.95)
    assert err.value.audit.rule is AuditRule.DENY_THRESHOLD
    assert toolfail.classify(err.value) is toolfail.Kind.PERMISSION
    with pytest.raises(AuditDeniedError) as bad:
        await gated("a.txt", risk="lots")  # type: ignore[arg-type]
    assert bad.value.audit.rule is AuditRule.UNPARSEABLE
    assert tool.calls == []


@pytest.mark.anyio
async def test_wrapped_tool_on_prompt_needs_an_explicit_yes() -> None:
    tool = Tool()
    gate = AuditGate(Thresholds(0.5, 0.9))
    asked: list[Audit] = []

    def approver(answer: object) -> Any:
        async def approve(audit: Audit) -> bool:
            asked.append(audit)
            return answer  # type: ignore[return-value]

        return approve

    no_one = auditgate.with_audit_gate(tool, gate, op_of_args)
    with pytest.raises(ReviewRequiredError) as err:
        await no_one("a.txt", risk=0.6)
    assert toolfail.classify(err.value) is toolfail.Kind.NEEDS_APPROVAL
    for answer in (False, "yes", 1):
        refused = auditgate.with_audit_gate(tool, gate, op_of_args, approve=approver(answer))
        with pytest.raises(ReviewRequiredError):
            await refused("a.txt", risk=0.6)
    assert tool.calls == []
    yes = auditgate.with_audit_gate(tool, gate, op_of_args, approve=approver(True))
    assert await yes("b.txt", risk=0.6) == "done b.txt"
    assert tool.calls == [("b.txt", 0.6)]
    assert [a.rule for a in asked] == [AuditRule.PROMPT_THRESHOLD] * 4


@pytest.mark.anyio
async def test_wrapped_tool_sees_thresholds_lowered_after_wrapping() -> None:
    tool = Tool()
    gate = AuditGate(Thresholds(0.5, 0.9))
    gated = auditgate.with_audit_gate(tool, gate, op_of_args)
    await gated("a.txt", risk=0.3)
    gate.tighten(deny_at=0.2)
    with pytest.raises(AuditDeniedError):
        await gated("a.txt", risk=0.3)
    assert tool.calls == [("a.txt", 0.3)]


# --- entry point 2: a ring of the chain ---------------------------------------------------------


def op_of_call(call: invoke.Call) -> Op:
    return Op.parse(call.tool, call.meta["risk"], call.meta.get("mutating"))


async def execute(call: invoke.Call) -> str:
    return f"ran {call.tool}"


@pytest.mark.anyio
async def test_stage_judges_every_call_form_with_one_rule_set() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    chain = invoke.Chain([auditgate.stage(gate, op_of_call)])
    forms = [
        invoke.Call("edit", meta={"risk": 0.1, "mutating": True, "via": "direct"}),
        invoke.Call("edit", meta={"risk": 0.1, "mutating": True, "via": "program"}),
        invoke.Call("edit", meta={"risk": 0.1, "mutating": True, "via": "subprocess"}),
    ]
    for call in forms:
        outcome = await chain.invoke(call, execute)
        assert (outcome.executed, outcome.result) == (True, "ran edit")
    gate.tighten(review_mutating=True)
    for call in forms:
        outcome = await chain.invoke(call, execute)
        assert not outcome.executed
        assert outcome.verdict.decision is Decision.PROMPT
        assert outcome.verdict.stage == "policy"
        assert outcome.verdict.kind is toolfail.Kind.NEEDS_APPROVAL


@pytest.mark.anyio
async def test_stage_denies_unbuildable_ops_itself_and_allows_below_thresholds() -> None:
    gate = AuditGate(Thresholds(0.5, 0.9))
    audit_stage = auditgate.stage(gate, op_of_call, name="audit")
    assert isinstance(audit_stage, invoke.Stage)
    missing = await audit_stage.judge(invoke.Call("edit"))
    assert missing.decision is Decision.DENY
    assert missing.kind is toolfail.Kind.PERMISSION
    assert not missing.retryable
    assert missing.stage == "audit"
    assert "could not judge" in missing.reason
    high = await audit_stage.judge(invoke.Call("rm", meta={"risk": "critical", "mutating": True}))
    assert high.decision is Decision.DENY
    unknown = await audit_stage.judge(invoke.Call("odd", meta={"risk": "low"}))
    assert unknown.decision is Decision.PROMPT
    fine = await audit_stage.judge(invoke.Call("ls", meta={"risk": "none", "mutating": False}))
    assert fine.allowed
    assert fine.stage == "audit"
