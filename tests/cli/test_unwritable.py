"""A yagent home (or a workspace) that cannot be written, as a person meets it: real `yagent`
processes whose `YAGENT_HOME` is a read-only bind mount (bubblewrap, so it holds for root too).

Before: `memory add --global`, `mcp add` and `trust` died with a traceback (exit 1), and a home
whose `sessions.db` was healthy but read-only was called damaged, with the advice to move the
file aside. Now each says in one line which directory cannot be written and what to do, exit 2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import yagent as yagent_package
from tests.llm.wire import Reply, WireServer, submitted_frames

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
ENV_DROP = ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "OPENAI_API_KEY")
BWRAP = shutil.which("bwrap")


def yagent(
    args: list[str], home: Path, cwd: Path, *, read_only: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """`yagent ARGS` with the paths in `read_only` mounted read-only (bubblewrap)."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    env["YAGENT_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    assert BWRAP is not None, "bwrap is installed (scripts/setup-system.sh)"
    mounts = [arg for path in read_only for arg in ("--ro-bind", str(path), str(path))]
    done = subprocess.run(
        [BWRAP, "--dev-bind", "/", "/", *mounts, sys.executable, "-m", "yagent.cli", *args],
        input="",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=90,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "Traceback" not in done.stdout, done.stdout
    return done


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer([Reply(events=submitted_frames("all done")) for _ in range(4)]) as srv:
        yield srv


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def configured(home: Path, url: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}/v1"\nstep_retries = 0\n'
    )
    return home


def said_unwritable(done: subprocess.CompletedProcess[str], where: Path) -> str:
    """The one line saying `where` cannot be written, with what to do."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert f"cannot write in {where} (read-only file system)" in line, line
    return line


def test_commands_that_write_the_home_say_it_is_read_only(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = configured(tmp_path / "home", server.url)
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text('[agent]\npreset = "full-auto"\n')
    before = sorted(p.name for p in home.iterdir())
    for args in (
        ["memory", "add", "--global", "prefer tabs"],
        ["mcp", "add", "fs", "--force", "--", "some-server"],
        ["trust", "--yes"],
    ):
        done = yagent(args, home, ws, read_only=(home,))
        line = said_unwritable(done, home)
        assert "YAGENT_HOME" in line, line
        assert "writable directory" in line, line
    assert sorted(p.name for p in home.iterdir()) == before


def test_a_read_only_home_with_healthy_stores_is_not_called_damaged(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = configured(tmp_path / "home", server.url)
    first = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert first.returncode == 0, first.stderr
    for args in (["sessions"], ["run", "-C", str(ws), "hi"]):
        done = yagent(args, home, ws, read_only=(home,))
        line = said_unwritable(done, home)
        assert "damaged" not in line, line
        assert "salvage" not in line, line
        assert "YAGENT_HOME" in line, line
    assert yagent(["sessions"], home, ws).returncode == 0  # writable again: all there


def test_a_new_home_in_a_read_only_place_names_the_directory_not_a_temporary_file(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = configured(tmp_path / "home", server.url)
    done = yagent(["run", "-C", str(ws), "hi"], home, ws, read_only=(home,))
    line = said_unwritable(done, home)
    assert ".new" not in line, line
    assert "sessions.db." not in line, line
    assert server.received == [], "refused before any model call"


def test_a_read_only_workspace_names_its_directory_and_not_the_home(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    home = configured(tmp_path / "home", server.url)
    (ws / ".yagent").mkdir()
    done = yagent(["memory", "add", "use tabs"], home, ws, read_only=(ws,))
    line = said_unwritable(done, ws / ".yagent")
    assert "YAGENT_HOME" not in line, line


def test_a_home_to_be_created_in_a_read_only_directory_names_yagent_home(
    tmp_path: Path, ws: Path, server: WireServer
) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    done = yagent(["memory", "list"], parent / "home", ws, read_only=(parent,))
    assert done.returncode == 0, done.stderr  # reading creates nothing
    done = yagent(["sessions"], parent / "home", ws, read_only=(parent,))
    line = said_unwritable(done, parent)
    assert "YAGENT_HOME" in line, line


def test_permission_denied_is_said_as_such_and_other_errors_are_not_taken_for_it(
    tmp_path: Path,
) -> None:
    from yagent.cli import unwritable

    home = tmp_path / "home"
    home.mkdir()
    denied = PermissionError(13, "Permission denied", str(home / "trust.json.lock"))
    assert unwritable.blocked(RuntimeError("wrapped")) is None
    found = unwritable.blocked(denied)
    assert found is not None
    said = unwritable.line(*found, home)
    assert said.startswith(f"yagent: permission denied on {home / 'trust.json.lock'}: "), said
    assert "check its owner and permissions, or set YAGENT_HOME" in said
    assert unwritable.blocked(FileNotFoundError(2, "No such file", str(home / "x"))) is None
