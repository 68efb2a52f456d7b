"""In-process runs: values, forms, console, caps, program errors, budgets."""

from __future__ import annotations

import json

import anyio
import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.budget import MIB, Budget
from yagent.kernel.ptc.dispatch import ChainDispatcher
from yagent.kernel.ptc.errors import AbortedError, Cause
from yagent.kernel.ptc.runner import run

from .conftest import Tools

pytestmark = pytest.mark.anyio

MEMORY_BOMB = "const a = []; while (true) a.push('x'.repeat(1000) + a.length);"


async def test_a_program_returns_its_value_and_calls_in_both_forms(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        const a = await host.fetch_data("k1");
        const b = await host.fetch_data({key: "k2", max_items: 5});
        const c = await host.fetch_data("k3", undefined, true);
        return {a: a.args, b: b.args, c: c.args};
    """
    result = await run(program, bindings, dispatcher)
    assert result.ok
    assert not result.truncated
    assert result.value == {
        "a": {"key": "k1"},
        "b": {"key": "k2", "max-items": 5},
        "c": {"key": "k3", "verbose": True},
    }
    assert json.loads(result.output) == result.value
    assert [c.args for c in tools.ran] == [
        {"key": "k1"},
        {"key": "k2", "max-items": 5},
        {"key": "k3", "verbose": True},
    ]
    assert [r.call_id for r in result.calls] == ["ptc#1", "ptc#2", "ptc#3"]
    assert result.usage.calls == 3
    assert result.usage.bytes == sum(r.bytes for r in result.calls)


async def test_undefined_object_fields_are_absent_and_null_stays_null(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = "await host.fetch_data({key: 'k', max_items: undefined, verbose: null});"
    await run(program, bindings, dispatcher)
    assert [dict(c.args) for c in tools.ran] == [{"key": "k", "verbose": None}]


async def test_parallel_calls_run_in_the_order_the_program_made_them(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        const keys = ["a", "b", "c", "d"];
        const rows = await Promise.all(keys.map((k) => host.fetch_data(k)));
        return rows.map((r) => r.data).join(",");
    """
    result = await run(program, bindings, dispatcher)
    assert result.value == "value-of-a,value-of-b,value-of-c,value-of-d"
    assert [c.args["key"] for c in tools.ran] == ["a", "b", "c", "d"]


async def test_pure_computation_needs_no_bindings() -> None:
    result = await run("let s = 0; for (let i = 1; i <= 100; i++) s += i; return s;")
    assert result.value == 5050
    assert result.calls == ()


async def test_undefined_result_is_null_and_render_shows_value() -> None:
    result = await run("console.log('nothing to return');")
    assert result.ok
    assert result.value is None
    assert result.output == "null"
    assert result.render() == "null\nconsole:\nnothing to return"


async def test_console_is_captured_and_capped_visibly() -> None:
    program = """
        console.log("a", 1, {x: [1, 2]});
        console.warn("careful");
        console.error("bad");
        for (let i = 0; i < 50; i++) console.log("line " + i);
        return 1;
    """
    result = await run(program, budget=Budget(logs=40))
    assert result.logs[:3] == ('a 1 {"x":[1,2]}', "warn: careful", "error: bad")
    assert sum(len(line) for line in result.logs) <= 40
    assert result.logs_dropped > 0
    assert f"[console: {result.logs_dropped} more lines dropped]" in result.render()


async def test_the_final_value_is_capped_with_visible_truncation() -> None:
    result = await run("return 'x'.repeat(5000);", budget=Budget(result=100))
    assert result.ok
    assert result.truncated
    assert len(result.output) == 100
    assert result.value is None
    assert result.value_size == 5002
    assert "[result truncated: 100 of 5002 characters shown" in result.render()


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ("const x = 1;\nnull.foo;", "TypeError: Cannot read properties of null (reading 'foo')"),
        ("throw new RangeError('too far');", "RangeError: too far"),
        ("throw 'plain';", "uncaught value: plain"),
        ("return 10n;", "not JSON-serialisable"),
        ("await new Promise(() => {});", "nothing can settle"),
        ("await new Promise((r) => setTimeout(r, 10));", "timers are not available"),
    ],
)
async def test_a_program_that_throws_is_a_runtime_error(program: str, expected: str) -> None:
    result = await run(program)
    assert not result.ok
    assert expected in result.error
    assert result.kind is toolfail.Kind.RUNTIME
    assert result.render().startswith("error (runtime): ")


async def test_a_program_that_does_not_compile_is_invalid_args() -> None:
    result = await run("const x = ;")
    assert not result.ok
    assert "SyntaxError" in result.error
    assert result.kind is toolfail.Kind.INVALID_ARGS


async def test_an_error_names_the_program_line() -> None:
    result = await run("const a = 1;\nconst b = 2;\nundefinedName.x;")
    assert result.error.endswith("(line 3)")


