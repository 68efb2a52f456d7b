"""hookengine: matching, verdict, order and close — and both fail-closed rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.judge import hookengine, invoke, toolfail
from yagent.kernel.judge.hookengine import (
    PRE_TOOL_USE,
    Decision,
    Engine,
    Event,
    Hook,
    HookResult,
    Status,
)

ALLOW = HookResult(Decision.ALLOW, "fine")
DENY = HookResult(Decision.DENY, "not on my watch")


class FakeClock:
    """A timer seam: scopes expire when the test advances time, never on the wall clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self._scopes: list[tuple[float, anyio.CancelScope]] = []

    def move_on_after(self, delay: float) -> anyio.CancelScope:
        scope = anyio.CancelScope()
        self._scopes.append((self.now + delay, scope))
        return scope

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for deadline, scope in self._scopes:
            if deadline <= self.now:
                scope.cancel()


Behaviour = HookResult | BaseException | Callable[[Hook, Event], Awaitable[Any]] | str


class ScriptRunner:
    """Runs each hook by name from a script; records the order hooks were started in."""

    def __init__(self, clock: FakeClock, script: dict[str, Behaviour]) -> None:
        self.clock = clock
        self.script = script
        self.started: list[str] = []

    async def run(self, hook: Hook, event: Event) -> HookResult:
        self.started.append(hook.name)
        action = self.script[hook.name]
        if isinstance(action, BaseException):
            raise action
        if action == "hang":
            self.clock.advance(hook.timeout)
            await anyio.sleep_forever()
        if callable(action):
            return await action(hook, event)  # type: ignore[no-any-return]
        return action  # type: ignore[return-value]


def engine(
    hooks: list[Hook], script: dict[str, Behaviour], clock: FakeClock | None = None
) -> tuple[Engine, ScriptRunner]:
    clock = clock or FakeClock()
    runner = ScriptRunner(clock, script)
    return Engine(hooks, runner, timer=clock.move_on_after), runner


def pre(tool: str = "edit_file") -> Event:
    return Event(PRE_TOOL_USE, tool, {"path": "a.txt"})


def hook(name: str, **fields: Any) -> Hook:
    return Hook(name, fields.pop("event", PRE_TOOL_USE), **fields)


# --- matching ---------------------------------------------------------------------------------


def test_matching_is_event_name_plus_tool_prefix() -> None:
    hooks = [hook("all"), hook("git", tool_prefix="git_"), hook("edit", tool_prefix="edit")]
    hooks.append(hook("later", event="post_tool_use"))
    e, _ = engine(hooks, {})
    assert [h.name for h in e.matching(pre("git_status"))] == ["all", "git"]
    assert [h.name for h in e.matching(pre("edit_file"))] == ["all", "edit"]
    assert [h.name for h in e.matching(pre("gh"))] == ["all"]
    assert [h.name for h in e.matching(Event(PRE_TOOL_USE))] == ["all"]
    assert [h.name for h in e.matching(Event("post_tool_use", "edit"))] == ["later"]
    assert e.matching(Event("session_start")) == ()


@pytest.mark.anyio
async def test_no_matching_hook_allows_and_says_so() -> None:
    e, runner = engine([hook("git", tool_prefix="git_")], {"git": DENY})
    result = await e.evaluate(pre("edit_file"))
    assert result.decision is Decision.ALLOW
    assert result.runs == ()
    assert "no blocking hook matched" in result.reason
    assert runner.started == []


# --- order and close ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_blocking_hooks_run_in_name_order_not_declaration_order() -> None:
    names = ["m-lint", "a-scan", "z-audit", "b-check"]
    e, runner = engine([hook(n) for n in names], dict.fromkeys(names, ALLOW))
    assert [h.name for h in e.hooks] == sorted(names)
    result = await e.evaluate(pre())
    assert runner.started == sorted(names)
    assert [r.hook for r in result.runs] == sorted(names)
    assert (result.decision, result.decided_by) == (Decision.ALLOW, "")
    assert "4 blocking hook(s) allowed" in result.reason


