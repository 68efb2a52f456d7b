"""Bad task input to a real `yagent run`: refused in one line with exit 2, before any model call.

An empty or blank TASK argument is refused like empty standard input (docs/usage.md: "Empty
input is a usage error"); standard input that is not UTF-8 is refused naming the first bad byte,
never passed on with characters silently replaced. The scripted server on loopback must receive
no request for any of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conventions import EXIT
from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer


def _run(tmp_path: Path, args: list[str], given: bytes | None) -> tuple[int, str, int]:
    work, home = tmp_path / "work", tmp_path / "yhome"
    work.mkdir()
    home.mkdir()
    with WireServer([openai_reply(EXIT)]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        )
        env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(home)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", *args],
            env=env,
            cwd=work,
            input=given if given is not None else b"",
            capture_output=True,
            timeout=110,
        )
        asked = len(server.received)
    return done.returncode, done.stderr.decode(errors="replace"), asked


@pytest.mark.parametrize("task", ["", "   \n\t"])
def test_an_empty_task_argument_is_a_usage_error(tmp_path: Path, task: str) -> None:
    code, err, asked = _run(tmp_path, [task], None)
    assert code == 2, err
    assert "no task" in err
    assert "Traceback" not in err
    assert asked == 0


def test_standard_input_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    code, err, asked = _run(tmp_path, ["-"], b"fix this \xff\xfe please")
    assert code == 2, err
    assert "not UTF-8" in err
    assert "offset 9" in err
    assert "Traceback" not in err
    assert asked == 0


def test_utf8_input_still_runs(tmp_path: Path) -> None:
    code, err, asked = _run(tmp_path, ["-"], "réparer ça ✓\n".encode())
    assert code == 0, err
    assert asked == 1
