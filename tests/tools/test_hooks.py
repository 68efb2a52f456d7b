"""Command hooks through the real hookengine and real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel.judge import hookengine
from yagent.kernel.judge.invoke import Call, Chain, Decision
from yagent.tools import hooknames
from yagent.tools.hooks import HookConfigError, HookRunError, body_of, from_config, interpret

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


def test_broken_json_is_a_failure_carrying_the_raw_output() -> None:
    raw = '{"decision":"deny","reason":"no curl",}'
    with pytest.raises(HookRunError, match="not valid JSON") as caught:
        interpret("h", 0, raw, "")
    assert raw in str(caught.value)
    with pytest.raises(HookRunError, match="not an object"):
        interpret("h", 0, '["deny"]', "")
    with pytest.raises(HookRunError, match="expected one of"):
        interpret("h", 0, '{"decision": "dney"}', "")
    with pytest.raises(HookRunError, match="expected one of"):
        interpret("h", 0, '{"hookSpecificOutput": {"permissionDecision": "maybe"}}', "")


def test_the_strictest_answer_wins_and_output_stays_in_the_reason() -> None:
    both = (
        '{"decision": "approve", "hookSpecificOutput": {"permissionDecision": "ask", '
        '"permissionDecisionReason": "ops"}}'
    )
    asked = interpret("h", 0, both, "")
    assert (asked.decision, asked.reason) == (Decision.PROMPT, "ops")
    stop = interpret("h", 0, '{"continue": false, "stopReason": "freeze"}', "")
    assert (stop.decision, stop.reason) == (Decision.DENY, "freeze")
    said = interpret("h", 2, "see POLICY.md", "no")
    assert said.reason == "no [stdout: see POLICY.md]"
    long = interpret("h", 2, "", "x" * 5000)
    assert "[cut: 3000 more characters]" in long.reason


def test_exit_1_is_a_failure_for_yagent_hooks_and_a_notice_for_claude_hooks() -> None:
    with pytest.raises(HookRunError, match="status 1: boom"):
        interpret("h", 1, "", "boom")
    went_on = interpret("h", 1, "", "boom", claude=True)
    assert went_on.decision is Decision.ALLOW
    assert "non-blocking error" in went_on.reason
    assert "boom" in went_on.reason


def test_event_names_are_checked_and_claude_spellings_are_aliases(tmp_path: Path) -> None:
    assert hooknames.canonical_event("PostToolUse") == "post_tool_use"
    with pytest.raises(hooknames.UnknownEventError, match="did you mean 'user_prompt_submit'"):
        hooknames.canonical_event("user_prompt_submitted")
    with pytest.raises(hooknames.UnknownEventError, match="did you mean 'PreToolUse'"):
        hooknames.canonical_event("PRE-TOOL-USE")
    with pytest.raises(hooknames.UnsupportedEventError):
        hooknames.canonical_event("Notification")
    with pytest.raises(HookConfigError, match="did you mean 'stop'"):
        from_config([{"command": "x", "event": "stpo"}], cwd=tmp_path)
    engine, _ = from_config([{"command": "x", "event": "Stop"}], cwd=tmp_path)
    assert engine.hooks[0].event == "stop"


def test_claude_matchers_are_regexes_over_claudes_tool_names(tmp_path: Path) -> None:
    entries = [
        {"name": "w", "command": "x", "style": "claude", "matcher": "Write|Edit"},
        {"name": "all", "command": "x", "style": "claude", "matcher": "*"},
        {"name": "ours", "command": "x", "style": "claude", "matcher": "run_.*"},
    ]
    engine, _ = from_config(entries, cwd=tmp_path)

    def names(tool: str) -> list[str]:
        event = hookengine.event_of(Call(tool, {}), aliases=hooknames.tool_aliases(tool))
        return [h.name for h in engine.matching(event)]

    assert names("write_file") == ["all", "w"]
    assert names("search_replace_in_file") == ["all", "w"]
    assert names("run_bash") == ["all", "ours"]
    assert names("write_file_extra") == ["all"], "the whole name must match"
    with pytest.raises(HookConfigError, match="not a regular expression"):
        from_config([{"command": "x", "style": "claude", "matcher": "("}], cwd=tmp_path)


def test_claude_payload_uses_claudes_names(tmp_path: Path) -> None:
    call = Call("read_file", {"path": "a.py"}, call_id="c9")
    event = hookengine.event_of(call, context={"session_id": "s1"}, aliases=("Read",))
    body = body_of(event, cwd=tmp_path, claude=True)
    assert (body["hook_event_name"], body["tool_name"], body["yagent_tool_name"]) == (
        "PreToolUse",
        "Read",
        "read_file",
    )
    assert body["tool_input"] == {"path": "a.py", "file_path": "a.py"}
    assert (body["session_id"], body["cwd"], body["call_id"]) == ("s1", str(tmp_path), "c9")
    assert body_of(event, cwd=tmp_path)["tool_name"] == "read_file"