@pytest.mark.anyio
async def test_first_deny_decides_and_stops_the_remaining_blocking_hooks() -> None:
    script: dict[str, Behaviour] = {"c": ALLOW, "a": ALLOW, "b": DENY, "d": DENY}
    e, runner = engine([hook(n) for n in "dcba"], script)
    result = await e.evaluate(pre())
    assert runner.started == ["a", "b"]
    assert (result.decision, result.decided_by, result.skipped) == (Decision.DENY, "b", ("c", "d"))
    assert result.reason == "hook 'b' denied: not on my watch"
    assert not result.fail_closed


@settings(max_examples=60, deadline=None)
@given(
    spec=st.dictionaries(
        st.text("abcdef", min_size=1, max_size=3),
        st.tuples(st.booleans(), st.sampled_from([Decision.ALLOW, Decision.DENY])),
        max_size=8,
    )
)
def test_decision_is_the_first_blocking_deny_by_name(
    spec: dict[str, tuple[bool, Decision]],
) -> None:
    hooks = [hook(n, blocking=b) for n, (b, _) in spec.items()]
    script: dict[str, Behaviour] = {n: HookResult(d) for n, (_, d) in spec.items()}
    e, runner = engine(hooks, script)
    result = anyio.run(e.evaluate, pre())
    deniers = sorted(n for n, (b, d) in spec.items() if b and d is Decision.DENY)
    blocking = sorted(n for n, (b, _) in spec.items() if b)
    if deniers:
        assert (result.decision, result.decided_by) == (Decision.DENY, deniers[0])
        assert result.skipped == tuple(n for n in blocking if n > deniers[0])
    else:
        assert (result.decision, result.skipped) == (Decision.ALLOW, ())
    ran = {r.hook for r in result.runs}
    assert {n for n, (b, _) in spec.items() if not b} <= ran
    assert ran.isdisjoint(result.skipped)
    assert sorted(runner.started) == sorted(ran)


# --- fail closed: failures ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_blocking_hook_that_fails_to_run_denies() -> None:
    boom = FileNotFoundError("hook script missing")
    e, runner = engine([hook("a"), hook("b")], {"a": boom, "b": ALLOW})
    result = await e.evaluate(pre())
    assert (result.decision, result.decided_by, result.fail_closed) == (Decision.DENY, "a", True)
    assert "failed (FileNotFoundError" in result.reason
    assert "hook script missing" in result.reason
    assert result.skipped == ("b",)
    assert runner.started == ["a"]
    (run,) = result.failures
    assert (run.status, run.error) == (Status.FAILED, boom)


@pytest.mark.anyio
@pytest.mark.parametrize("answer", [None, "allow", {"decision": "allow"}, Decision.ALLOW])
async def test_a_runner_that_returns_no_hook_result_denies(answer: object) -> None:
    async def give(hook: Hook, event: Event) -> object:
        return answer

    e, _ = engine([hook("a")], {"a": give})
    result = await e.evaluate(pre())
    assert result.decision is Decision.DENY
    assert "not a HookResult" in result.reason


@pytest.mark.anyio
async def test_a_hook_answers_allow_prompt_or_deny_only() -> None:
    async def prompt(hook: Hook, event: Event) -> HookResult:
        return HookResult(Decision.PROMPT, "ask someone")

    async def maybe(hook: Hook, event: Event) -> HookResult:
        return HookResult("maybe")  # type: ignore[arg-type]

    script: dict[str, Behaviour] = {"a": prompt, "b": HookResult("deny"), "c": maybe}  # type: ignore[arg-type]
    asked = await engine([hook("a")], script)[0].evaluate(pre())
    assert (asked.decision, asked.decided_by) == (Decision.PROMPT, "a")
    assert "asks for a person's approval: ask someone" in asked.reason
    # a later DENY wins over an earlier question
    both = await engine([hook("a"), hook("b")], script)[0].evaluate(pre())
    assert (both.decision, both.decided_by) == (Decision.DENY, "b")
    text = await engine([hook("b")], script)[0].evaluate(pre())
    assert text.decision is Decision.DENY
    assert "said deny" in text.reason
    odd = await engine([hook("c")], script)[0].evaluate(pre())
    assert odd.decision is Decision.DENY
    assert isinstance(odd.failures[0].error, hookengine.HookError)


# --- fail closed: timeouts ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_timeout_without_on_timeout_denies() -> None:
    e, runner = engine([hook("slow", timeout=5), hook("z")], {"slow": "hang", "z": ALLOW})
    result = await e.evaluate(pre())
    assert (result.decision, result.decided_by, result.fail_closed) == (Decision.DENY, "slow", True)
    assert "timed out after 5s; no on_timeout" in result.reason
    assert result.failures[0].status is Status.TIMED_OUT
    assert runner.started == ["slow"]


