"""How long a person waits for the interactive prompt: `yagent` in a pseudo-terminal, from spawn
to the `yagent>` prompt on the screen, side by side with `python -c pass` (interleaved pairs).

The prompt is drawn before the app is imported (`yagent.cli.early`); the time until the app is
open and prompt-toolkit has drawn the session's own prompt (after the banner) is reported beside
it (`interactive.time_to_ready`, not bounded). The bound is issue 17's start-up target for a
command that opens the app (the first model request of `yagent run` within 4× `python -c pass`):
the prompt may take no longer. The provider is a loopback URL on which nothing listens — no
request is made before a task is typed. One JSON line per figure (`benchlib`); exit 1 when the
bound is missed.

Beside the bounded figure, in the same run and interleaved the same way, the parts the time is
made of (each a fresh `python -c`, as a ratio to `python -c pass`): importing prompt-toolkit and
rich (the floor of any prompt drawn with them), importing the app a task needs
(`yagent.cli.repl`, which imports the runner and the whole app), and the provider SDK that the
prompt no longer waits for (`openai`, loaded at the first model request). yagent's bytecode is
written first (`benchlib.bytecode_cached`), as an installed yagent has it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from benchlib import Report, bytecode_cached, interleaved

PAIRS = 7
BOUND = 4.0
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


PARTS = {
    "prompt_toolkit_and_rich": "import prompt_toolkit, rich.console, rich.markdown",
    "app_import": "import yagent.cli.repl",
    "openai_sdk": "import openai",
}


def _import(statement: str) -> Callable[[], float]:
    def run() -> float:
        env = {**os.environ, "PYTHONPATH": SRC}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True, env=env)
        return time.perf_counter() - started

    return run


def _prompt(home: Path, ws: Path, ready: list[float]) -> float:
    """Spawn to the first `yagent>` on the screen (drawn before the app loads); the time to the
    session's own prompt (after the banner: the app open) is appended to `ready`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YAGENT_", "OPENAI_"))}
    env.update(YAGENT_HOME=str(home), PYTHONPATH=SRC, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    started = time.perf_counter()
    child = pexpect.spawn(
        sys.executable, ["-m", "yagent.cli"], cwd=str(ws), env=env, encoding="utf-8", timeout=60
    )
    shown = ""

    def wait(needle: str) -> None:
        nonlocal shown
        while True:
            found = child.expect([r"\x1b\[6n", needle])
            shown += str(child.before) + str(child.after)
            if found == 1:
                return
            child.send("\x1b[1;1R")  # answer the cursor-position request as a terminal does

    wait("yagent>")
    took = time.perf_counter() - started
    if "Ctrl-D quits" not in shown:  # the early prompt: the session's own comes after the banner
        wait("Ctrl-D quits")
        wait("yagent>")
    ready.append(time.perf_counter() - started)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return took


def main() -> int:
    report = Report()
    bytecode_cached(SRC)
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        (home / "config.toml").write_text(
            '[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        )
        ready: list[float] = []
        pairs = interleaved(_python_pass, lambda: _prompt(home, ws, ready), PAIRS)
    report.figure("interactive.python_pass", round(pairs.a * 1000, 1), "ms")
    to_ready = statistics.median(ready)
    report.figure(
        "interactive.time_to_ready",
        round(to_ready * 1000, 1),
        "ms",
        ratio_to_python_pass=round(to_ready / pairs.a, 2),
    )
    report.figure(
        "interactive.time_to_prompt",
        round(pairs.b * 1000, 1),
        "ms",
        ratio_to_python_pass=round(pairs.ratio, 2),
    )
    report.figure(
        "interactive.time_to_prompt_ratio", round(pairs.ratio, 2), "x", bound=BOUND, pairs=PAIRS
    )
    for name, statement in PARTS.items():
        part = interleaved(_python_pass, _import(statement), PAIRS)
        report.figure(
            f"interactive.part.{name}",
            round(part.b * 1000, 1),
            "ms",
            ratio_to_python_pass=round(part.ratio, 2),
        )
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
