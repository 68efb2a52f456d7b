"""A first-time user with pyenv: `python3` on PATH is a pyenv shim in the home the sandbox hides.

The shim directory on PATH was bound back into the sandbox, but a shim is a script that execs
`$PYENV_ROOT/libexec/pyenv` (and reads `$PYENV_ROOT/versions`), which stayed hidden: every
`python3 -m pytest` — a built-in allowed command — failed inside the sandbox with
"…/libexec/pyenv: No such file or directory". A real `yagent run --json` (real bubblewrap,
default preset) against a scripted server, with a pyenv-shaped tool root in the person's home.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.test_attacks_floods import run
from yagent.tools.readmask import tool_paths_under


def _pyenv(root: Path) -> Path:
    """A pyenv-shaped root: `shims/tool` execs `libexec/pyenv`, which reads `version`."""
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (root / "version").write_text("fake-3.11\n")
    shim = root / "shims" / "fakepy"
    shim.write_text(f'#!/usr/bin/env bash\nexec "{root}/libexec/pyenv" exec "${{0##*/}}" "$@"\n')
    pyenv = root / "libexec" / "pyenv"
    pyenv.write_text(f'#!/usr/bin/env bash\necho "pyenv ran $2 with $(cat {root}/version)"\n')
    for script in (shim, pyenv):
        script.chmod(0o755)
    return root / "shims"


def test_a_pyenv_shim_on_path_runs_inside_the_sandbox(tmp_path: Path) -> None:
    shims = _pyenv(tmp_path / ".pyenv")  # HOME is tmp_path: hidden from sandboxed commands
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-2b7c\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"OPENAI_API_KEY": "sk-test-not-real", "PATH": f"{shims}:{os.environ['PATH']}"}
    batch = [
        ("run_bash", {"command": "fakepy -V"}),
        ("run_bash", {"command": f"cat {tmp_path}/.ssh/id_rsa"}),
    ]
    _, results = run(tmp_path, ws, batch, secrets=env)
    ran = json.loads(results[0]["content"])
    assert ran["text"] == "pyenv ran fakepy with fake-3.11\n", ran
    assert "PRIVATE-KEY" not in results[1]["content"], "the rest of the home stays hidden"


def test_a_plugins_shims_bring_back_the_managers_outermost_root(tmp_path: Path) -> None:
    _pyenv(tmp_path / ".pyenv")
    plugin = tmp_path / ".pyenv" / "plugins" / "pyenv-virtualenv"
    for name in ("shims", "libexec"):
        (plugin / name).mkdir(parents=True)
    plain = tmp_path / ".local" / "bin"
    plain.mkdir(parents=True)
    candidates = [str(plugin / "shims"), str(tmp_path / ".pyenv" / "shims"), str(plain)]
    shown = tool_paths_under([tmp_path], candidates)
    assert shown == (str(tmp_path / ".pyenv"), str(plain))