@pytest.mark.anyio
async def test_timeout_uses_the_declared_on_timeout() -> None:
    hooks = [hook("a-lenient", timeout=1, on_timeout=Decision.ALLOW)]
    hooks.append(hook("b-strict", timeout=100, on_timeout="deny"))
    e, runner = engine(hooks, {"a-lenient": "hang", "b-strict": "hang"})
    result = await e.evaluate(pre())
    assert runner.started == ["a-lenient", "b-strict"]
    assert [r.status for r in result.runs] == [Status.TIMED_OUT, Status.TIMED_OUT]
    assert result.runs[0].decision is Decision.ALLOW
    assert result.decided_by == "b-strict"
    assert not result.fail_closed
    assert "declared on_timeout is deny" in result.reason


@pytest.mark.anyio
async def test_a_runner_that_swallows_the_deadline_is_still_timed_out() -> None:
    async def stubborn(hook: Hook, event: Event) -> HookResult:
        clock.advance(hook.timeout)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            return ALLOW
        return DENY  # pragma: no cover - sleep_forever only ends by cancellation

    async def converts(hook: Hook, event: Event) -> HookResult:
        clock.advance(hook.timeout)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            raise RuntimeError("transport closed") from None
        return DENY  # pragma: no cover

    clock = FakeClock()
    hooks = [hook("a", timeout=1), hook("b", timeout=1, on_timeout=Decision.ALLOW)]
    e, _ = engine(hooks, {"a": stubborn}, clock)
    assert (await e.evaluate(pre())).decided_by == "a"
    e, _ = engine([hooks[1]], {"b": converts}, clock)
    result = await e.evaluate(pre())
    assert result.decision is Decision.ALLOW
    assert result.runs[0].status is Status.TIMED_OUT
    assert isinstance(result.runs[0].error, RuntimeError)


@pytest.mark.anyio
async def test_default_timer_is_anyio_deadline() -> None:
    class Hangs:
        async def run(self, hook: Hook, event: Event) -> HookResult:
            await anyio.sleep_forever()
            return ALLOW  # pragma: no cover

    runner = Hangs()
    assert isinstance(runner, hookengine.Runner)
    result = await Engine([hook("a", timeout=0.01)], runner).evaluate(pre())
    assert (result.decision, result.runs[0].status) == (Decision.DENY, Status.TIMED_OUT)


@pytest.mark.anyio
async def test_outside_cancellation_is_not_a_hook_failure() -> None:
    outer = anyio.CancelScope()

    async def cancelled_from_outside(hook: Hook, event: Event) -> HookResult:
        outer.cancel()
        await anyio.sleep_forever()
        return ALLOW  # pragma: no cover

    e, _ = engine([hook("a", on_timeout=Decision.ALLOW)], {"a": cancelled_from_outside})
    results: list[hookengine.Result] = []
    with outer:
        results.append(await e.evaluate(pre()))
    assert outer.cancelled_caught
    assert results == []


# --- non-blocking hooks -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_non_blocking_deny_does_not_block() -> None:
    e, _ = engine([hook("a", blocking=False), hook("b")], {"a": DENY, "b": ALLOW})
    result = await e.evaluate(pre())
    assert result.decision is Decision.ALLOW
    assert result.runs[0].decision is Decision.DENY
    assert not result.runs[0].blocking


@pytest.mark.anyio
async def test_non_blocking_failures_and_timeouts_are_recorded_not_voted() -> None:
    hooks = [hook("bg-crash", blocking=False), hook("bg-slow", blocking=False, timeout=3)]
    e, _ = engine(hooks, {"bg-crash": OSError("no pipe"), "bg-slow": "hang"})
    result = await e.evaluate(pre())
    assert result.decision is Decision.ALLOW
    assert "no blocking hook matched" in result.reason
    failures = [(r.hook, r.status) for r in result.failures]
    assert failures == [("bg-crash", Status.FAILED), ("bg-slow", Status.TIMED_OUT)]


