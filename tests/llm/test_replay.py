"""Recording and ReplayEngine: per-identity replay, divergence reporting."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from yagent.kernel.judge.toolfail import Kind
from yagent.llm.replay import (
    Divergence,
    RecordedStep,
    Recording,
    RecordingFormatError,
    ReplayEngine,
)
from yagent.llm.scripted import ScriptedEngine, call, calls, say
from yagent.llm.types import (
    AssistantTurn,
    Engine,
    EngineError,
    Message,
    Request,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
    complete,
)

CODING = "You are the Coding agent. Fix bugs."
REPO = "You are the Repo agent. Analyse."


def read_tool(root: Path, arguments: str) -> str:
    return (root / json.loads(arguments)["path"]).read_text()


async def run_loop(engine: Engine, system: str, task: str, root: Path) -> list[Message]:
    """A minimal LLM–tool loop: tools really run (reading files under `root`)."""
    messages = [Message("user", task)]
    for _ in range(10):
        turn = await complete(engine, Request(system=system, messages=tuple(messages)))
        messages.append(turn.message())
        if not turn.tool_calls:
            return messages
        messages.extend(
            Message("tool", read_tool(root, c.arguments), tool_call_id=c.id, name=c.name)
            for c in turn.tool_calls
        )
    raise AssertionError("loop did not finish")


def scripted(markers: dict[str, str]) -> ScriptedEngine:
    return ScriptedEngine(
        {
            "coding": [
                calls(
                    [("read", '{"path": "a.txt"}', "c1"), ("read", '{"path": "b.txt"}', "c2")],
                    text="Reading.",
                ),
                call("read", '{"path": "a.txt"}', call_id="c3"),
                say("Fixed the bug in a.txt."),
            ],
            "repo": [say("Nothing to analyse.")],
        },
        markers=markers,
    )


MARKERS = {"coding": "Coding agent", "repo": "Repo agent"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("beta")
    return tmp_path


async def record(project: Path, path: Path) -> None:
    engine = scripted(MARKERS)
    recording = Recording()
    recording.add_transcript("coding", await run_loop(engine, CODING, "fix", project))
    recording.add_transcript("repo", await run_loop(engine, REPO, "look", project))
    recording.save(path)


@pytest.mark.anyio
async def test_a_recorded_session_replays_without_divergence(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    await record(project, path)
    recording = Recording.load(path)
    assert [len(recording.steps(i)) for i in ("coding", "repo")] == [3, 1]
    assert recording.steps("coding")[0].results == {"c1": "alpha", "c2": "beta"}
    replay = ReplayEngine(recording, markers=MARKERS)
    # interleaved identities: each is served from its own recording, not a global counter
    repo_messages = await run_loop(replay, REPO, "look", project)
    coding_messages = await run_loop(replay, CODING, "fix", project)
    assert repo_messages[-1].content == "Nothing to analyse."
    assert coding_messages[-1].content == "Fixed the bug in a.txt."
    assert replay.divergences == []
    assert replay.remaining("coding") == 0
    assert replay.unverified() == []
    assert [ident for ident, _ in replay.requests] == ["repo", "coding", "coding", "coding"]


@pytest.mark.anyio
async def test_changed_tool_results_are_reported_as_divergences_and_replay_goes_on(
    project: Path, tmp_path: Path
) -> None:
    path = tmp_path / "session.json"
    await record(project, path)
    (project / "a.txt").write_text("ALPHA v2")
    replay = ReplayEngine(Recording.load(path), markers=MARKERS)
    messages = await run_loop(replay, CODING, "fix", project)
    assert messages[-1].content == "Fixed the bug in a.txt."
    assert replay.divergences == [
        Divergence("coding", 0, "c1", "read", "alpha", "ALPHA v2"),
        Divergence("coding", 1, "c3", "read", "alpha", "ALPHA v2"),
    ]


@pytest.mark.anyio
async def test_a_missing_or_unrecorded_result_diverges_and_normalise_ignores_volatile_text() -> (
    None
):
    turn = AssistantTurn("", (ToolCall("x", "run", "{}"), ToolCall("y", "run", "{}")))
    recording = Recording()
    recording.add("coding", turn, {"x": "took 3.1s"})
    recording.add("coding", AssistantTurn("done"))
    replay = ReplayEngine(recording, normalise=lambda text: text.split("took")[0], model_name="rec")
    first = Request(system="coding", messages=(Message("user", "go"),))
    await complete(replay, first)
    answered = (
        *first.messages,
        turn.message(),
        Message("tool", "took 9.9s", tool_call_id="x"),
        Message("tool", "extra", tool_call_id="y"),
    )
    done = await complete(replay, Request(system="coding", messages=answered))
    assert done.model == "rec"
    assert replay.divergences == [Divergence("coding", 0, "y", "run", None, "extra")]

    recording2 = Recording(
        {"coding": [RecordedStep(turn, {"x": "a", "y": "b"}), RecordedStep(AssistantTurn("ok"))]}
    )
    replay2 = ReplayEngine(recording2)
    await complete(replay2, first)
    await complete(
        replay2, Request(system="coding", messages=(Message("tool", "a", tool_call_id="x"),))
    )
    assert replay2.divergences == [Divergence("coding", 0, "y", "run", "b", None)]


@pytest.mark.anyio
async def test_running_past_the_recording_is_an_error_after_checking_the_last_results() -> None:
    recording = Recording()
    recording.add("coding", AssistantTurn("", (ToolCall("c1", "run", "{}"),)), {"c1": "ok"})
    replay = ReplayEngine(recording)
    req = Request(system="coding agent", messages=())
    await complete(replay, req)
    assert replay.unverified() == [("coding", 0)]
    with pytest.raises(EngineError) as info:
        await complete(
            replay,
            Request(system="coding agent", messages=(Message("tool", "bad", tool_call_id="c1"),)),
        )
    assert info.value.kind is Kind.INTERNAL
    assert "past the recording" in str(info.value)
    assert "'coding'" in str(info.value)
    assert replay.divergences == [Divergence("coding", 0, "c1", "run", "ok", "bad")]
    assert replay.unverified() == []
    with pytest.raises(EngineError):
        await complete(replay, req)
    assert len(replay.divergences) == 1  # compared once, not again


@pytest.mark.anyio
async def test_replay_streams_like_a_model_and_keeps_recorded_usage_and_model() -> None:
    turn = AssistantTurn(
        "x" * 40,
        (ToolCall("a", "t1", "{}"), ToolCall("b", "t2", "{}")),
        Usage(5, 6, 7, 8),
        "tool_calls",
        "gpt-rec",
    )
    replay = ReplayEngine(Recording({"coding": [RecordedStep(turn)]}))
    events = [e async for e in replay.stream(Request(system="coding", messages=()))]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["x" * 16, "x" * 16, "x" * 8]
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(0, "a", "t1"),
        ToolCallStarted(1, "b", "t2"),
    ]
    assert events[-1] == TurnDone(turn)
    assert replay.model == "replay"


@pytest.mark.anyio
async def test_g4_unknown_identity_and_cancellation() -> None:
    replay = ReplayEngine(Recording({"coding": [RecordedStep(AssistantTurn("hi"))]}))
    with pytest.raises(EngineError) as info:
        await complete(replay, Request(system="You are someone else", messages=()))
    assert info.value.kind is Kind.INTERNAL
    assert "replay engine" in str(info.value)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await complete(replay, Request(system="coding", messages=()))
    assert scope.cancelled_caught
    assert replay.remaining("coding") == 1


def test_recording_round_trips_through_json(tmp_path: Path) -> None:
    recording = Recording()
    recording.add(
        "coding",
        AssistantTurn("t", (ToolCall("c", "n", '{"a": 1}'),), Usage(1, 2, 3, 4), "tool_calls", "m"),
        {"c": "résultat"},
    )
    recording.add("repo", AssistantTurn("done"))
    path = tmp_path / "r.json"
    recording.save(path)
    assert json.loads(path.read_text())["version"] == 1
    assert Recording.load(path) == recording


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ([], "recording: expected an object"),
        ({"version": 2, "agents": {}}, "recording.version"),
        ({"version": 1, "agents": []}, "recording.agents: expected an object"),
        ({"version": 1, "agents": {"a": {}}}, "recording.agents['a']: expected a list"),
        ({"version": 1, "agents": {"a": [1]}}, "recording.agents['a'][0]: expected an object"),
        ({"version": 1, "agents": {"a": [{}]}}, "recording.agents['a'][0].turn"),
        (
            {"version": 1, "agents": {"a": [{"turn": {"tool_calls": [{"id": 1, "name": "n"}]}}]}},
            "tool_calls[0].id",
        ),
        (
            {"version": 1, "agents": {"a": [{"turn": {"tool_calls": {}}}]}},
            "turn.tool_calls: expected a list",
        ),
        ({"version": 1, "agents": {"a": [{"turn": {"usage": {"bogus": 1}}}]}}, "turn.usage"),
        (
            {"version": 1, "agents": {"a": [{"turn": {"usage": {"input_tokens": "x"}}}]}},
            "turn.usage",
        ),
        ({"version": 1, "agents": {"a": [{"turn": {}, "results": {"c": 3}}]}}, "results['c']"),
    ],
)
def test_malformed_recordings_are_refused_with_their_location(data: object, where: str) -> None:
    with pytest.raises(RecordingFormatError) as info:
        Recording.from_dict(data)
    assert where in str(info.value)


def test_a_non_json_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(RecordingFormatError, match="not JSON"):
        Recording.load(path)


def test_transcript_tool_results_before_any_assistant_turn_are_ignored() -> None:
    recording = Recording()
    recording.add_transcript(
        "a",
        [
            Message("tool", "orphan", tool_call_id="z"),
            Message("user", "task"),
            Message("assistant", "", (ToolCall("c", "n", "{}"),)),
            Message("tool", "r", tool_call_id="c"),
        ],
    )
    assert recording.steps("a") == (
        RecordedStep(AssistantTurn("", (ToolCall("c", "n", "{}"),)), {"c": "r"}),
    )
