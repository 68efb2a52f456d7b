"""What a flood of shell output costs yagent's memory: a real `yagent run --json -y` process (real
bubblewrap, the session sandbox) against a scripted OpenAI-compatible server on loopback.

One run per command, the same scripted turn each time (one `run_bash`, then `agent_exit`):
`true` (the idle run), `head -c 300M /dev/urandom` (binary) and `yes | head -c 300M` (text).
yagent's peak resident memory is its `VmHWM` in /proc (the kernel's own high-water mark, read
until the process exits); its children's (bash, the sandbox, the job host) is the largest sum of
their `VmRSS` seen while it runs, sampled every `SAMPLE` seconds. Figures:

- `flood.binary_growth` / `flood.text_growth`: yagent's peak minus the idle run's, MiB; bounded
  ≤ `GROWTH_BOUND` (the output is kept head and tail, at most `MAX_SHELL_OUTPUT_BYTES`; never
  held whole).
- `flood.idle_peak`, `flood.*_children`: reported.
Each figure is the median of `RUNS` runs, the three commands alternated within a round (the
machine is shared: a drift hits them alike). Exit 1 when a bound is missed.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from tests.e2e.test_providers import openai_reply  # noqa: E402
from tests.llm.wire import WireServer  # noqa: E402

from benchlib import Report  # noqa: E402
from yagent.llm.scripted import call  # noqa: E402

RUNS = 3
SAMPLE = 0.02
GROWTH_BOUND = 64.0  # MiB above the idle run (the brief of the output pass)
COMMANDS = {
    "idle": "true",
    "binary": "head -c 300M /dev/urandom",
    "text": "yes | head -c 300M",
}
REPORT = Report()


def _kib(status: str, key: str) -> int:
    found = re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def _tree(root: int) -> list[int]:
    """Every descendant of `root` (by /proc's parent links)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def one(command: str) -> tuple[float, float]:
    """(yagent's peak MiB, its children's largest RSS sum MiB) for one run of `command`."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        home, ws = tmp / "home", tmp / "ws"
        home.mkdir()
        ws.mkdir()
        turns = [
            call("run_bash", json.dumps({"command": command}), call_id="c0"),
            call("agent_exit", json.dumps({"reason": "done"}), call_id="x"),
        ]
        with WireServer([openai_reply(t) for t in turns]) as server:
            (home / "config.toml").write_text(
                f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\n'
                f'base_url = "{server.url}/v1"\nstep_retries = 0\n'
            )
            env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp)}
            env |= {"OPENAI_API_KEY": "sk-test-not-real"}
            for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
                env.pop(name, None)
            argv = [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws), "go"]
            with (tmp / "out").open("w") as out, (tmp / "err").open("w+") as err:
                proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
                peak = children = 0
                while proc.poll() is None:
                    try:
                        status = Path(f"/proc/{proc.pid}/status").read_text()
                        peak = max(peak, _kib(status, "VmHWM"))  # 0 once a zombie
                    except OSError:
                        break
                    rss = 0
                    for pid in _tree(proc.pid):
                        try:
                            rss += _kib(Path(f"/proc/{pid}/status").read_text(), "VmRSS")
                        except OSError:
                            continue
                    children = max(children, rss)
                    time.sleep(SAMPLE)
                proc.wait(300)
                if proc.returncode != 0:
                    err.seek(0)
                    raise SystemExit(f"{command}: exit {proc.returncode}: {err.read()[-2000:]}")
    return peak / 1024, children / 1024


def main() -> int:
    peaks: dict[str, list[float]] = {k: [] for k in COMMANDS}
    kids: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(RUNS):
        for name, command in COMMANDS.items():
            peak, children = one(command)
            peaks[name].append(peak)
            kids[name].append(children)
    idle = statistics.median(peaks["idle"])
    REPORT.figure("flood.idle_peak", round(idle, 1), "MiB", runs=peaks["idle"])
    for name in ("binary", "text"):
        growth = statistics.median(p - i for p, i in zip(peaks[name], peaks["idle"], strict=True))
        REPORT.figure(
            f"flood.{name}_growth",
            round(growth, 1),
            "MiB",
            bound=GROWTH_BOUND,
            peaks=[round(p, 1) for p in peaks[name]],
        )
        REPORT.figure(f"flood.{name}_children", round(statistics.median(kids[name]), 1), "MiB")
    REPORT.figure("flood.idle_children", round(statistics.median(kids["idle"]), 1), "MiB")
    return REPORT.exit_code()


if __name__ == "__main__":
    sys.exit(main())
