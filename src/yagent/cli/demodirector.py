"""`make demo-director` (`python -m yagent.cli.demodirector`): the Director, offline.

`python -m yagent.cli.demodirector [DEMO_DIR]` copies `DEMO_DIR/project` (the demo's tiny module)
to a fresh temporary workspace under git and runs the real `yagent run --agent director` on it
with the model side replayed from `DEMO_DIR/director-recording.json`: the Director delegates
three tasks in one step — `repo` analyses the module, `coding` writes a usage note, and `devops`,
which the demo's configuration (`[agents.director] delegates = ["coding", "repo"]`) does not let
it call, is refused — and the two that may run, run at once under the pool; the terminal shows
each delegation's lines under its name, then the Director's answer. Real tools, guard, sandbox,
session store and task board run; any divergence from the recording is reported. The temporary
directory is kept and the last lines say how to inspect it.

`python -m yagent.cli.demodirector --record [DEMO_DIR]` regenerates the recording by running the
scripted conversation below (`SCRIPTS`) against a fresh copy and exporting the session.
Guarantees: no model, no network; exit status is the run's (0 when the Director submitted).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.lanemarkers import delegation_marker
from yagent.app.recording import recording_of
from yagent.cli.demo import demo_main, inspect_hint, prepare
from yagent.llm.replay import Recording
from yagent.llm.scripted import ScriptedEngine, Step, call, calls
from yagent.tools.yolo import Yolo

TASK = "Explain what calc.average computes and document the calc module's use in docs/USAGE.md."
CONFIG = '[agents.director]\ndelegates = ["coding", "repo"]\n'
RECORDING = "director-recording.json"
USAGE = (
    "# Using calc\n\n- `total(values)`: the sum of the values.\n"
    "- `average(values)`: their arithmetic mean; an empty list raises ValueError.\n"
)


def _exit(reason: str, summary: str, **extra: object) -> dict[str, object]:
    return {"reason": reason, "summary": summary, **extra}


def _delegate(agent: str, task: str, cid: str, **areas: list[str]) -> tuple[str, str, str]:
    return ("delegate", json.dumps({"agent": agent, "task": task, **areas}), cid)


SCRIPTS: dict[str, list[Step]] = {
    "director": [
        calls(
            [
                _delegate("repo", "Explain what calc.average computes.", "r1", read=["calc.py"]),
                _delegate("coding", "Write docs/USAGE.md for calc.", "c1", write=["docs"]),
                _delegate("devops", "Set up continuous integration.", "d1"),
            ],
            text="Three independent tasks: analysis, documentation and CI, delegated at once.",
        ),
        call(
            "agent_exit",
            json.dumps(
                _exit(
                    "delegated three tasks: two completed, one refused",
                    "calc.average divides by len(values) + 1, so it is not the mean (Repo); "
                    "docs/USAGE.md now documents total and average (Coding). CI was not set "
                    "up: devops is not among the agents this Director may call.",
                )
            ),
            call_id="x",
        ),
    ],
    "repo.r1": [
        call("read_file", json.dumps({"path": "calc.py"}), call_id="r1-read"),
        call(
            "agent_exit",
            json.dumps(
                _exit(
                    "read calc.py",
                    "average(values) returns total(values) / (len(values) + 1): one more than "
                    "the count, so it is below the mean.",
                    blueprint={
                        "findings": [
                            {
                                "title": "calc.average divisor",
                                "detail": "divides by len(values) + 1",
                                "files": ["calc.py"],
                            }
                        ]
                    },
                )
            ),
            call_id="r1-exit",
        ),
    ],
    "coding.c1": [
        call(
            "write_file",
            json.dumps({"path": "docs/USAGE.md", "content": USAGE}),
            call_id="c1-write",
        ),
        call(
            "agent_exit",
            json.dumps(_exit("wrote docs/USAGE.md", "Wrote docs/USAGE.md.")),
            call_id="c1-exit",
        ),
    ],
}


async def record(demo_dir: Path) -> Path:
    from yagent.agents import catalog

    markers = {name: delegation_marker(name) for name in SCRIPTS if name != "director"}
    markers["director"] = catalog.builtin("director", 0).marker
    with tempfile.TemporaryDirectory(prefix="yagent-demo-") as tmp:
        workspace = prepare(demo_dir / "project", Path(tmp))
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text(CONFIG)
        engine = ScriptedEngine(SCRIPTS, markers=markers)
        config = load(home=home, workspace=workspace)
        async with open_app(
            config, home=home, workspace=workspace, yolo=Yolo.YOLO, interactive=False, engine=engine
        ) as app:
            session_id, result = await app.run(TASK, agent_name="director")
            if result.status.value != "finished":
                raise SystemExit(f"demo script did not finish: {result.status} {result.error}")
            recording, _, _ = recording_of(app.store, session_id)
    out = demo_dir / RECORDING
    recording.save(out)
    return out


def run(demo_dir: Path) -> int:
    from yagent.cli import main as cli_main

    recording = demo_dir / RECORDING
    Recording.load(recording)  # a broken recording fails here, before anything runs
    tmp = Path(tempfile.mkdtemp(prefix="yagent-demo-"))  # kept: the session can be inspected
    workspace = prepare(demo_dir / "project", tmp)
    home = tmp / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    os.environ["YAGENT_HOME"] = str(home)
    print(f"== yagent director demo: workspace {workspace}\n== task: {TASK}\n", flush=True)
    argv = ["run", "--agent", "director", "--replay", str(recording), "-y", "-C", str(workspace)]
    status = cli_main([*argv, TASK])
    usage = workspace / "docs" / "USAGE.md"
    shown = usage.read_text() if usage.is_file() else "(not written)\n"
    print(f"\n== docs/USAGE.md, written by the coding delegation:\n{shown}", flush=True)
    print(inspect_hint(home, tmp), flush=True)
    return status


def main(argv: list[str]) -> int:
    return demo_main(argv, run, record)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
