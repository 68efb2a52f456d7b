"""Command hooks through the real hookengine and real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel import hookengine
from yagent.kernel.invoke import Call, Chain, Decision
from yagent.tools.hooks import HookConfigError, HookRunError, from_config, interpret

CALL = Call("run_bash", {"command": "ls"}, call_id="c1")


async def decide(tmp_path: Path, entries: list[dict[str, object]]) -> hookengine.Result:
    engine, _ = from_config(entries, cwd=tmp_path)
    return await engine.evaluate(hookengine.event_of(CALL))


@pytest.mark.anyio
async def test_exit_2_blocks_with_stderr(tmp_path: Path) -> None:
    res = await decide(tmp_path, [{"name": "h", "command": "echo 'not today' >&2; exit 2"}])
    assert res.decision is Decision.DENY
    assert "not today" in res.reason


@pytest.mark.anyio
async def test_json_deny_blocks_and_input_arrives(tmp_path: Path) -> None:
    script = (
        "python3 -c 'import json,sys; d=json.load(sys.stdin); "
        'print(json.dumps({"decision": "block", "reason": d["tool_name"] + ":" + '
        'd["tool_input"]["command"]}))\''
    )
    res = await decide(tmp_path, [{"name": "h", "command": script}])
    assert res.decision is Decision.DENY
    assert res.reason.endswith("run_bash:ls")


@pytest.mark.anyio
async def test_exit_0_allows_and_matcher_filters(tmp_path: Path) -> None:
    res = await decide(
        tmp_path,
        [
            {"name": "a", "command": "exit 0"},
            {"name": "b", "matcher": "write_", "command": "exit 2"},
        ],
    )
    assert res.decision is Decision.ALLOW


@pytest.mark.anyio
async def test_failing_hook_denies_when_blocking_and_is_recorded_otherwise(tmp_path: Path) -> None:
    res = await decide(tmp_path, [{"name": "h", "command": "exit 7"}])
    assert res.decision is Decision.DENY
    assert res.fail_closed
    res = await decide(tmp_path, [{"name": "h", "command": "exit 7", "blocking": False}])
    assert res.decision is Decision.ALLOW
    assert [run.hook for run in res.failures] == ["h"]


@pytest.mark.anyio
async def test_timeout_kills_and_denies_by_default(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    res = await decide(
        tmp_path, [{"name": "h", "command": f"sleep 5; touch {marker}", "timeout": 0.3}]
    )
    assert res.decision is Decision.DENY
    assert not marker.exists()
    res = await decide(
        tmp_path,
        [{"name": "h", "command": "sleep 5", "timeout": 0.3, "on_timeout": "allow"}],
    )
    assert res.decision is Decision.ALLOW


@pytest.mark.anyio
async def test_as_a_chain_stage(tmp_path: Path) -> None:
    engine, _ = from_config([{"name": "h", "command": "exit 2"}], cwd=tmp_path)
    judgement = await Chain([hookengine.stage(engine)]).judge(CALL)
    assert judgement.verdict.decision is Decision.DENY
    assert judgement.verdict.stage == "hooks"


def test_interpret_forms() -> None:
    deny = '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "r"}}'
    assert interpret("h", 0, deny, "").decision is Decision.DENY
    assert interpret("h", 0, deny, "").reason == "r"
    assert interpret("h", 0, "not json", "").decision is Decision.ALLOW
    assert interpret("h", 2, "", "").reason == "hook h blocked this call"
    with pytest.raises(HookRunError, match="status 1"):
        interpret("h", 1, "", "boom")


def test_config_errors(tmp_path: Path) -> None:
    with pytest.raises(HookConfigError, match="unknown keys"):
        from_config([{"command": "x", "typo": 1}], cwd=tmp_path)
    with pytest.raises(HookConfigError, match="command"):
        from_config([{"name": "x"}], cwd=tmp_path)
    with pytest.raises(HookConfigError, match="timeout"):
        from_config([{"command": "x", "timeout": -1}], cwd=tmp_path)


@pytest.mark.anyio
async def test_unconfigured_hook_name_fails_closed(tmp_path: Path) -> None:
    _, runner = from_config([], cwd=tmp_path)
    with pytest.raises(HookRunError, match="no command"):
        await runner.run(hookengine.Hook("ghost", "pre_tool_use"), hookengine.event_of(CALL))
