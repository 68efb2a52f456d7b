"""Forbidden rules hold against respellings, under `-y`, on the host: a real `yagent run --json -y`
with the `yolo` preset (commands run on the host, unasked) against a scripted OpenAI-compatible
server on loopback, and a configured rule forbidding `rm -rf <tmp>/outside/precious`.

- Every respelling of that command (options, path spellings, globs, wrappers, `find -delete`,
  xargs fed a here-string, an ancestor of the target) is refused as forbidden, naming the rule.
- Every line whose command name or operands only run time knows (`$a -rf …`, `$(echo rm) …`,
  `… | xargs rm -rf`, `eval "$(…)"`) is refused: -y does not answer it and nobody can be asked
  (docs/adr/0031-run-time-words-are-not-auto-approved.md).
- The canary files under `precious` survive; a control line under -y does delete its own target,
  so the harness would have shown a command that ran.
- With a person at the terminal (`yagent -y` in a real pty), such a line is asked, not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls

RESPELLINGS = [
    "rm --recursive --force {p}",
    "rm -r -f {p}/",
    "rm -Rf {o}//precious",
    "rm -rf {p}/.",
    "rm -rf {p}/sub/..",
    "rm -rf {p}/*",
    "rm -rf {o}/prec*",
    "rm -rf -- {p}",
    "rm -fv {p} --recursive",
    "command rm -rf {p}",
    "\\rm -rf {p}",
    "/bin/rm -rf {p}",
    "env rm -rf {p}",
    "nice -n 5 rm -rf {p}",
    "timeout 5 rm -rf {p}",
    "xargs rm -rf <<< {p}",
    "find {p} -delete",
    "sh -c 'rm -fr {p}'",
    "rm -rf {o}",  # the directory holding it
    "true && rm -r -f {p}/sub/../",
    "rm -rf ../outside/precious",  # relative to the workspace
    "rm -rf " + "../" * 30 + "{r}",  # `..` past `/` stays at `/`
    "rm -rf ~/outside/precious",  # HOME is the temp dir here
    "rm -r {p}",  # -f changes no outcome without a terminal
    "rm --rec --for {p}",  # getopt abbreviations
    "rm -rf {o}/[p]*",
]
RUN_TIME = [
    "a=rm; $a -rf {p}",
    "$(echo rm) -rf {p}",
    '"${{X:-rm}}" -rf {p}',
    "echo {p} | xargs rm -rf",
    "rm -rf $(echo {p})",
    'eval "$(echo rm) -rf {p}"',
    "echo 'rm -rf {p}' | sh",
    "cd {o} && rm -rf ./precious",  # a relative operand after a `cd`
    "bash <(echo rm -rf {p})",
    "nice strace -f rm -rf {p}",  # a program yagent does not know, running a forbidden command
]


def _run(tmp_path: Path, work: Path, config: str, lines: list[str]) -> list[dict[str, Any]]:
    home = tmp_path / "yhome"
    home.mkdir(exist_ok=True)
    items = [("run_bash", json.dumps({"command": c}), f"c{i}") for i, c in enumerate(lines)]
    turns = [
        calls(items),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f"step_retries = 0\n\n{config}"
        )
        env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(home)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "go"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=110,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(x) for x in done.stdout.splitlines() if '"tool_result"' in x]
    assert len(results) == len(lines) + 1, done.stdout
    return results[:-1]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    precious = outside / "precious"
    (precious / "sub").mkdir(parents=True)
    (precious / "canary.txt").write_text("alive\n")
    (precious / "sub" / "canary.txt").write_text("alive\n")
    (outside / "expendable").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    return work, outside


def _config(outside: Path) -> str:
    return (
        '[agent]\npreset = "yolo"\n\n'
        "[[shell.rules]]\n"
        'name = "keep-precious"\n'
        f'prefix = ["rm", "-rf", "{outside}/precious"]\n'
        'verdict = "forbidden"\n'
    )


def test_respellings_of_a_forbidden_command_are_forbidden_under_yes(
    tmp_path: Path, layout: tuple[Path, Path]
) -> None:
    work, outside = layout
    precious = outside / "precious"
    lines = [s.format(p=precious, o=outside, r=str(precious)[1:]) for s in RESPELLINGS]
    control = f"rm -rf {outside}/expendable"
    results = _run(tmp_path, work, _config(outside), [*lines, control])
    for line, result in zip(lines, results, strict=False):
        assert result["ok"] is False, (line, result)
        assert "forbidden" in result["content"], (line, result)
        assert "keep-precious" in result["content"], (line, result)
    assert (outside / "precious" / "canary.txt").read_text() == "alive\n"
    assert (outside / "precious" / "sub" / "canary.txt").read_text() == "alive\n"
    assert results[-1]["ok"] is True, results[-1]  # the control ran, on the host
    assert not (outside / "expendable").exists()


def test_run_time_command_words_are_not_approved_by_yes(
    tmp_path: Path, layout: tuple[Path, Path]
) -> None:
    work, outside = layout
    lines = [s.format(p=outside / "precious", o=outside) for s in RUN_TIME]
    results = _run(tmp_path, work, _config(outside), lines)
    for line, result in zip(lines, results, strict=False):
        assert result["ok"] is False, (line, result)
        content = result["content"]
        assert "nobody could be asked" in content, (line, result)
        assert "adr/0031" in content, (line, result)
    assert (outside / "precious" / "canary.txt").read_text() == "alive\n"


def test_under_yes_a_person_at_the_terminal_is_still_asked(
    tmp_path: Path, layout: tuple[Path, Path]
) -> None:
    """The interactive `yagent -y` in a real pty: a run-time command name is put to the person
    (with the reason), and their `n` keeps the target."""
    from tests.cli.ptyterm import Term, configure
    from tests.cli.test_robustness import tool_reply
    from tests.e2e.conventions import EXIT

    work, outside = layout
    command = f"a=rm; $a -rf {outside / 'precious'}"
    home = tmp_path / "yhome-pty"
    with WireServer([tool_reply("c1", "run_bash", {"command": command}), openai_reply(EXIT)]) as s:
        configure(home, s.url, "\n" + _config(outside))
        term = Term(home, work, ("-y",), env={"HOME": str(tmp_path)})
        try:
            term.ready()
            term.line("go")
            term.wait_for("! run_bash needs your approval")
            term.wait_for("Only a person can approve this line")
            term.wait_for("allow?")
            term.send("n")
            term.wait_for("→ no")
        finally:
            term.close()
    assert (outside / "precious" / "canary.txt").read_text() == "alive\n"
