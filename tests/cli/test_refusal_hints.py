"""Refusals a first-time user meets in the walk from README to their own repository, each through
a real `yagent` process: what was wrong, and what to do next — the command that lists what
exists, the names that do exist, the options that cannot go together."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_robustness import yagent


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_an_unknown_session_names_the_command_that_lists_them(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    for args in (
        ["sessions", "show", "nope"],
        ["resume", "nope"],
        ["replay", "nope"],
        ["trace", "nope"],
        ["undo", "nope"],
    ):
        done = yagent(args, home, ws)
        assert done.returncode == 2, (args, done.stderr)
        assert "no session 'nope'" in done.stderr, args
        assert "`yagent sessions` lists this workspace's" in done.stderr, (args, done.stderr)
        assert "`yagent sessions --all` every one" in done.stderr, args


def test_an_unknown_mcp_server_lists_the_known_ones_when_none_is_close(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "home"
    done = yagent(["mcp", "remove", "fz"], home, ws)
    assert done.returncode == 2
    assert "no MCP server named 'fz' (none is configured)" in done.stderr
    for name in ("fs", "web"):
        added = yagent(["mcp", "add", name, "--force", "--", "some-server"], home, ws)
        assert added.returncode == 0, added.stderr
    for args in (["mcp", "remove", "fz"], ["mcp", "get", "fz"]):
        done = yagent(args, home, ws)
        assert done.returncode == 2, args
        assert "no MCP server named 'fz' (configured: fs, web)" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "flags", [["--show", "--revoke"], ["--revoke", "--yes"], ["--show", "--yes"]]
)
def test_trust_refuses_options_that_cannot_go_together(
    tmp_path: Path, ws: Path, flags: list[str]
) -> None:
    home = tmp_path / "home"
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text('[agent]\npreset = "full-auto"\n')
    assert yagent(["trust", "--yes"], home, ws).returncode == 0
    done = yagent(["trust", *flags], home, ws)
    assert done.returncode == 2
    assert "--show, --revoke and --yes are alternatives: give one" in done.stderr
    shown = yagent(["trust", "--show"], home, ws)
    assert ".yagent/config.toml: trusted" in shown.stdout  # nothing was revoked


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("llm = 3\n", "llm: must be a table ([llm] with its keys below it), got a number"),
        ('[mcp]\nx = "Bearer sk-1"\n', "mcp.x: must be a table ([mcp.x] with its keys below it)"),
        ('[llm]\ntimeout = "abc"\n', "llm.timeout: Input should be a valid number"),
        ('[llm]\ntimeout = "abc"\n', "(got 'abc')"),
        ('[llm]\nprovider = "opnai"\n', "Input should be 'openai', 'anthropic' or 'ollama' (got"),
        ('[agent]\npreset = "yoloo"\n', "agent.preset: unknown preset 'yoloo'; known presets:"),
    ],
)
def test_a_wrong_value_in_the_config_reads_as_english_and_quotes_what_was_given(
    tmp_path: Path, ws: Path, text: str, said: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(text)
    done = yagent(["run", "-C", str(ws), "hi"], home, ws)
    assert done.returncode == 2
    assert said in done.stderr, done.stderr
    assert "Value error" not in done.stderr
    assert "instance of" not in done.stderr
    assert "sk-1" not in done.stderr  # a table of env or headers is not quoted


def test_the_help_page_says_what_yagent_without_a_command_does(tmp_path: Path, ws: Path) -> None:
    done = yagent(["--help"], tmp_path / "home", ws)
    assert done.returncode == 0
    page = " ".join(done.stdout.split())
    assert "Without a COMMAND: an interactive session in this directory" in page
    assert "(/help lists its commands and keys)" in page
    assert "piped input is one task, run once" in page


def test_the_sessions_help_lines_say_what_the_commands_do() -> None:
    """`/help` said `/agent` switches among "coding, chat, repo, devops, custom" (browser, meta
    and director were missing) and `/cost` counts "this session" (it counts the process's)."""
    from yagent.agents import catalog
    from yagent.cli import slash

    assert "custom" not in slash.COMMANDS["agent"]
    assert "the known ones" in slash.COMMANDS["agent"]
    assert catalog.BUILTIN_AGENTS  # `/agent` itself lists them, from the catalog
    assert "this process's sessions" in slash.COMMANDS["cost"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "fix", "the", "failing", "test"], 'quote it: yagent run "fix the failing test"'),
        (["fix", "the", "test"], 'to run a task: yagent run "fix the test"'),
        (["fix the test"], 'to run a task: yagent run "fix the test"'),
        (["sesions"], "No such command 'sesions' (did you mean 'sessions'?)"),
    ],
)
def test_an_unquoted_task_or_a_mistyped_command_says_what_was_meant(
    tmp_path: Path, ws: Path, args: list[str], said: str
) -> None:
    done = yagent(args, tmp_path / "home", ws)
    assert done.returncode == 2
    assert said in done.stderr, done.stderr
    assert not (tmp_path / "home").exists()  # refused before anything was opened


def test_a_home_that_is_a_file_is_said_as_such(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory\n")
    for args in (["run", "hi"], ["sessions"], ["memory", "add", "--global", "x"], ["mcp", "list"]):
        done = yagent(args, home, ws)
        assert done.returncode == 2, (args, done.stderr)
        assert f"the yagent home {home} (YAGENT_HOME) is not a directory" in done.stderr, args
        assert "trust.json" not in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["mcp", "lst"], "No such command 'lst' (did you mean 'list'?)"),
        (["memory", "ad", "x"], "No such command 'ad' (did you mean 'add'?)"),
        (["rules", "imprt"], "No such command 'imprt' (did you mean 'import'?)"),
        (["sessions", "01a235e166ec"], "to show a session: yagent sessions show 01a235e166ec"),
        (["mcp", "zzz"], "No such command 'zzz'; the commands: add, get, import, list, remove"),
        (["batch", "statsu", "b-1"], "no batch file or command 'statsu' (did you mean 'status'?)"),
        (["batch", "reslts"], "no batch file or command 'reslts' (did you mean 'results'?)"),
        (["batch", "cancle", "b-1"], "no batch file or command 'cancle' (did you mean 'cancel'?)"),
    ],
)
def test_an_unknown_subcommand_names_the_way_on(
    tmp_path: Path, ws: Path, args: list[str], said: str
) -> None:
    done = yagent(args, tmp_path / "home", ws)
    assert done.returncode == 2
    assert said in done.stderr, done.stderr


def test_a_batch_file_named_like_a_command_is_read_as_the_file(tmp_path: Path, ws: Path) -> None:
    (ws / "statsu").write_text("not json\n")
    done = yagent(["batch", "statsu"], tmp_path / "home", ws)
    assert done.returncode == 2
    assert "statsu: a batch file ends in .jsonl or .toml" in done.stderr, done.stderr
    assert "did you mean" not in done.stderr


def test_a_replay_file_that_is_not_a_recording_is_refused_naming_it(
    tmp_path: Path, ws: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    for args in (["run", "--replay", str(bad), "hi"], ["fanout", "--replay", str(bad), "plan"]):
        if args[0] == "fanout":
            plan = ws / "plan.toml"
            plan.write_text('[[task]]\nname = "a"\nagent = "coding"\ntask = "t"\nwrite = ["a"]\n')
            args[-1] = str(plan)
        done = yagent(args, tmp_path / "home", ws)
        assert done.returncode == 2, (args, done.stderr)
        assert f"{bad}: recording.version: expected 1, got None" in done.stderr, done.stderr
        assert "`yagent replay SESSION --save FILE` writes one" in done.stderr
