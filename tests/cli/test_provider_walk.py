"""A first-time user's provider mistakes, through real `yagent` processes against a scripted
OpenAI-compatible server on loopback: each failure says what happened and what to do — which
file to edit, which variable to set, which address was tried — and a run that stopped says how
to continue it (`yagent resume SID`), a command that then works."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_robustness import ENV_DROP, SRC, configure, yagent
from tests.llm.wire import Reply, WireServer, refused_url, submitted_frames

HTTP_401 = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
HTTP_404 = {"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_no_key_says_what_to_export_and_which_file_names_another(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[llm]\nprovider = "openai"\nmodel = "gpt-4.1"\n')
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 2
    assert "the environment variable OPENAI_API_KEY is not set" in done.stderr
    assert "export OPENAI_API_KEY=" in done.stderr
    assert f"api_key_env or api_key_file in {home / 'config.toml'}" in done.stderr


def test_a_refused_key_says_which_key_and_a_keyless_run_says_none_was_sent(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    with WireServer([Reply(401, body=HTTP_401) for _ in range(2)]) as server:
        configure(home, server.url)
        keyless = yagent(["run", "-C", str(ws), "hi"], home, ws)
        monkeypatch.setenv("WALK_KEY", "sk-wrong-but-long")
        configure(home, server.url, "")
        text = (home / "config.toml").read_text()
        (home / "config.toml").write_text(
            text.replace("[llm]\n", '[llm]\napi_key_env = "WALK_KEY"\n')
        )
        keyed = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert keyless.returncode == 1
    assert "HTTP 401" in keyless.stdout
    assert "no API key was sent (OPENAI_API_KEY is not set)" in keyless.stdout
    assert keyed.returncode == 1
    assert "the server refused the API key in WALK_KEY" in keyed.stdout
    assert "sk-wrong-but-long" not in keyed.stdout + keyed.stderr


def test_an_unknown_model_names_the_model_and_the_address_to_check(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    with WireServer([Reply(404, body=HTTP_404)]) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), "--model", "gpt-9", "hi"], home, ws)
    assert done.returncode == 1
    assert "HTTP 404" in done.stdout
    assert (
        f"check [llm] model (or the agent's own `model`) and base_url ({server.url}/v1)"
        in done.stdout
    )


def test_an_unreachable_server_is_named_with_its_address(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    url = refused_url()
    configure(home, url)
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 1
    assert f"at {url}/v1" in done.stdout


def test_a_run_that_failed_says_how_to_resume_it_and_that_command_works(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    replies = [Reply(500, body={"error": {"message": "upstream down"}})]
    replies += [Reply(events=submitted_frames("all done")) for _ in range(3)]
    with WireServer(replies) as server:
        configure(home, server.url)
        failed = yagent(["run", "-C", str(ws), "hi"], home, ws)
        assert failed.returncode == 1
        found = re.search(r"`(yagent resume [0-9a-f]{12})`", failed.stderr)
        assert found is not None, failed.stderr
        assert "fix what it names" in failed.stderr
        resumed = yagent(found.group(1).split()[1:], home, ws)  # as printed, in the workspace
    assert resumed.returncode == 0, resumed.stderr
    assert "all done" in resumed.stdout
    assert "yagent resume" not in resumed.stderr  # a finished run has nothing to continue


def test_ctrl_c_during_a_model_request_says_how_to_resume(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    with WireServer([Reply(hang_after=0), Reply(events=submitted_frames("all done"))]) as server:
        configure(home, server.url)
        env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
        env.update(
            YAGENT_HOME=str(home), PYTHONPATH=os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
        )
        child = subprocess.Popen(
            [sys.executable, "-m", "yagent.cli", "run", "hi"],
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(600):  # the request has reached the server (bounded: 60 s)
                if server.received:
                    break
                time.sleep(0.1)
            child.send_signal(signal.SIGINT)
            _out, err = child.communicate(timeout=60)
        finally:
            child.kill()
            child.wait(timeout=10)
        assert child.returncode == 1, err
        assert "Traceback" not in err
        found = re.search(r"the run was paused; `(yagent resume [0-9a-f]{12})` continues it", err)
        assert found is not None, err
        resumed = yagent(found.group(1).split()[1:], home, ws)
    assert resumed.returncode == 0, resumed.stderr
    assert "all done" in resumed.stdout


def test_no_provider_names_the_config_file_of_this_home(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.app import engines
    from yagent.cli import main

    monkeypatch.setattr(engines, "OLLAMA_URL", refused_url())
    assert main(["run", "-C", str(tmp_path), "hello"]) == 2
    err = capsys.readouterr().err
    assert f"Configure one in {home / 'config.toml'} " in err
    assert "~/.yagent" not in err


def test_a_stream_of_garbage_names_the_address_and_asks_whether_it_is_the_api(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    garbage = ["data: {not json\n\n", "data: [DONE]\n\n"]
    with WireServer([Reply(events=garbage)]) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 1
    assert f"at {server.url}/v1" in done.stdout
    assert "stream data that is not JSON (is base_url an OpenAI-compatible API?)" in done.stdout


def test_a_json_run_refused_before_it_starts_prints_nothing_on_stdout(
    tmp_path: Path, ws: Path
) -> None:
    """CI reads stdout as JSON lines: a refusal printed the schema line and then nothing (no
    result line), so a parser saw a run that started and never ended."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[llm]\nprovider = "openai"\nmodel = "gpt-4.1"\n')
    done = yagent(["run", "--json", "hi"], home, ws)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "OPENAI_API_KEY is not set" in done.stderr
