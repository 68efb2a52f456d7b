"""Every host call passes the judgement ring: refusals, denials, evidence, kinds."""

from __future__ import annotations

from typing import Any

import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Chain, Judgement, Verdict
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.dispatch import ChainDispatcher, Reply, is_managed
from yagent.kernel.ptc.errors import AbortedError, Cause, UnmanagedError
from yagent.kernel.ptc.runner import run
from yagent.kernel.ptc.session import HostSession, Scope

from .conftest import Tools, allow_stage, crash_stage, deny_stage, prompt_stage

pytestmark = pytest.mark.anyio

CATCH = """
    try {
        return {ok: true, value: await host.%s(%s)};
    } catch (e) {
        return {ok: false, name: e.name, error: e.message, kind: e.kind, stage: e.stage,
                denied: e.denied, retryable: e.retryable, tool: e.tool};
    }
"""


async def test_bindings_without_a_dispatcher_are_refused(bindings: Bindings) -> None:
    with pytest.raises(UnmanagedError) as info:
        await run("return 1;", bindings, None)
    assert toolfail.classify(info.value) is toolfail.Kind.UNMANAGED
    with pytest.raises(UnmanagedError, match="no dispatcher"):
        await run("return 1;", bindings, None, allow_unmanaged=True)


@pytest.mark.parametrize("chain", [None, Chain([])])
async def test_bindings_whose_dispatcher_has_no_chain_are_refused(
    bindings: Bindings, tools: Tools, chain: Chain | None
) -> None:
    dispatcher = ChainDispatcher(chain, tools.executors())
    assert not is_managed(dispatcher)
    with pytest.raises(UnmanagedError, match="no judgement chain"):
        await run("return await host.fetch_data('k');", bindings, dispatcher)
    assert tools.ran == []


async def test_the_explicit_escape_runs_bare(bindings: Bindings, tools: Tools) -> None:
    dispatcher = ChainDispatcher(None, tools.executors())
    result = await run(
        "return (await host.fetch_data('k')).data;", bindings, dispatcher, allow_unmanaged=True
    )
    assert result.value == "value-of-k"
    assert tools.ran_tools() == ["fetch-data"]


async def test_a_reply_without_judgement_aborts_the_program(bindings: Bindings) -> None:
    class Liar:
        """Claims a chain but answers without any judgement."""

        chain = Chain([allow_stage()])

        async def dispatch(self, call: Call) -> Reply:
            return Reply(True, {"forged": True}, executed=True)

    with pytest.raises(AbortedError) as info:
        await run("return await host.fetch_data('k');", bindings, Liar())
    assert info.value.cause is Cause.UNMANAGED
    assert toolfail.classify(info.value) is toolfail.Kind.UNMANAGED


async def test_a_gated_tool_is_denied_exactly_as_a_direct_call(
    bindings: Bindings, tools: Tools, gated_chain: Chain
) -> None:
    dispatcher = ChainDispatcher(gated_chain, tools.executors())
    direct = await dispatcher.dispatch(Call("drop_table", {"table": "users"}))
    judged = await gated_chain.judge(Call("drop_table", {"table": "users"}))
    result = await run(CATCH % ("drop_table", "'users'"), bindings, dispatcher)
    seen = result.value
    assert seen["ok"] is False
    assert seen["name"] == "HostError"
    assert seen["error"] == direct.error == judged.verdict.reason
    assert seen["kind"] == direct.kind == judged.verdict.kind == toolfail.Kind.PERMISSION
    assert seen["stage"] == direct.stage == "policy"
    assert seen["denied"] is True
    assert seen["retryable"] is False
    assert seen["tool"] == "drop_table"
    assert tools.ran == []
    assert result.calls[0].executed is False
    assert result.calls[0].kind is toolfail.Kind.PERMISSION


async def test_prompt_without_an_approver_is_a_needs_approval_denial(
    bindings: Bindings, tools: Tools, gated_chain: Chain
) -> None:
    dispatcher = ChainDispatcher(gated_chain, tools.executors())
    result = await run(CATCH % ("deploy", "'api'"), bindings, dispatcher)
    assert result.value["kind"] == "needs_approval"
    assert result.value["stage"] == "approval"
    assert result.value["denied"] is True
    assert tools.ran == []


@pytest.mark.parametrize(("answer", "ran"), [(True, ["deploy"]), (False, [])])
async def test_prompt_goes_to_the_approver_like_a_direct_call(
    bindings: Bindings, tools: Tools, gated_chain: Chain, answer: bool, ran: list[str]
) -> None:
    asked: list[tuple[str, str]] = []

    async def approve(call: Call, verdict: Verdict) -> bool:
        asked.append((call.tool, verdict.reason))
        return answer

    dispatcher = ChainDispatcher(gated_chain, tools.executors(), approve=approve)
    result = await run(CATCH % ("deploy", "'api'"), bindings, dispatcher)
    assert asked == [("deploy", "deploy changes production")]
    assert tools.ran_tools() == ran
    if answer:
        assert result.value == {"ok": True, "value": {"deployed": "api"}}
    else:
        assert result.value["kind"] == "permission"
        assert result.value["denied"] is True


