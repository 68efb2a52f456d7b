"""Terminal control codes from untrusted text never reach the person's terminal raw.

A real `yagent run` process (human output, not `--json`) against a scripted OpenAI-compatible
server on loopback. The workspace holds a file whose content and whose *name* carry terminal
control sequences (a clear-screen CSI, an OSC that retitles the window, a bell, a carriage return
that would overwrite the line, an 8-bit CSI, a right-to-left override); the "model" reads it with
`read_file`, `cat`s it and lists names with `run_bash`, writes control codes in its own streamed
text, and submits a summary carrying them. Standard output is a pipe, so rich prints no colour of
its own: any ESC byte on stdout came from untrusted text. Each control must be shown visibly
(`\\x1b`, `\\u202e`), never dropped silently and never passed raw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls

HOSTILE = "clear\x1b[2J title\x1b]0;PWNED\x07 8bit\x9b31m rtl\u202etxt.exe back\rOVER\n"


def _run(
    tmp_path: Path, turns: list[object], command: list[str], given: str | None = None
) -> subprocess.CompletedProcess[str]:
    work, home = tmp_path / "work", tmp_path / "yhome"
    work.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    (work / "evil.txt").write_text(HOSTILE, encoding="utf-8")
    (work / "n\x1b[31mame.txt").write_text("x\n")
    with WireServer([openai_reply(t) for t in turns]) as server:  # type: ignore[arg-type]
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            "step_retries = 0\n"
        )
        env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(home)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "NO_COLOR"):
            env.pop(name, None)
        return subprocess.run(
            [sys.executable, "-m", "yagent.cli", *command],
            input=given,
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=110,
        )


def _reads() -> list[object]:
    return [
        calls(
            [
                ("read_file", json.dumps({"path": "evil.txt"}), "r1"),
                ("run_bash", json.dumps({"command": "cat evil.txt; ls"}), "r2"),
                ("list_dir", json.dumps({"path": "."}), "r3"),
            ],
            text="model says \x1b[2J\x1b]0;title\x07 and \u202eevil",
        ),
        call(
            "agent_exit",
            json.dumps({"reason": "done", "summary": "sum \x1b[31mred\x9b1m \u202e"}),
            call_id="x1",
        ),
    ]


def _assert_neutral(out: str) -> None:
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert raw not in out, (raw, out)


def test_control_codes_in_tool_output_names_and_model_text_are_shown_not_obeyed(
    tmp_path: Path,
) -> None:
    done = _run(tmp_path, _reads(), ["run", "-y", "read evil.txt"])
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_neutral(done.stdout)
    _assert_neutral(done.stderr)
    assert "\\x1b" in done.stdout  # visible, not silently dropped
    assert "\\u202e" in done.stdout


def test_the_interactive_screen_neutralises_them_too(tmp_path: Path) -> None:
    """The interactive entry with piped input (one task, run once) draws through `Screen`."""
    done = _run(tmp_path, _reads(), ["-y", "--plain"], given="read evil.txt\n")
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_neutral(done.stdout)
    _assert_neutral(done.stderr)
    assert "\\x1b" in done.stdout


def test_sessions_show_prints_stored_text_without_controls_or_markup(tmp_path: Path) -> None:
    """A stored tool result with control codes and a stray rich closing tag (`[/bold]`, which
    rich refuses as markup) is printed as text by `yagent sessions show`, not a traceback."""
    turns: list[object] = [
        call(
            "read_file",
            json.dumps({"path": "evil.txt"}),
            call_id="r1",
            text="[/bold] [red]x \x1b[2J",
        ),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1"),
    ]
    done = _run(tmp_path, turns, ["run", "-y", "--json", "read [/bold] evil.txt"])
    assert done.returncode == 0, done.stdout + done.stderr
    sid = json.loads(done.stdout.splitlines()[-1])["session_id"]
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    shown = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "sessions", "show", sid],
        env=env,
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    _assert_neutral(shown.stdout)
    assert "[/bold] [red]x" in shown.stdout  # the model's text as written
    assert "\\x1b[2J" in shown.stdout  # the model's control codes written out


def test_an_approval_question_shows_control_codes_in_a_command(tmp_path: Path) -> None:
    """The interactive approval question (a real pty): a command carrying a window-title OSC and
    an erase-line CSI is shown with them written out, so what you approve is what you read."""
    from tests.cli.ptyterm import Term, configure
    from tests.cli.test_robustness import tool_reply
    from tests.e2e.conventions import EXIT

    command = "rm -rf build && echo '\x1b]0;PWNED\x07\x1b[2Kfine'"
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    with WireServer([tool_reply("c1", "run_bash", {"command": command}), openai_reply(EXIT)]) as s:
        configure(home, s.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("go")
            term.wait_for("! run_bash needs your approval")
            term.wait_for("allow?")
            term.send("n")
            term.wait_for("→ no")
        finally:
            term.close()
    assert "\x1b]0;PWNED" not in term.raw
    assert "\x1b[2Kfine" not in term.raw
    assert "\\x1b]0;PWNED\\x07\\x1b[2Kfine" in term.text


def test_json_lines_escape_c1_and_bidi_controls_losslessly(tmp_path: Path) -> None:
    """`--json` is read by CI logs and terminals too: JSON already escapes C0 controls; C1
    controls and bidirectional overrides are escaped as `\\uXXXX` as well — the same strings
    once decoded, never the raw characters on stdout."""
    done = _run(tmp_path, _reads(), ["run", "-y", "--json", "read evil.txt"])
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_neutral(done.stdout)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    texts = [e.get("text", "") for e in events if e["type"] == "assistant_turn"]
    assert "model says \x1b[2J\x1b]0;title\x07 and \u202eevil" in texts
    final = events[-1]
    assert final["type"] == "result"
    assert final["deliverable"] == "sum \x1b[31mred\x9b1m \u202e"


def test_memory_list_shows_a_repository_memory_file_without_controls(tmp_path: Path) -> None:
    """`.yagent/memory.json` comes with the repository: `yagent memory list` prints its ids,
    sources and texts with their control codes written out."""
    work = tmp_path / "work"
    (work / ".yagent").mkdir(parents=True)
    hostile = {
        "id": "mem-evil\x1b]0;T\x07",
        "text": "evil \x1b[2J\x1b]0;PWNED\x07 \u202e done",
        "source": "repo\x1b[31m",
        "at": 1796168478.0,
        "scope": "project",
    }
    memories = {"version": 1, "memories": [hostile]}
    (work / ".yagent" / "memory.json").write_text(json.dumps(memories))
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "memory", "list"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    _assert_neutral(done.stdout)
    assert "\\x1b]0;PWNED\\x07" in done.stdout


def test_rules_import_and_mcp_list_show_repository_files_without_controls(tmp_path: Path) -> None:
    """`.claude/settings.json` and `.mcp.json` come with the repository: `yagent rules import
    --dry-run`, `yagent mcp list` and `yagent mcp get` print their entries with control codes
    written out."""
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    allow = ["Bash(npm test\x1b]0;X\x07:*)", "Read(./s\x1b[2Krc/**)"]
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": allow}}))
    server = {"command": "c\x1b]0;Y\x07", "args": ["\u202e"]}
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"a\x1b]0;X\x07": server}}))
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    for args in (["rules", "import", "--dry-run"], ["mcp", "list"], ["mcp", "get", "a"]):
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", *args],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "Traceback" not in done.stderr, (args, done.stderr)
        _assert_neutral(done.stdout)
        _assert_neutral(done.stderr)