async def test_scheduling_outside_the_driver_is_removed() -> None:
    program = """
        return [typeof WebAssembly, typeof FinalizationRegistry, typeof Atomics.waitAsync,
                Object.isFrozen(host), Object.isFrozen(__ptc)];
    """
    result = await run(program)
    assert result.value == ["undefined", "undefined", "undefined", True, True]


async def test_calls_never_awaited_do_not_run_and_are_counted(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    result = await run(
        "host.fetch_data('x'); host.fetch_data('y'); return 1;", bindings, dispatcher
    )
    assert result.value == 1
    assert result.unawaited == 2
    assert tools.ran == []
    assert "[2 host calls were never awaited and did not run]" in result.render()


async def test_unserialisable_arguments_reject_in_the_program(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        const o = {}; o.self = o;
        try { await host.fetch_data(o); } catch (e) { return e.message; }
    """
    result = await run(program, bindings, dispatcher)
    assert "arguments are not JSON-serialisable" in result.value
    assert tools.ran == []


async def test_arguments_that_do_not_fit_the_form_reject_without_running(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        try { await host.fetch_data(); } catch (e) { return [e.kind, e.message, e.denied]; }
    """
    result = await run(program, bindings, dispatcher)
    kind, message, denied = result.value
    assert kind == "invalid_args"
    assert "required argument 'key'" in message
    assert denied is True
    assert tools.ran == []
    assert result.calls[0].ok is False
    assert result.calls[0].executed is False


async def test_an_infinite_loop_is_stopped_by_the_wall_budget() -> None:
    with pytest.raises(AbortedError) as info:
        await run("console.log('start'); while (true) {}", budget=Budget(wall=0.3))
    err = info.value
    assert err.cause is Cause.WALL
    assert err.budget == "wall"
    assert toolfail.classify(err) is toolfail.Kind.BUDGET
    assert err.logs == ()  # the loop never let a drain happen: nothing was claimed


async def test_an_infinite_loop_after_a_host_call_is_stopped_too(
    bindings: Bindings, dispatcher: ChainDispatcher
) -> None:
    program = "console.log('before'); await host.fetch_data('k'); while (true) {}"
    with pytest.raises(AbortedError) as info:
        await run(program, bindings, dispatcher, budget=Budget(wall=0.3))
    assert info.value.cause is Cause.WALL
    assert info.value.logs == ("before",)
    assert [c.tool for c in info.value.calls] == ["fetch-data"]


async def test_the_callers_deadline_wins_when_it_is_earlier() -> None:
    with (
        anyio.fail_after(5),
        anyio.CancelScope(deadline=anyio.current_time() + 0.3),
        pytest.raises(AbortedError) as info,
    ):
        await run("while (true) {}", budget=Budget(wall=60))
    assert info.value.cause is Cause.DEADLINE
    assert info.value.budget == "deadline"


async def test_a_memory_bomb_is_stopped_by_the_heap_limit() -> None:
    with pytest.raises(AbortedError) as info:
        await run(MEMORY_BOMB, budget=Budget(heap=32 * MIB, wall=20))
    assert info.value.cause is Cause.HEAP
    assert toolfail.classify(info.value) is toolfail.Kind.BUDGET


async def test_a_memory_bomb_after_a_host_call_is_stopped_too(
    bindings: Bindings, dispatcher: ChainDispatcher
) -> None:
    program = "await host.fetch_data('k');" + MEMORY_BOMB
    with pytest.raises(AbortedError) as info:
        await run(program, bindings, dispatcher, budget=Budget(heap=32 * MIB, wall=20))
    assert info.value.cause is Cause.HEAP


async def test_the_call_budget_stops_before_the_extra_call_runs(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = "for (let i = 0; ; i++) await host.fetch_data('k' + i);"
    with pytest.raises(AbortedError) as info:
        await run(program, bindings, dispatcher, budget=Budget(calls=3))
    err = info.value
    assert err.cause is Cause.CALLS
    assert err.budget == "calls"
    assert len(tools.ran) == 3
    assert len(err.calls) == 3
    assert err.usage is not None
    assert err.usage.calls == 3


async def test_the_byte_budget_stops_before_the_reply_is_delivered(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        const seen = [];
        for (let i = 0; i < 10; i++) { seen.push((await host.fetch_data('k' + i)).data); }
        return seen;
    """
    with pytest.raises(AbortedError) as info:
        await run(program, bindings, dispatcher, budget=Budget(bytes=200))
    err = info.value
    assert err.cause is Cause.BYTES
    assert err.usage is not None
    assert err.usage.bytes <= 200
    assert len(tools.ran) == len(err.calls) + 1  # the last reply ran but never reached the program


async def test_budget_refuses_non_positive_figures() -> None:
    with pytest.raises(ValueError, match="wall"):
        Budget(wall=0)
    with pytest.raises(ValueError, match="calls"):
        Budget(calls=-1)
    with pytest.raises(ValueError, match="heap"):
        Budget(heap=float("inf"))  # type: ignore[arg-type]