@pytest.mark.anyio
async def test_non_blocking_hooks_run_alongside_and_even_after_a_deny() -> None:
    b_started, bg_done = anyio.Event(), anyio.Event()

    async def background(hook: Hook, event: Event) -> HookResult:
        await b_started.wait()  # needs the blocking hook to be running concurrently
        bg_done.set()
        return DENY

    async def blocker(hook: Hook, event: Event) -> HookResult:
        b_started.set()
        await bg_done.wait()
        return DENY

    hooks = [hook("a-bg", blocking=False), hook("b"), hook("c")]
    e, _ = engine(hooks, {"a-bg": background, "b": blocker, "c": ALLOW})
    with anyio.fail_after(10):  # a deadlock guard, not a timing assertion
        result = await e.evaluate(pre())
    assert [r.hook for r in result.runs] == ["a-bg", "b"]
    assert result.decided_by == "b"
    assert result.skipped == ("c",)


# --- configuration ------------------------------------------------------------------------------


BAD_FIELDS: list[dict[str, Any]] = [{"name": ""}, {"event": ""}, {"event": None}]
BAD_FIELDS += [{"tool_prefix": None}, {"blocking": "yes"}, {"on_timeout": "maybe"}]
BAD_FIELDS += [{"timeout": t} for t in (0, -1, float("inf"), float("nan"), "5", True)]
BAD_FIELDS += [{"on_timeout": Decision.PROMPT}]


@pytest.mark.parametrize("fields", BAD_FIELDS)
def test_bad_hook_declarations_are_refused(fields: dict[str, Any]) -> None:
    base: dict[str, Any] = {"name": "h", "event": PRE_TOOL_USE}
    with pytest.raises(hookengine.HookConfigError):
        Hook(**(base | fields))


def test_hook_sets_refuse_duplicates_and_non_hooks() -> None:
    runner = ScriptRunner(FakeClock(), {})
    with pytest.raises(hookengine.HookConfigError, match="duplicate"):
        Engine([hook("a"), hook("b"), hook("a", tool_prefix="x")], runner)
    with pytest.raises(hookengine.HookConfigError):
        Engine([hook("a"), "b"], runner)  # type: ignore[list-item]


# --- the Stage adapter ------------------------------------------------------------------------


async def execute(call: invoke.Call) -> str:
    return "ran"


@pytest.mark.anyio
async def test_stage_judges_pre_tool_use_with_the_calls_data() -> None:
    seen: list[Event] = []

    async def inspect(hook: Hook, event: Event) -> HookResult:
        seen.append(event)
        return DENY if event.payload["args"].get("path") == "/etc/passwd" else ALLOW

    results: list[hookengine.Result] = []
    hooks = [hook("guard", tool_prefix="write"), hook("post", event="post_tool_use")]
    hooks.append(hook("bg", blocking=False))
    e, _ = engine(hooks, {"guard": inspect, "post": DENY, "bg": OSError("down")})
    chain = invoke.Chain([hookengine.stage(e, observe=results.append)])
    ok = await chain.invoke(invoke.Call("write_file", {"path": "a"}, call_id="c1"), execute)
    assert (ok.executed, ok.result) == (True, "ran")
    payload = {"tool": "write_file", "args": {"path": "a"}, "call_id": "c1", "caller": ""}
    assert seen[0] == Event(PRE_TOOL_USE, "write_file", payload | {"depth": 0, "meta": {}})
    refused = await chain.invoke(invoke.Call("write_file", {"path": "/etc/passwd"}), execute)
    assert not refused.executed
    v = refused.verdict
    assert (v.decision, v.kind, v.stage) == (Decision.DENY, toolfail.Kind.PERMISSION, "hooks")
    assert "not on my watch" in v.reason
    assert [r.decision for r in results] == [Decision.ALLOW, Decision.DENY]
    assert all(r.failures[0].hook == "bg" for r in results)


@pytest.mark.anyio
async def test_stage_reports_a_hook_that_could_not_answer_as_internal() -> None:
    boom = RuntimeError("exit status 127")
    e, _ = engine([hook("a")], {"a": boom})
    verdict = await hookengine.stage(e, name="pre-hooks").judge(invoke.Call("x"))
    assert verdict.decision is Decision.DENY
    assert (verdict.kind, verdict.stage) == (toolfail.Kind.INTERNAL, "pre-hooks")
    assert verdict.cause is boom
    assert not verdict.retryable
