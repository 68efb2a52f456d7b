"""run_program in the tool layer: bindings from the Surface, each host call is Adapter.call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, FuncStage, Verdict
from yagent.kernel.ptc.budget import Budget
from yagent.kernel.ptc.dispatch import is_managed
from yagent.tools import hostservices, program, programbindings, registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.toolresult import ToolResult
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile
from yagent.toolspec.program import RUN_PROGRAM, RunProgramArgs

pytestmark = pytest.mark.anyio


async def no_hooks(call: Call) -> Verdict:
    return Verdict.allow()


def surface_for(
    workspace: Path, home: Path, *, stages: tuple[Any, ...] = (), external: tuple[Spec, ...] = ()
) -> Surface:
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    options = SurfaceOptions(host_stages=stages or (FuncStage("hooks", no_hooks),))
    return Surface(
        (*BUILTIN, RUN_PROGRAM), profile("coding"), guard, external=external, options=options
    )


def adapter_for(surface: Surface, workspace: Path, extra: dict[str, Any] | None = None) -> Adapter:
    ctx = ToolContext(workspace, surface)
    executors = registry.executors(extra)
    adapter = Adapter(ctx, executors)
    ctx.services.put(hostservices.ADAPTER_KEY, adapter)
    return adapter


@pytest.fixture
def files(workspace: Path) -> Path:
    logs = workspace / "logs"
    logs.mkdir()
    for i in range(5):
        (logs / f"run_{i}.log").write_text(f"== {i} failed, {10 - i} passed ==\n")
    return workspace


async def run(adapter: Adapter, source: str, **extra: Any) -> ToolResult:
    return await adapter.call(program.NAME, {"program": source, **extra}, "prog-1")


def value(result: ToolResult) -> Any:
    assert result.ok, result.content
    return json.loads(result.content)


async def test_bindings_are_the_visible_tools_minus_flow_and_itself(
    workspace: Path, home: Path
) -> None:
    surface = surface_for(workspace, home)
    bound = programbindings.bindings_for(surface)
    visible = {s.name for s in surface.visible_specs()}
    assert "read_file" in bound.tools
    assert "list_dir" in bound.tools
    assert program.NAME in visible
    assert program.NAME not in bound.tools
    for name in ("agent_exit", "ask_user_for_help", "load_tool"):
        assert name not in bound.tools
    assert set(bound.tools) <= visible
    section = programbindings.prompt_section(surface)
    assert "host.read_file(path, offset?, limit?)" in section
    assert section.startswith("## Programs (run_program)")


async def test_a_program_reads_many_files_and_returns_the_merged_value(
    files: Path, home: Path
) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    source = """
        const {entries} = await host.list_dir("logs");
        let failed = 0;
        for (const e of entries) {
            const r = await host.read_file(`logs/${e.name ?? e}`);
            failed += Number(/(\\d+) failed/.exec(JSON.stringify(r))[1]);
        }
        console.log("files", entries.length);
        return failed;
    """
    out = value(await run(adapter, source))
    assert out["value"] == 0 + 1 + 2 + 3 + 4
    assert out["host_calls"] == 6
    assert out["console"] == ["files 5"]


async def test_a_denied_call_is_denied_exactly_as_a_direct_call(
    files: Path, home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    adapter = adapter_for(surface_for(files, home), files)
    direct = await adapter.call("read_file", {"path": str(outside)}, "direct")
    assert not direct.ok
    source = f"""
        try {{ await host.read_file({json.dumps(str(outside))}); return "read"; }}
        catch (e) {{
            return {{kind: e.kind, message: e.message, stage: e.stage, denied: e.denied}};
        }}
    """
    seen = value(await run(adapter, source))["value"]
    body = json.loads(direct.content)
    assert seen == {
        "kind": direct.kind,
        "message": body["error"],
        "stage": body["stage"],
        "denied": True,
    }
    assert direct.kind == toolfail.Kind.NEEDS_APPROVAL  # a question nobody could answer


async def test_host_stages_judge_program_calls(files: Path, home: Path) -> None:
    async def hook(call: Call) -> Verdict:
        if call.tool == "write_file":
            return Verdict.deny("writes are frozen")
        return Verdict.allow()

    adapter = adapter_for(surface_for(files, home, stages=(FuncStage("freeze", hook),)), files)
    source = "await host.write_file('x.txt', 'data'); return 'wrote';"
    result = await run(adapter, source)
    assert not result.ok
    assert result.kind is toolfail.Kind.PERMISSION
    assert "writes are frozen" in json.loads(result.content)["error"]
    assert not (files / "x.txt").exists()


async def test_tool_failures_after_judgement_keep_their_kind(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    source = "try { await host.read_file('missing.txt'); } catch (e) { return [e.kind, e.denied]; }"
    kind, denied = value(await run(adapter, source))["value"]
    assert kind == "not_found"
    assert denied is False


async def test_program_errors_and_budgets_are_classified(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    broken = await run(adapter, "await host.list_dir('.');\nnull.x;")
    assert broken.kind is toolfail.Kind.RUNTIME  # it ran and threw: not a bad argument
    said = json.loads(broken.content)
    assert "TypeError" in said["error"]
    assert "(line 2)" in said["error"]
    assert "1 of 100 host calls" in said["error"], "the failure shows what was spent"
    assert "does not exist" not in said["guidance"]
    uncompiled = await run(adapter, "const x = ;")
    assert uncompiled.kind is toolfail.Kind.INVALID_ARGS
    looping = await run(adapter, "while (true) {}", timeout=0.3)
    assert looping.kind is toolfail.Kind.BUDGET
    error = json.loads(looping.content)["error"]
    assert "aborted (wall)" in error
    assert "of 0.3s wall, 0 of 100 host calls" in error


async def test_results_show_the_budget_spent(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    out = value(await run(adapter, "await host.list_dir('logs'); return 1;", timeout=7))
    spent = out["budget"]
    assert spent["calls"] == 1
    assert spent["calls_limit"] == Budget().calls
    assert 0 < spent["bytes"] <= spent["bytes_limit"] == Budget().bytes
    assert spent["wall_seconds"] >= 0
    assert spent["wall_limit_seconds"] == 7


async def test_truncation_and_unawaited_calls_are_visible(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    out = value(await run(adapter, "host.list_dir('.'); return 'y'.repeat(40000);"))
    assert out["value"] is None
    assert out["note"].startswith("result truncated")
    assert len(out["value_text"]) < 40000
    assert out["unawaited"] == "1 host calls were never awaited and did not run"


async def test_console_drops_are_reported(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    out = value(await run(adapter, "for (let i = 0; i < 5000; i++) console.log('line', i);"))
    assert out["console_dropped"] > 0


async def test_observer_and_parent_id_name_the_host_calls(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    seen: list[tuple[str, str, bool]] = []
    adapter.ctx.services.put(
        hostservices.OBSERVER_KEY, lambda call, rec: seen.append((call.call_id, call.tool, rec.ok))
    )
    value(await run(adapter, "await host.list_dir('.'); return 1;"))
    # the adapter names the program call ("prog-1"); its host calls are its children
    assert seen == [("prog-1#1", "list_dir", True)]


async def test_without_a_running_adapter_the_builtin_executors_serve(
    files: Path, home: Path
) -> None:
    ctx = ToolContext(files, surface_for(files, home))
    out = await registry.executors()[program.NAME](
        ctx, RunProgramArgs(program="return (await host.list_dir('logs')).entries.length;")
    )
    assert out["value"] == 5
    assert out["host_calls"] == 1
    assert out["budget"]["calls"] == 1


async def test_external_tools_are_reached_through_the_running_adapter(
    files: Path, home: Path
) -> None:
    ext = Spec("srv__count", "Count things.", {"type": "object"}, Effect.READ, Tier.COLD)

    async def count(ctx: ToolContext, args: Any) -> Any:
        return {"n": 7}

    surface = surface_for(files, home, external=(ext,))
    surface.disclosure.load(["srv__count"])
    adapter = adapter_for(surface, files, {"srv__count": count})
    out = value(await run(adapter, "return (await host.srv__count()).n;"))
    assert out["value"] == 7


async def test_colliding_visible_tools_make_programs_unavailable(files: Path, home: Path) -> None:
    specs = tuple(
        Spec(n, "x", {"type": "object"}, Effect.READ, Tier.COLD) for n in ("srv__a-b", "srv__a_b")
    )
    surface = surface_for(files, home, external=specs)
    surface.disclosure.load(["srv__a-b", "srv__a_b"])
    assert "unavailable" in programbindings.prompt_section(surface)
    result = await run(adapter_for(surface, files), "return 1;")
    assert result.kind is toolfail.Kind.INTERNAL
    assert "srv__a-b" in json.loads(result.content)["error"]


async def test_the_subprocess_form_serves_the_same_calls(
    files: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(program, "USE_SUBPROCESS", True)
    adapter = adapter_for(surface_for(files, home), files)
    out = value(await run(adapter, "return (await host.list_dir('logs')).entries.length;"))
    assert out["value"] == 5


async def test_the_dispatcher_reports_the_surface_chain(files: Path, home: Path) -> None:
    adapter = adapter_for(surface_for(files, home), files)
    dispatcher = program.AdapterDispatcher(adapter)
    assert dispatcher.chain is adapter.surface.chain
    assert is_managed(dispatcher)
    reply = await dispatcher.dispatch(Call("no_such_tool", {}))
    assert reply.ok is False
    assert reply.judged
    assert reply.kind is toolfail.Kind.FORBIDDEN
    assert program._failure_body("not json") == {}
    assert program._failure_body("[1]") == {}
