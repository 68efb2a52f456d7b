"""Output files a command is told to write, through a real `yagent` process: a FILE it cannot
write (its folder does not exist, or it is a folder) is refused in one line naming the option and
the reason — exit 2 (docs/usage.md: a usage error), no traceback — and nothing else is written.
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


def yagent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    env["OPENAI_API_KEY"] = "sk-test-not-real"
    return subprocess.run(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=110,
    )


@pytest.fixture
def session(tmp_path: Path) -> str:
    """A real session (one run that submits at once) in tmp_path/work."""
    (tmp_path / "work").mkdir()
    home = tmp_path / "yhome"
    home.mkdir()
    with WireServer([openai_reply(EXIT)]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        )
        done = yagent(tmp_path, "run", "--json", "fix it")
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if '"type": "result"' in x]
    return line.split('"session_id": "')[1].split('"')[0]


@pytest.mark.parametrize(
    ("command", "option"), [(["trace", "--html"], "'--html'"), (["replay", "--save"], "'--save'")]
)
def test_an_output_file_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, session: str, command: list[str], option: str
) -> None:
    for target in (tmp_path / "missing" / "out.x", tmp_path / "work"):
        done = yagent(tmp_path, command[0], session, command[1], str(target))
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert option in done.stderr
        assert str(target) in done.stderr
    assert not (tmp_path / "missing").exists()