async def test_a_crashing_guard_is_internal_not_permission(
    bindings: Bindings, tools: Tools, gated_chain: Chain
) -> None:
    dispatcher = ChainDispatcher(gated_chain, tools.executors())
    result = await run(CATCH % ("flaky", ""), bindings, dispatcher)
    assert result.value["kind"] == "internal"
    assert result.value["stage"] == "buggy"
    assert result.value["denied"] is True
    assert tools.ran == []


async def test_a_transient_tool_failure_is_transient_and_not_a_denial(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    result = await run(CATCH % ("flaky", ""), bindings, dispatcher)
    assert result.value["kind"] == "transient"
    assert result.value["retryable"] is True
    assert result.value["denied"] is False
    assert tools.ran_tools() == ["flaky"]


async def test_an_uncaught_denial_ends_the_program_with_its_kind(
    bindings: Bindings, tools: Tools, gated_chain: Chain
) -> None:
    dispatcher = ChainDispatcher(gated_chain, tools.executors())
    result = await run("await host.drop_table('users'); return 'done';", bindings, dispatcher)
    assert not result.ok
    assert result.kind is toolfail.Kind.PERMISSION
    assert "HostError (permission) from host.drop_table" in result.error


async def test_allowed_calls_pass_every_stage_with_the_scope(
    bindings: Bindings, tools: Tools
) -> None:
    seen: list[Call] = []

    async def spy(call: Call) -> Verdict:
        seen.append(call)
        return Verdict.allow()

    from yagent.kernel.judge.invoke import FuncStage

    chain = Chain([deny_stage(["drop_table"]), FuncStage("spy", spy)])
    dispatcher = ChainDispatcher(chain, tools.executors())
    observed: list[tuple[str, bool]] = []
    result = await run(
        "await host.fetch_data('a'); try { await host.drop_table('t'); } catch {} return 1;",
        bindings,
        dispatcher,
        scope=Scope(parent_id="call-7", caller="planner", depth=2),
        observer=lambda call, record: observed.append((call.call_id, record.ok)),
    )
    assert result.value == 1
    assert [c.tool for c in seen] == ["fetch-data"]  # the denied call stopped before the spy
    call = seen[0]
    assert call.call_id == "call-7#1"
    assert call.caller == "planner"
    assert call.depth == 3
    assert call.meta == {"ptc_parent": "call-7"}
    assert observed == [("call-7#1", True), ("call-7#2", False)]


async def test_an_executor_without_binding_is_forbidden(bindings: Bindings) -> None:
    dispatcher = ChainDispatcher(Chain([allow_stage()]), {})
    result = await run(CATCH % ("fetch_data", "'k'"), bindings, dispatcher)
    assert result.value["kind"] == "forbidden"
    assert result.value["denied"] is False


async def test_the_session_answers_unknown_identifiers_as_forbidden(
    bindings: Bindings, dispatcher: ChainDispatcher
) -> None:
    from yagent.kernel.ptc.budget import Budget

    session = HostSession(bindings, dispatcher, Budget())
    answers = await session.answer([{"id": 1, "ident": "rm_rf", "form": "object", "args": "{}"}])
    assert answers[0]["ok"] is False
    assert answers[0]["kind"] == "forbidden"
    assert session.records[0].tool == "rm_rf"
    assert session.records[0].executed is False


async def test_a_value_that_is_not_json_is_an_internal_failure(bindings: Bindings) -> None:
    async def weird(call: Call) -> Any:
        return {"when": object()}

    dispatcher = ChainDispatcher(Chain([allow_stage()]), {"fetch-data": weird})
    result = await run(CATCH % ("fetch_data", "'k'"), bindings, dispatcher)
    assert result.value["kind"] == "internal"
    assert "not JSON" in result.value["error"]


async def test_chain_denial_kind_defaults_to_permission(bindings: Bindings, tools: Tools) -> None:
    class Bare:
        name = "bare"

        async def judge(self, call: Call) -> Verdict:
            return Verdict(Verdict.deny("x").decision, "said no", kind=None)

    dispatcher = ChainDispatcher(Chain([Bare()]), tools.executors())
    reply = await dispatcher.dispatch(Call("fetch-data", {"key": "k"}))
    assert reply.kind is toolfail.Kind.PERMISSION
    assert reply.denied
    assert reply.judged
    assert isinstance(reply.judgement, Judgement)


async def test_crash_stage_helper_really_crashes() -> None:
    verdict = (await Chain([crash_stage(["x"])]).judge(Call("x"))).verdict
    assert verdict.kind is toolfail.Kind.INTERNAL
    assert (await Chain([prompt_stage(["x"])]).judge(Call("x"))).verdict.kind is (
        toolfail.Kind.NEEDS_APPROVAL
    )
