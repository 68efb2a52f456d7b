"""A long scripted session far past a small window, through the assembled app and real tools.

Shows, end to end: every request stays inside the window, compactions happen (events and summary
messages), a cut output is paged back with `read_spill` exactly, a repeated base64 image becomes
a placeholder, every request pairs each tool call with exactly one result (what a provider
demands), and the compaction archive plus the live history cover the whole stored history.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.projecttrust import trust_project
from yagent.agents.compaction import is_summary
from yagent.app import contextconfig as app_economy
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.kernel.context import reminder
from yagent.kernel.context.budget import approx_tokens
from yagent.llm import AssistantTurn, Message, Request, ToolCall, Usage
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.memory import message_body
from yagent.tools.yolo import Yolo

STEPS = 60
WINDOW = 6000
MARKER = "custom agent 'longrun'"
CONFIG = f"""
[llm]
max_tokens = 256
[agent]
default = "longrun"
deferred_tools = false
context_window = {WINDOW}
compact_at = 0.8
max_tool_output = 2000
[agents.longrun]
prompt = "Work through the task step by step."
tools = ["run_bash"]
max_steps = {STEPS + 10}
"""
LOCATOR = re.compile(r"locator='(sp-[0-9a-f]+)'")
PLACEHOLDER = re.compile(r"\[offloaded [^\]]*sha256:([0-9a-f]{64})[^\]]*\]")
DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def bash(command: str, cid: str) -> AssistantTurn:
    return call("run_bash", json.dumps({"command": command}), call_id=cid)


def read_cut_output(request: Request) -> AssistantTurn:
    last = request.messages[-1]
    match = LOCATOR.search(last.content)
    assert match, "the previous output was cut and names its locator"
    args = {"locator": match.group(1), "page": 2, "count": 1}
    return AssistantTurn("", (ToolCall("spill-1", "read_spill", json.dumps(args)),), Usage(10, 5))


def script() -> list[Any]:
    steps: list[Any] = []
    for i in range(STEPS):
        if i == 3:
            steps.append(read_cut_output)
        elif i in (10, 11):
            steps.append(bash("cat image.txt", f"img-{i}"))
        else:
            steps.append(bash(f"seq {i * 1000} {i * 1000 + 600}", f"c{i}"))
    steps.append(call("agent_exit", json.dumps({"reason": "done", "summary": "all steps ran"})))
    return steps


def summaries() -> list[Any]:
    def summarise(request: Request) -> AssistantTurn:
        body = request.messages[0].content
        assert not request.tools, "the summariser gets no tools"
        commands = re.findall(r'"command": "([^"]+)"', body)
        return say(f"Ran {len(commands)} commands so far, e.g. {commands[:2]}; continue.")

    return [summarise] * 100


def normal(content: str) -> str:
    """Content with inline images and their placeholders both reduced to the digest."""

    def digest(match: re.Match[str]) -> str:
        return "sha256:" + hashlib.sha256(base64.b64decode(match.group(1))).hexdigest()

    return PLACEHOLDER.sub(lambda m: "sha256:" + m.group(1), DATA_URI.sub(digest, content))


def key(message: dict[str, Any]) -> str:
    body = dict(message)
    body["content"] = normal(str(body.get("content", "")))
    return json.dumps(body, sort_keys=True)


def assert_paired(messages: tuple[Message, ...]) -> None:
    answered = Counter(m.tool_call_id for m in messages if m.role == "tool")
    issued: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in issued, "a result whose call is not in the request"
        for tool_call in message.tool_calls:
            issued.add(tool_call.id)
            assert answered[tool_call.id] == 1, "every call has exactly one result"


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_long_session_stays_in_the_window_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_economy, "OFFLOAD_MIN_BYTES", 1024)
    workspace = tmp_path / "ws"
    (workspace / ".yagent").mkdir(parents=True)
    (workspace / ".yagent" / "config.toml").write_text(CONFIG)
    trust_project(tmp_path / "home", workspace)  # [llm], [agents.*] need trust
    image = random.Random(6).randbytes(2048)
    uri = "data:image/png;base64," + base64.b64encode(image).decode()
    (workspace / "image.txt").write_text(uri + "\n")
    home = tmp_path / "home"
    engine = ScriptedEngine(
        {"longrun": script(), "summarizer": summaries()},
        markers={"longrun": MARKER, "summarizer": "You are the context summarizer"},
    )
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("Run the numbered steps.")
        events = app.store.events(sid)
        stored = [message_body(m) for m in app.store.messages(sid)]
        archives = app.store.archived(sid, "compaction")
        marker = app.sessions.open(
            sid
        ).marker  # the session's own band marker: summaries are judged under it
    assert result.status.value == "finished", result.error
    assert result.deliverable == "all steps ran"

    # every request stayed inside the window, far past it in total
    contexts = [e.payload for e in events if e.type == "context"]
    assert max(c["total"] for c in contexts) <= contexts[0]["window"]
    sent = sum(approx_tokens(m.content) for m in (m for m in map(Message.from_dict, stored)))
    assert sent > 5 * WINDOW, "the session is far past the window"

    # compactions happened, visibly, and the summary stands in the history
    compactions = [e.payload for e in events if e.type == "compaction"]
    assert len(compactions) >= 3
    assert all(c["compacted"] for c in compactions)
    with reminder.using(marker):
        assert any(is_summary(m) for m in result.messages)
        assert "archive:" in next(m.content for m in result.messages if is_summary(m))

    # provider shape: each request pairs every call with exactly one result
    requests = [r for ident, r in engine.requests if ident == "longrun"]
    assert len(requests) == STEPS + 1
    for request in requests:
        assert_paired(request.messages)
        assert request.messages[0].content == "Run the numbered steps.", "the task is pinned"

    # spill: the cut part comes back exactly through read_spill
    cut = next(m for m in stored if m.get("tool_call_id") == "c2")
    locator = LOCATOR.search(str(cut["content"]))
    assert locator is not None
    full = (home / "state" / sid / "spill" / sid / f"{locator.group(1)}.out").read_text()
    assert str(cut["content"]).startswith(full[:2000])
    assert "\n".join(str(n) for n in range(2000, 2601)) in json.loads(full)["text"]
    paged = next(m for m in stored if m.get("tool_call_id") == "spill-1")
    assert json.loads(str(paged["content"]))["text"] == full[2000:4000]

    # offload: the repeated image is a placeholder from its first appearance on
    first = next(m for m in stored if m.get("tool_call_id") == "img-10")
    again = next(m for m in stored if m.get("tool_call_id") == "img-11")
    digest = hashlib.sha256(image).hexdigest()
    assert uri in str(first["content"])
    assert f"sha256:{digest}" in str(again["content"])
    assert uri not in str(again["content"])
    assert (home / "state" / sid / "offload" / digest[:2] / digest).read_bytes() == image
    after = requests[12].messages
    assert not any(uri in m.content for m in after), "seen once, then only the placeholder"

    # nothing lost: archived + live messages cover the whole stored history
    covered = Counter(key(m) for a in archives for m in a.payload["messages"])
    with reminder.using(marker):
        covered.update(key(m.to_dict()) for m in result.messages if not is_summary(m))
    missing = [m for m in stored if covered[key(m)] == 0]
    assert missing == []
