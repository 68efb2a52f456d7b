"""The `yagent` command as a person meets it: every documented command and flag, and the error
paths people hit, run as real subprocesses against a scripted OpenAI-compatible server on
loopback. No traceback ever reaches stderr; exit codes are the documented ones (0 done, 1 the run
did not finish, 2 usage or configuration error)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import yagent as yagent_package
from tests.llm.wire import (
    Reply,
    WireServer,
    oa_chunk,
    openai_frames,
    submitted_frames,
)

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
ENV_DROP = ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "OPENAI_API_KEY", "MY_KEY")


def yagent(
    args: list[str], home: Path, cwd: Path, *, stdin: str | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    env["YAGENT_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])  # these sources
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "Traceback" not in done.stdout, done.stdout
    return done


def configure(home: Path, url: str, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}/v1"\nstep_retries = 0\n'
        + extra
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer([Reply(events=submitted_frames("all done")) for _ in range(12)]) as srv:
        yield srv


def user_texts(server: WireServer) -> list[str]:
    return [
        m["content"]
        for r in server.received
        for m in r.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], str)
    ]


# -- usage errors: exit 2, a clear message, nothing created -----------------------------------


def test_a_missing_workspace_is_refused_and_not_created(tmp_path: Path, ws: Path) -> None:
    typo = tmp_path / "typo" / "dir"
    for args in (
        ["run", "-C", str(typo), "hi"],
        ["-C", str(typo)],
        ["memory", "list", "-C", str(typo)],
    ):
        done = yagent(args, tmp_path / "home", ws)
        assert done.returncode == 2, done
        assert "does not exist" in done.stderr
    assert not (tmp_path / "typo").exists()


def test_an_unknown_agent_is_exit_2_naming_the_known_ones(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = tmp_path / "home"
    configure(home, server.url, '[agents.reviewer]\nprompt = "review"\ntools = ["read_file"]\n')
    done = yagent(["run", "-C", str(ws), "--agent", "no-such-agent", "hi"], home, ws)
    assert done.returncode == 2
    assert "unknown agent 'no-such-agent'" in done.stderr
    for name in ("coding", "chat", "repo", "devops", "browser", "reviewer"):
        assert name in done.stderr
    assert server.received == [], "refused before any model call"


def test_a_misspelled_config_key_suggests_the_right_one(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[llm]\nmodle = "m"\n[agent]\ncontext_windw = 9000\n')
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 2
    assert "llm.modle: unknown key (did you mean 'model'?)" in done.stderr
    assert "agent.context_windw: unknown key (did you mean 'context_window'?)" in done.stderr


def test_a_key_in_the_wrong_section_names_the_section_it_belongs_in(
    tmp_path: Path, ws: Path
) -> None:
    # a first-time user writes `[sandbox] preset = …` (the sandbox's own settings are there); the
    # error said only "sandbox.preset: unknown key"
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[sandbox]\npreset = "full-auto"\n[llm]\npreset = "x"\n')
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 2
    assert "sandbox.preset: unknown key (it belongs in [agent]: agent.preset)" in done.stderr
    assert "llm.preset: unknown key (it belongs in [agent]: agent.preset)" in done.stderr
    assert "Traceback" not in done.stderr


# -- the task from standard input ---------------------------------------------------------------


def test_task_dash_reads_a_big_task_from_stdin(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = tmp_path / "home"
    configure(home, server.url)
    big = "Please summarise this.\n" + "line of context\n" * 20_000
    done = yagent(["run", "-C", str(ws), "-y", "--json", "-"], home, ws, stdin=big)
    assert done.returncode == 0, done.stderr
    assert any(big.strip() in text for text in user_texts(server))
    assert not any(text.strip() == "-" for text in user_texts(server))


@pytest.mark.parametrize("args", [["run", "--json"], []], ids=["run", "interactive-entry"])
def test_piped_input_is_the_task(
    tmp_path: Path, ws: Path, server: WireServer, args: list[str]
) -> None:
    home = tmp_path / "home"
    configure(home, server.url)
    done = yagent([*args, "-C", str(ws)], home, ws, stdin="count the files here\n")
    assert done.returncode == 0, done.stderr
    assert any("count the files here" in text for text in user_texts(server))
    assert "all done" in done.stdout


def test_empty_stdin_is_a_usage_error(tmp_path: Path, ws: Path, server: WireServer) -> None:
    home = tmp_path / "home"
    configure(home, server.url)
    for args in (["run", "-C", str(ws), "-"], ["run", "-C", str(ws)], ["-C", str(ws)]):
        done = yagent(args, home, ws, stdin="  \n")
        assert done.returncode == 2
        assert "standard input was empty" in done.stderr
    assert server.received == []


# -- keys, providers -------------------------------------------------------------------------------


def test_an_unset_key_variable_is_refused_unless_the_server_is_on_loopback(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[llm]\nprovider = "openai"\nmodel = "m"\napi_key_env = "MY_KEY"\n'
        'base_url = "http://192.0.2.1:9/v1"\n'
    )
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 2
    assert "MY_KEY is not set" in done.stderr
    assert "only a base_url on loopback may run keyless" in done.stderr

    configure(home, server.url, "")
    text = (home / "config.toml").read_text().replace("[llm]\n", '[llm]\napi_key_env = "MY_KEY"\n')
    (home / "config.toml").write_text(text)
    done = yagent(["run", "-C", str(ws), "--json", "hi"], home, ws)
    assert done.returncode == 0, done.stderr
    notices = [json.loads(x) for x in done.stdout.splitlines() if '"notice"' in x]
    assert any("MY_KEY is not set; running keyless" in n["text"] for n in notices)
    doctor = yagent(["doctor"], home, ws)
    assert "keyless" in re.sub(r"[\s│]+", " ", doctor.stdout)


def test_a_plain_json_reply_to_a_streamed_request_runs(tmp_path: Path, ws: Path) -> None:
    completion: dict[str, Any] = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "plain answer"},
                "finish_reason": "stop",
            }
        ],
    }
    home = tmp_path / "home"
    with WireServer([Reply(body=completion) for _ in range(6)]) as srv:
        configure(home, srv.url)
        done = yagent(["run", "-C", str(ws), "--json", "--agent", "chat", "hi"], home, ws)
    result = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 0, done.stderr  # a chat agent's plain reply is its answer
    assert result["text"] == "plain answer"
    assert "finish_reason" not in done.stdout


PORTAL = (
    "<!DOCTYPE html>\n<html><head><title>Sign in to the Wi-Fi</title></head><body></body></html>"
)


def test_an_html_page_in_answer_says_html_and_names_the_base_url(tmp_path: Path, ws: Path) -> None:
    # a captive portal, or a base_url pointing at a web page, answers 200 with HTML
    page = Reply(raw=PORTAL, headers={"content-type": "text/html; charset=utf-8"})
    home = tmp_path / "home"
    with WireServer([page for _ in range(6)]) as srv:
        configure(home, srv.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "HTML" in said, said
    assert "text/html" in said
    assert f"{srv.url}/v1" in said
    assert "finish_reason" not in said
    # no reply text was shown, so the closing note does not claim one was; the error alone
    # says what happened (tests/cli/test_run_last_words.py)
    assert "the text shown is the last reply" not in said
    assert "no deliverable was submitted" not in said


def test_a_failed_run_that_showed_text_says_it_was_the_last_reply(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    replies = [
        Reply(events=openai_frames([oa_chunk({"content": "partial thoughts"}, finish="stop")]))
    ]
    replies += [Reply(status=400, body={"error": {"message": "bad request"}})]
    with WireServer(replies) as srv:
        configure(home, srv.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "partial thoughts" in said
    assert "the text shown is the last reply, not a submission" in said


# -- doctor, trace -----------------------------------------------------------------------------


def test_doctor_rows_are_text_not_python_reprs(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = tmp_path / "home"
    configure(home, server.url)
    done = yagent(["doctor"], home, ws)
    row = next(line for line in done.stdout.splitlines() if "ripgrep" in line)
    assert "Rg(" not in done.stdout
    assert "path=" not in row
    assert "/rg" in row


def test_trace_html_without_a_file_writes_one_here_and_says_where(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = tmp_path / "home"
    configure(home, server.url)
    run = yagent(["run", "-C", str(ws), "--json", "hi"], home, ws)
    session = json.loads(run.stdout.splitlines()[-1])["session_id"]
    done = yagent(["trace", session, "--html"], home, ws)
    assert done.returncode == 0, done.stderr
    written = ws / f"trace-{session[:12]}.html"
    assert written.is_file()
    assert f"timeline written to {written.name}" in done.stdout
    text = yagent(["trace", session], home, ws).stdout
    assert "not drawn as rows (" in text
    assert "unrecognised" not in text


# -- file names that are not UTF-8 -------------------------------------------------------------


def tool_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    head = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    chunks = [
        oa_chunk({"role": "assistant", "content": ""}),
        oa_chunk({"tool_calls": [head]}),
        oa_chunk({}, finish="tool_calls"),
    ]
    return Reply(events=openai_frames(chunks))


def test_a_non_utf8_file_name_is_listed_read_stored_and_reloaded(tmp_path: Path, ws: Path) -> None:
    (ws / os.fsdecode(b"bad\xff.txt")).write_text("hello from a latin-1 name\n")
    home = tmp_path / "home"
    replies = [
        tool_reply("c1", "list_dir", {"path": "."}),
        tool_reply("c2", "print_dir_tree", {"path": "."}),
        tool_reply("c3", "read_file", {"path": "bad\\xff.txt"}),
        Reply(events=submitted_frames("done")),
    ]
    with WireServer(replies) as srv:
        configure(home, srv.url)
        done = yagent(["run", "-C", str(ws), "-y", "--json", "look"], home, ws)
        assert done.returncode == 0, done.stderr
        results = {
            line["call_id"]: line
            for line in map(json.loads, done.stdout.splitlines())
            if line["type"] == "tool_result"
        }
        assert "bad\\\\xff.txt" in results["c1"]["content"]  # JSON-escaped `bad\xff.txt`
        assert "bad\\\\xff.txt" in results["c2"]["content"]
        assert "hello from a latin-1 name" in results["c3"]["content"]
        assert results["c3"]["ok"]
        session = json.loads(done.stdout.splitlines()[-1])["session_id"]
        shown = yagent(["sessions", "show", session, "--json"], home, ws)
        assert shown.returncode == 0
        assert "xff.txt" in shown.stdout  # the name, escaped (twice: JSON in JSON)
        resumed = yagent(["resume", session, "--json"], home, ws, stdin="")
        assert resumed.returncode in (0, 1), resumed.stderr
        assert "surrogates" not in resumed.stderr + resumed.stdout


# -- every command and its documented flags ---------------------------------------------------

COMMANDS = [
    [],
    ["run"],
    ["fanout"],
    ["sessions"],
    ["sessions", "show"],
    ["resume"],
    ["replay"],
    ["doctor"],
    ["reconcile"],
    ["trace"],
    ["memory"],
    ["memory", "add"],
    ["memory", "list"],
    ["trust"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "yagent")
def test_every_command_has_help_and_no_traceback(
    tmp_path: Path, ws: Path, command: list[str]
) -> None:
    done = yagent([*command, "--help"], tmp_path / "home", ws)
    assert done.returncode == 0, (command, done.stderr)
    assert "Usage:" in done.stdout


def test_run_documents_its_flags(tmp_path: Path, ws: Path) -> None:
    assert yagent(["--version"], tmp_path / "home", ws).returncode == 0
    run_help = yagent(["run", "--help"], tmp_path / "home", ws).stdout
    for flag in ("-C", "--workspace", "-y", "-Y", "--json", "--agent", "--replay"):
        assert flag in run_help


@pytest.mark.parametrize(
    "args",
    [
        ["sessions", "show", "nope"],
        ["trace", "nope"],
        ["trace", "nope", "--html"],
        ["replay", "nope"],
        ["no-such-command"],
        ["run", "--no-such-flag", "x"],
        ["fanout", "missing-plan.toml"],
        ["run", "--replay", "missing.json", "x"],
    ],
)
def test_error_paths_exit_2_without_a_traceback(tmp_path: Path, ws: Path, args: list[str]) -> None:
    done = yagent(args, tmp_path / "home", ws)
    assert done.returncode == 2, (args, done.stdout, done.stderr)
    assert done.stderr.strip()
