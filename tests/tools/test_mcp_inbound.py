"""What a server asks of yagent — roots, elicitation, sampling — against the real reference server
(server-everything lists get-roots-list, trigger-elicitation-request and trigger-sampling-request
only to a client that declares the capability). The person is the only double: an object with
`ask` that answers as a person at a terminal would."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.mcpservers import everything_http, everything_stdio  # noqa: F401 - a fixture
from yagent.kernel.judge import auditgate
from yagent.tools.adapter import ToolContext
from yagent.tools.confirm import Answer
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.invocation import PUBLISH
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.inbound import SAMPLER_KEY, Inbound, SampleReply, SampleRequest
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


class Person:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, Mapping[str, Any]]] = []

    async def ask(self, kind: str, payload: Mapping[str, Any], **_: Any) -> Answer:
        self.asked.append((kind, payload))
        return self.answers.pop(0)


def ev(**extra: Any) -> ServerConfig:
    return ServerConfig.from_mapping("ev", {**everything_stdio(), **extra})


def context(
    workspace: Path,
    person: Person | None,
    *,
    yolo: Yolo = Yolo.OFF,
    audit: auditgate.AuditGate | None = None,
) -> ToolContext:
    guard = WorkspaceGuard(workspace, yolo=yolo)
    surface = Surface(
        BUILTIN, profile("coding"), guard, options=SurfaceOptions(yolo=yolo, audit=audit)
    )
    return ToolContext(workspace, surface, confirm=person)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_roots_are_the_workspace_and_conditional_tools_are_offered(workspace: Path) -> None:
    uri = workspace.as_uri()  # tmp_path is already resolved
    async with McpTools((ev(),), Inbound(workspace)) as mcp:
        names = {s.name for s in mcp.specs}
        assert {"ev__get-roots-list", "ev__trigger-elicitation-request"} <= names
        assert "ev__trigger-sampling-request" not in names  # sampling is off unless enabled
        out = await mcp.executors["ev__get-roots-list"](None, {})  # type: ignore[arg-type]
    assert uri in out["content"]
    assert "1 total" in out["content"]


@pytest.mark.anyio
async def test_elicitation_goes_to_the_person_and_their_answer_to_the_server(
    workspace: Path,
) -> None:
    person = Person(Answer("r", True, json.dumps({"name": "Ada", "check": True})))
    async with McpTools((ev(),), Inbound(workspace)) as mcp:
        run = mcp.executors["ev__trigger-elicitation-request"]
        out = await run(context(workspace, person), {})
    kind, payload = person.asked[0]
    assert kind == "question"
    assert "MCP server ev asks" in payload["question"]
    assert "name (string)" in payload["question"]
    assert "User provided the requested information" in out["content"]
    assert "Name: Ada" in out["content"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answer",
    [
        Answer("r", False, "no interactive terminal to ask"),
        Answer("r", True, ""),
        Answer("r", True, json.dumps({"name": "Ada", "ssn": "123"})),  # not asked for
        Answer("r", True, json.dumps({"name": 7})),  # wrong type
    ],
)
async def test_elicitation_declines_rather_than_send_what_was_not_given(
    workspace: Path, answer: Answer
) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    ctx = context(workspace, Person(answer))
    ctx.services.put(PUBLISH, lambda kind, payload: events.append((kind, payload)))
    async with McpTools((ev(),), Inbound(workspace)) as mcp:
        out = await mcp.executors["ev__trigger-elicitation-request"](ctx, {})
    assert "declined" in out["content"]
    assert events[-1][0] == "mcp_request"
    assert events[-1][1]["outcome"] == "declined"


@pytest.mark.anyio
async def test_elicitation_without_a_person_is_declined_even_under_y(workspace: Path) -> None:
    async with McpTools((ev(),), Inbound(workspace)) as mcp:
        run = mcp.executors["ev__trigger-elicitation-request"]
        out = await run(context(workspace, None, yolo=Yolo.YOLO), {})
    assert "declined" in out["content"]


async def _sampler(request: SampleRequest) -> SampleReply:
    assert request.server == "ev"
    assert request.system == "You are a helpful test server."
    role, text = request.messages[0]
    return SampleReply(f"echo of {role}: {text}", "model-x")


@pytest.mark.anyio
async def test_sampling_when_enabled_asks_the_person_then_uses_the_host_model(
    workspace: Path,
) -> None:
    person = Person(Answer("r", True))
    ctx = context(workspace, person)
    ctx.services.put(SAMPLER_KEY, _sampler)
    async with McpTools((ev(sampling=True),), Inbound(workspace)) as mcp:
        run = mcp.executors["ev__trigger-sampling-request"]
        out = await run(ctx, {"prompt": "hello", "maxTokens": 50})
    assert person.asked[0][0] == "approval"
    assert "asks to use your model" in person.asked[0][1]["reason"]
    assert "echo of user: Resource trigger-sampling-request context: hello" in out["content"]
    assert "model-x" in out["content"]


@pytest.mark.anyio
async def test_sampling_refused_by_the_person_by_the_gate_or_without_anyone(
    workspace: Path,
) -> None:
    strict = auditgate.AuditGate(auditgate.Thresholds(prompt_at=0.1, deny_at=0.2))
    cases = [
        (context(workspace, Person(Answer("r", False, "not now"))), "not now"),
        (context(workspace, None), "none is attached"),
        (context(workspace, None, yolo=Yolo.YOLO, audit=strict), "deny threshold"),
    ]
    async with McpTools((ev(sampling=True),), Inbound(workspace)) as mcp:
        run = mcp.executors["ev__trigger-sampling-request"]
        for ctx, why in cases:
            ctx.services.put(SAMPLER_KEY, _sampler)
            with pytest.raises(Exception, match=why):
                await run(ctx, {"prompt": "hello"})
        # -y stands for the person's approval; the gate (default thresholds) allows it
        ctx = context(workspace, None, yolo=Yolo.YOLO)
        ctx.services.put(SAMPLER_KEY, _sampler)
        out = await run(ctx, {"prompt": "hi"})
    assert "echo of user" in out["content"]
