"""`make demo` (`python -m yagent.cli.demo`): the main job, offline.

An agent fixes a failing test in a small project.

`python -m yagent.cli.demo [DEMO_DIR]` copies `DEMO_DIR/project` (a tiny module with one bug and a
failing test) to a fresh temporary workspace under git, then runs the real `yagent run` command on
it with the model side replayed from `DEMO_DIR/recording.json`: the real tools, guard, session
store and shell run; the agent lists, reads, runs the tests, edits, re-runs them and finishes. The
diff and the final test run are shown, and any divergence from the recording is reported. The
temporary directory (workspace and a yagent home of its own) is kept, and the last lines say how
to inspect the session (`yagent sessions show`, `yagent trace --html`) and how to remove it.

`python -m yagent.cli.demo --record [DEMO_DIR]` regenerates the recording by running the scripted
conversation below (`SCRIPT`) against a fresh copy and exporting the session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.recording import recording_of
from yagent.llm.replay import Recording
from yagent.llm.scripted import ScriptedEngine, Step, call, calls
from yagent.memory import SessionStore
from yagent.tools.yolo import Yolo

TASK = "The test suite fails. Find the bug, fix it, and make sure all tests pass."
# Deterministic output whatever the terminal: fixed width, no width-dependent summary lines.
PYTEST = "COLUMNS=80 python -m pytest -q -p no:cacheprovider -rN"
FIX_OLD = "return total(values) / (len(values) + 1)"
FIX_NEW = "return total(values) / len(values)"

SCRIPT: list[Step] = [
    call(
        "list_dir",
        json.dumps({"path": "."}),
        call_id="c1",
        text="I'll start by looking at the project layout.",
    ),
    calls(
        [
            ("read_file", json.dumps({"path": "calc.py"}), "c2"),
            ("read_file", json.dumps({"path": "tests/test_calc.py"}), "c3"),
        ],
        text="Reading the module and its tests.",
    ),
    call(
        "run_bash",
        json.dumps({"command": PYTEST}),
        call_id="c4",
        text="Running the tests to see the failure.",
    ),
    call(
        "search_replace_in_file",
        json.dumps({"path": "calc.py", "old_string": FIX_OLD, "new_string": FIX_NEW}),
        call_id="c5",
        text="`average` divides by len + 1; the mean divides by len.",
    ),
    call(
        "run_bash",
        json.dumps({"command": PYTEST}),
        call_id="c6",
        text="Re-running the tests.",
    ),
    call(
        "agent_exit",
        json.dumps(
            {
                "reason": "Fixed the off-by-one divisor in calc.average; all 3 tests pass.",
                "summary": "**Fixed** `calc.average`: it divided by `len(values) + 1`; "
                "it now divides by `len(values)`. `python -m pytest` → 3 passed.",
            }
        ),
        call_id="c7",
    ),
]


def prepare(project: Path, into: Path) -> Path:
    """A fresh git workspace holding a copy of `project`."""
    workspace = into / "workspace"
    shutil.copytree(project, workspace)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@example.invalid",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    }
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "demo project"],
    ):
        subprocess.run(argv, cwd=workspace, check=True, env=env)
    return workspace


PERSON_PATH = os.environ.get("PATH", "")
"""PATH as the person's shell gave it, before `python_first_on_path` put the venv first: the
commands the demo suggests must run from that shell."""


def python_first_on_path() -> None:
    """`python` in the agent's shell is this interpreter (which has pytest)."""
    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


async def record(demo_dir: Path) -> Path:
    from yagent.agents import catalog

    marker = catalog.builtin("coding", 0).marker
    with tempfile.TemporaryDirectory(prefix="yagent-demo-") as tmp:
        workspace = prepare(demo_dir / "project", Path(tmp))
        home = Path(tmp) / "home"
        engine = ScriptedEngine({"coding": SCRIPT}, markers={"coding": marker})
        config = load(home=home, workspace=workspace)
        async with open_app(
            config, home=home, workspace=workspace, yolo=Yolo.YOLO, interactive=False, engine=engine
        ) as app:
            session_id, result = await app.run(TASK, agent_name="coding")
            if result.status.value != "finished":
                raise SystemExit(f"demo script did not finish: {result.status} {result.error}")
            recording, _, _ = recording_of(app.store, session_id)
    out = demo_dir / "recording.json"
    recording.save(out)
    return out


def run(demo_dir: Path) -> int:
    from yagent.cli import main as cli_main

    project, recording = demo_dir / "project", demo_dir / "recording.json"
    Recording.load(recording)  # a broken recording fails here, before anything runs
    tmp = Path(tempfile.mkdtemp(prefix="yagent-demo-"))  # kept: the session can be inspected
    workspace = prepare(project, tmp)
    home = tmp / "home"
    os.environ["YAGENT_HOME"] = str(home)
    print(f"== yagent demo: workspace {workspace}\n== task: {TASK}\n", flush=True)
    status = cli_main(["run", "--replay", str(recording), "-y", "-C", str(workspace), TASK])
    print("\n== the change the agent made (git diff):", flush=True)
    subprocess.run(["git", "--no-pager", "diff", "--stat", "-p"], cwd=workspace, check=False)
    print("\n== the tests now:", flush=True)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=workspace, check=False)
    print(inspect_hint(home, tmp), flush=True)
    return status or tests.returncode


def inspect_hint(home: Path, tmp: Path) -> str:
    """How to look at the demo's session afterwards (its home is kept apart from yours)."""
    with SessionStore(home / "sessions.db") as store:
        rows = store.list_sessions(limit=1)
    sid = rows[0].id[:12] if rows else "<session>"
    env = f"YAGENT_HOME={home}"
    # the yagent beside this interpreter (the venv `make` made) unless the person's own PATH
    # finds that one (ours has the venv first: `python_first_on_path`)
    beside = Path(sys.executable).with_name("yagent")
    found = shutil.which("yagent", path=PERSON_PATH)
    cmd = str(beside) if beside.exists() and found != str(beside) else "yagent"
    return (
        f"\n== inspect the demo's session (kept in {tmp}):\n"
        f"   {env} {cmd} sessions show {sid}\n"
        f"   {env} {cmd} trace {sid} --html\n"
        f"   remove it with: rm -rf {tmp}"
    )


def demo_main(
    argv: list[str],
    replay: Callable[[Path], int],
    rerecord: Callable[[Path], Awaitable[Path]],
) -> int:
    """`[--record] [DEMO_DIR]`: replay the demo (exit status of the replay), or record it anew."""
    python_first_on_path()
    recording_mode = "--record" in argv
    rest = [a for a in argv if a != "--record"]
    demo_dir = Path(rest[0] if rest else "demo").resolve()
    if recording_mode:
        out = anyio.run(rerecord, demo_dir)
        print(f"recording written to {out}")
        return 0
    return replay(demo_dir)


def main(argv: list[str]) -> int:
    return demo_main(argv, run, record)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
