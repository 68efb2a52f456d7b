"""Set-up warnings reach the person, and --json output stays JSON lines."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

from yagent.app.config import Config
from yagent.cli.render import Renderer
from yagent.cli.runner import start_notices
from yagent.kernel.context.spill import Cleanup


def _app(problems: list[tuple[str, str]], failed: tuple[str, ...]) -> Any:
    return SimpleNamespace(
        mcp=SimpleNamespace(problems=problems, notes=[]),
        pruned=Cleanup(0, 0, failed),
        config=Config(),
    )


def test_json_mode_keeps_every_line_json() -> None:
    out = io.StringIO()
    failed = tuple(f"/s/{i}: denied" for i in range(5))
    start_notices(_app([("git", "exited 1")], failed), Renderer(json_mode=True, ask=None, out=out))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in lines] == ["notice", "notice"]
    assert lines[0]["text"] == "MCP server git unavailable: exited 1"
    assert "/s/0: denied; /s/1: denied; /s/2: denied (and 2 more)" in lines[1]["text"]


def test_terminal_mode_prints_them_and_nothing_when_all_is_well() -> None:
    out = io.StringIO()
    start_notices(_app([], ("/s/x: [denied]",)), Renderer(json_mode=False, ask=None, out=out))
    assert "old spilled outputs not removed: /s/x: [denied]" in out.getvalue()  # no markup eaten
    quiet = io.StringIO()
    start_notices(_app([], ()), Renderer(json_mode=False, ask=None, out=quiet))
    assert quiet.getvalue() == ""


def test_the_terminal_replay_report_names_what_was_not_compared() -> None:
    from yagent.cli.runend import report_divergences

    out = io.StringIO()
    engine = SimpleNamespace(divergences=[], unverified=lambda: [("coding", 5)])
    report_divergences(Renderer(json_mode=False, ask=None, out=out), engine)  # type: ignore[arg-type]
    text = out.getvalue()
    assert "not compared: the results of the last step (coding step 6); the run ended there" in text
    assert "replay matched the recording" in text


def test_parallel_tasks_lines_carry_their_name_and_text_is_not_interleaved() -> None:
    from yagent.messaging import Event

    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    lane_a, lane_b = "docs@0123abcd", "code@0123abcd"
    renderer.show(Event("delegation_start", {"agent": "coding", "areas": "write: docs"}, lane_a))
    renderer.show(Event("assistant_delta", {"text": "Writ", "channel": "answer"}, lane_a))
    renderer.show(Event("assistant_delta", {"text": "Look", "channel": "answer"}, lane_b))
    renderer.show(Event("assistant_turn", {"text": "Writing the docs."}, lane_a))
    renderer.show(Event("tool_call", {"name": "write_file", "arguments": "{}"}, lane_b))
    renderer.show(Event("tool_result", {"ok": True, "content": "a[/] b [bold]"}, lane_b))
    text = out.getvalue()
    assert "Writ\n" not in text
    assert "WritLook" not in text  # deltas of two tasks never mix
    assert "[docs] started (coding): write: docs" in text
    assert "[docs] Writing the docs." in text
    assert "[code] → write_file" in text
    assert "[code]   ← a[/] b [bold]" in text  # tool output is text, not markup


def test_a_delegations_end_is_shown_under_its_name_with_its_notes() -> None:
    from yagent.messaging import Event

    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    lane = "repo.t@0123abcd"
    failed = {
        "status": "failed",
        "reason": "Unfinished: the run ended total_timeout\nmore",
        "output": "",
        "notes": ["the delegation hit its total timeout [x]"],
    }
    done = {"status": "completed", "reason": "", "output": "found it\nsecond line"}
    renderer.show(Event("delegation_receipt", {"agent": "repo", "receipt": failed}, lane))
    renderer.show(Event("delegation_receipt", {"agent": "coding", "receipt": done}, "coding.a@x"))
    text = out.getvalue()
    assert "[repo.t] failed Unfinished: the run ended total_timeout\n" in text
    assert "  note: the delegation hit its total timeout [x]" in text
    assert "[coding.a] completed found it\n" in text
