"""The whole chain against local servers that speak each provider's wire protocol.

`yagent run` (the real command, config file, real SDK client, real tools, guard and session store)
fixes the demo project's bug while the "model" is a local HTTP server streaming the demo
conversation as OpenAI chat-completion chunks or Anthropic message events.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.llm.wire import (
    Reply,
    WireServer,
    an_block,
    an_delta,
    an_end,
    an_start,
    an_stop,
    anthropic_frames,
    oa_chunk,
    openai_frames,
    usage_chunk,
)
from yagent.cli import main
from yagent.cli.demo import SCRIPT, TASK, prepare
from yagent.llm.types import AssistantTurn

DEMO = Path(__file__).resolve().parents[2] / "demo"
TURNS: list[AssistantTurn] = [step for step in SCRIPT if isinstance(step, AssistantTurn)]


def openai_reply(turn: AssistantTurn) -> Reply:
    chunks: list[dict[str, Any]] = [oa_chunk({"role": "assistant", "content": ""})]
    chunks += [oa_chunk({"content": turn.text[i : i + 7]}) for i in range(0, len(turn.text), 7)]
    for index, tc in enumerate(turn.tool_calls):
        head = {
            "index": index,
            "id": tc.id,
            "type": "function",
            "function": {"name": tc.name, "arguments": ""},
        }
        chunks.append(oa_chunk({"tool_calls": [head]}))
        for i in range(0, len(tc.arguments), 11):
            part = {"index": index, "function": {"arguments": tc.arguments[i : i + 11]}}
            chunks.append(oa_chunk({"tool_calls": [part]}))
    chunks += [oa_chunk({}, finish="tool_calls"), usage_chunk(100, 20)]
    return Reply(events=openai_frames(chunks))


def anthropic_reply(turn: AssistantTurn) -> Reply:
    events: list[dict[str, Any]] = [an_start({"input_tokens": 100, "output_tokens": 1})]
    index = 0
    if turn.text:
        events += [
            an_block(0, {"type": "text", "text": ""}),
            an_delta(0, {"type": "text_delta", "text": turn.text}),
            an_stop(0),
        ]
        index = 1
    for tc in turn.tool_calls:
        events += [
            an_block(index, {"type": "tool_use", "id": tc.id, "name": tc.name, "input": {}}),
            an_delta(index, {"type": "input_json_delta", "partial_json": tc.arguments}),
            an_stop(index),
        ]
        index += 1
    events += an_end("tool_use", {"output_tokens": 20})
    return Reply(events=anthropic_frames(events))


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("YAGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "home"


def configure(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


def run_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, Any]]:
    ws = prepare(DEMO / "project", tmp_path)
    status = main(["run", "--json", "-y", "-C", str(ws), TASK])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    result = next(line for line in lines if line["type"] == "result")
    assert status == 0, result
    return ws, result


def test_openai_compatible_endpoint_fixes_the_bug(
    tmp_path: Path,
    env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    with WireServer([openai_reply(t) for t in TURNS]) as server:
        configure(
            env,
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\n'
            f'base_url = "{server.url}/v1"\nstep_retries = 0\n',
        )
        ws, result = run_demo(tmp_path, capsys)
        received = server.received
    assert result["status"] == "finished"
    assert "len(values) + 1" not in (ws / "calc.py").read_text()
    assert result["usage"]["input_tokens"] == 600
    first, last = received[0].body, received[-1].body
    assert first["model"] == "gpt-test"
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == sorted(names), "tool definitions reach the provider sorted by name"
    assert received[0].headers.get("authorization") == "Bearer sk-test-not-real"
    tool_msgs = [m for m in last["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 6
    assert all(m["tool_call_id"] for m in tool_msgs)


def test_anthropic_endpoint_fixes_the_bug(
    tmp_path: Path,
    env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    with WireServer([anthropic_reply(t) for t in TURNS]) as server:
        configure(
            env,
            f'[llm]\nprovider = "anthropic"\nmodel = "claude-test"\n'
            f'base_url = "{server.url}"\nstep_retries = 0\n',
        )
        ws, result = run_demo(tmp_path, capsys)
        received = server.received
    assert result["status"] == "finished"
    assert "len(values) + 1" not in (ws / "calc.py").read_text()
    body = received[-1].body
    assert body["model"] == "claude-test"
    results = [
        b
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 6
    assert body["tools"][-1].get("cache_control") == {"type": "ephemeral"}
