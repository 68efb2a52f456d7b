"""What a run that stopped on a provider error says last, through real `yagent run` processes
against a scripted OpenAI-compatible server on loopback: one line naming the error and its
kind once — not the kind twice, and not the "no deliverable was submitted" note, which is for
a run that ended without an error and without a submission (that one keeps it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_robustness import configure, yagent
from tests.llm.wire import Reply, WireServer, oa_chunk, openai_frames, text_frames

HTTP_401 = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
NOTE = "no deliverable was submitted"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_a_refused_key_ends_on_one_line_with_its_kind_once(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    with WireServer([Reply(401, body=HTTP_401)]) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 1
    said = [line for line in done.stdout.splitlines() if "HTTP 401" in line]
    assert len(said) == 1, done.stdout
    assert said[0].count("(unauthorized)") == 1, said[0]
    assert said[0].startswith("run ended: error: model call failed: "), said[0]
    assert NOTE not in done.stdout + done.stderr
    assert "yagent resume" in done.stderr  # how to continue it stays


def test_the_json_result_of_a_failed_run_has_the_error_and_no_note(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    with WireServer([Reply(401, body=HTTP_401)]) as server:
        configure(home, server.url)
        done = yagent(["run", "--json", "-C", str(ws), "hi"], home, ws)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    result = lines[-1]
    assert result["type"] == "result"
    assert result["status"] == "error"
    assert result["note"] == ""
    assert result["error"].count("(unauthorized)") == 1, result["error"]
    ended = next(line for line in lines if line["type"] == "run_end")
    assert ended["note"] == ""


def test_an_error_whose_message_has_no_kind_is_given_it_once(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    unfinished = openai_frames([oa_chunk({"role": "assistant", "content": "part"})])
    with WireServer([Reply(events=unfinished)]) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    said = [line for line in done.stdout.splitlines() if line.startswith("run ended")]
    assert said == [
        "run ended: error: model call failed (transient): openai-compatible model 'm': the "
        "stream ended before the model finished (no finish_reason)"
    ], done.stdout
    assert NOTE not in done.stdout


def test_a_run_that_ended_without_an_error_or_a_submission_keeps_its_note(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    replies = [Reply(events=text_frames("just text")) for _ in range(4)]
    with WireServer(replies) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 1
    assert NOTE in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("run ended:")]
