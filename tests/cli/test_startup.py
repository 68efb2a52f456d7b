"""Start-up gate (issue 17): what a `yagent` process imports before it does its work.

Heavy optional dependencies load only where they are used: a provider SDK when its engine is
built, the MCP SDK when a server is configured, tree-sitter when a shell line is judged, mini-racer
when a program runs, Playwright when the browser starts, OpenTelemetry when OTEL_* asks for it.
`yagent --version` and `--help` answer before the command framework loads at all. Each test runs a
real `python -X importtime -m yagent.cli …` process (these sources) and reads the modules it
imported from its import-time report; the costs themselves are measured in
`bench/bench_startup.py`, never timed here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import click
import pytest

import yagent as yagent_package
from tests.llm.wire import (
    Reply,
    WireServer,
    an_block,
    an_delta,
    an_end,
    an_start,
    an_stop,
    anthropic_frames,
    submitted_frames,
)
from yagent.tools.commands import HOST_TOOLING_ENV

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
HEAVY = frozenset(
    {
        "anthropic",
        "openai",
        "mcp",
        "mcp_types",
        "playwright",
        "tree_sitter",
        "tree_sitter_bash",
        "py_mini_racer",
        "opentelemetry",
        "httpx",
        "temporalio",
    }
)
# What `--version` / `--help` must not need either: the command framework and the app's libraries.
FRAMEWORK = frozenset({"click", "pydantic", "rich", "anyio", "prompt_toolkit", "sqlite3"})
# Under `make cover` coverage.py would start in each process (its start-up variables) and import
# its own modules (sqlite3 among them): these processes are the import footprint's evidence, so
# they run unmeasured.
ENV_DROP = (
    "YAGENT_PROVIDER",
    "YAGENT_MODEL",
    "YAGENT_BASE_URL",
    "OPENAI_API_KEY",
    "COLUMNS",
    *HOST_TOOLING_ENV,
)
_LINE = re.compile(r"import time:\s+\d+ \|\s+\d+ \| *([\w.]+)$")


def env_for(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ENV_DROP and not k.startswith(("OTEL_", "ANTHROPIC_"))
    }
    env["YAGENT_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    return env | dict(extra or {})


def yagent(
    args: list[str], home: Path, cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `yagent ARGS` as its own process; return it and the top-level packages it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "yagent.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env_for(home, env),
        stdin=subprocess.DEVNULL,
        timeout=90,
    )
    loaded = {name.split(".")[0] for name in modules_of(done)}
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done, loaded


def modules_of(done: subprocess.CompletedProcess[str]) -> set[str]:
    """Every module (full dotted name) a `yagent` process's import-time report lists."""
    return {m.group(1) for m in map(_LINE.match, done.stderr.splitlines()) if m}


def configure(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


def test_importing_the_command_loads_no_heavy_dependency(tmp_path: Path) -> None:
    probe = (  # a module refused (`None` in sys.modules, as httpx._main is) is not loaded
        "import json, sys, yagent.cli; "
        "print(json.dumps(sorted(k for k, v in sys.modules.items() if v is not None)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        timeout=60,
        check=True,
    )
    loaded = {name.split(".")[0] for name in json.loads(done.stdout)}
    assert loaded & (HEAVY | FRAMEWORK) == set()


def test_importing_the_command_loads_only_its_own_two_modules(tmp_path: Path) -> None:
    """`--version` and `--help` are answered from `yagent.cli.quick`: importing the command adds
    nothing to what the interpreter already loaded but yagent's own two modules — not even
    `typing` or `re` (≈ 10 ms, most of the ≤ 2× `python -c pass` budget)."""
    probe = (
        "import json, sys; before = set(sys.modules); import yagent.cli; "
        "print(json.dumps(sorted(k for k in set(sys.modules) - before if sys.modules[k])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        timeout=60,
        check=True,
    )
    added = set(json.loads(done.stdout))
    assert added <= {"yagent", "yagent.cli", "yagent.cli.quick", "__future__"}, added


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_answer_before_anything_heavy_loads(
    tmp_path: Path, args: list[str]
) -> None:
    done, loaded = yagent(args, tmp_path / "home", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert loaded & (HEAVY | FRAMEWORK) == set()
    if args == ["--version"]:
        assert done.stdout == f"yagent, version {yagent_package.__version__}\n"
    else:
        assert done.stdout.startswith("Usage: yagent [OPTIONS] [COMMAND] [ARGS]...")


def rendered_by_click(width: int) -> str:
    from yagent.cli.root import cli

    with click.Context(
        cli, info_name="yagent", terminal_width=width, **cli.context_settings
    ) as ctx:
        return cli.get_help(ctx) + "\n"


def test_the_quick_help_page_is_exactly_what_click_renders() -> None:
    """The page `--help` prints without click is click's own rendering of the command (at the
    80-column width click uses on a terminal that wide or wider, or off a terminal): a command
    or option added without updating the page turns this red."""
    from yagent.cli.quick import HELP

    assert rendered_by_click(78) == HELP


@pytest.mark.parametrize("columns", ["200", "80"])
def test_help_on_a_wide_terminal_is_the_quick_page(tmp_path: Path, columns: str) -> None:
    done, loaded = yagent(["--help"], tmp_path / "home", tmp_path, {"COLUMNS": columns})
    assert "click" not in loaded
    assert done.stdout == rendered_by_click(78)


def test_help_on_a_narrow_terminal_is_rendered_by_click_for_its_width(tmp_path: Path) -> None:
    done, loaded = yagent(["--help"], tmp_path / "home", tmp_path, {"COLUMNS": "60"})
    assert done.returncode == 0
    assert "click" in loaded
    assert done.stdout == rendered_by_click(58)
    assert loaded & (HEAVY - {"httpx"}) == set()  # listing imports the commands, not their SDKs


def test_a_subcommands_help_loads_no_provider_sdk(tmp_path: Path) -> None:
    done, loaded = yagent(["run", "--help"], tmp_path / "home", tmp_path)
    assert done.returncode == 0
    assert "Run one TASK and exit" in done.stdout
    assert loaded & HEAVY == set()


@pytest.mark.parametrize("command", ["batch", "worker"])
def test_the_scale_out_commands_help_loads_neither_temporal_nor_the_app(
    tmp_path: Path, command: str
) -> None:
    done, loaded = yagent([command, "--help"], tmp_path / "home", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--engine" in done.stdout
    assert loaded & HEAVY == set()


# -- real commands: only what they use --------------------------------------------------------

# tree-sitter is in the list: a run judges no shell line before its first command (the built-in
# rules' examples are checked by their tests, not at every start; configured rules still are).
UNUSED_IN_A_TEXT_RUN = frozenset(
    {"mcp", "mcp_types", "playwright", "py_mini_racer", "opentelemetry", "tree_sitter"}
)


def test_a_run_on_openai_loads_no_provider_sdk(tmp_path: Path) -> None:
    """An OpenAI-compatible provider is spoken to over httpx (`yagent.llm.openai_engine`): the
    `openai` SDK, ~0.6 CPU-s to import, is not loaded by a run that reached its model."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with WireServer([Reply(events=submitted_frames("all done")) for _ in range(4)]) as srv:
        configure(
            tmp_path / "home",
            f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{srv.url}/v1"\n',
        )
        done, loaded = yagent(["run", "--json", "-y", "say hi"], tmp_path / "home", ws)
        assert srv.received, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1])["deliverable"] == "ok"
    assert loaded & (UNUSED_IN_A_TEXT_RUN | {"anthropic", "openai"}) == set()


def anthropic_text(text: str) -> list[str]:
    usage = {"input_tokens": 3, "output_tokens": 2}
    return anthropic_frames(
        [
            an_start(),
            an_block(0, {"type": "text", "text": ""}),
            an_delta(0, {"type": "text_delta", "text": text}),
            an_stop(0),
            *an_end("end_turn", usage),
        ]
    )


def test_a_run_on_anthropic_does_not_load_the_openai_sdk(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with WireServer([Reply(events=anthropic_text("all done")) for _ in range(4)]) as srv:
        configure(
            tmp_path / "home",
            f'[llm]\nprovider = "anthropic"\nmodel = "claude-test"\nbase_url = "{srv.url}"\n',
        )
        args = ["run", "--json", "-y", "--agent", "chat", "say hi"]  # a plain reply answers
        done, loaded = yagent(args, tmp_path / "home", ws)
        assert srv.received, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    assert "anthropic" in loaded
    # the anthropic SDK imports the OpenTelemetry API itself: loaded by the engine that is used
    assert loaded & (UNUSED_IN_A_TEXT_RUN - {"opentelemetry"} | {"openai"}) == set()


def test_doctor_loads_the_configured_provider_only(tmp_path: Path) -> None:
    with WireServer([]) as srv:
        configure(
            tmp_path / "home",
            f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{srv.url}/v1"\n',
        )
        done, loaded = yagent(["doctor"], tmp_path / "home", tmp_path)
    assert "provider" in done.stdout
    assert "m at" in done.stdout
    assert loaded & (UNUSED_IN_A_TEXT_RUN | {"anthropic", "openai", "tree_sitter"}) == set()
    assert modules_of(done) & NOT_FOR_DOCTOR == set()


# `doctor` reads the configuration and looks at the machine: it builds no tool surface, runs no
# tool, judges no call, builds no agent and opens no session store, so none of that machinery is
# imported — nor the MCP client when no server is configured.
NOT_FOR_DOCTOR = frozenset(
    {
        "yagent.tools.adapter",  # the tool-call path: Adapter, ToolContext
        "yagent.tools.surface",  # the judged tool surface and its rings
        "yagent.tools.guard",  # the workspace guard (`Yolo` is `tools.yolo`)
        "yagent.tools.search",  # the search tool and its runner (ripgrep is found by
        "yagent.tools.searchkit.rg",  # `searchkit.locate`)
        "yagent.tools.mcp.connect",  # the MCP client's factory
        "yagent.toolspec.builtin",  # the built-in tools' specs and their argument models
        "yagent.toolspec.params",
        "yagent.agents.catalog",  # agents (`.claude/agents` files are listed by `agentfiles`)
        "yagent.memory",  # the session store (`[store]` is read by `app.storeconfig` alone)
        "yagent.messaging",  # the event dispatcher
    }
)


def test_reading_the_configuration_loads_no_tool_machinery(tmp_path: Path) -> None:
    """`app.config` is what every command that reads the configuration imports (`sessions`,
    `trust`, `mcp`, `rules`, `doctor`, `resume`): checking `[mcp.*]`, hooks, `.claude/agents`
    and `[store]` needs none of the tool-call path, the built-in specs or the session store."""
    probe = "import json, sys, yagent.app.config; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(done.stdout))
    assert loaded & (NOT_FOR_DOCTOR | {"yagent.agents.imported", "yagent.app.lane"}) == set()
    assert {"yagent.tools.mcp.config", "yagent.agents.agentfiles"} <= loaded  # the probe reads


def test_a_configured_mcp_server_loads_the_mcp_sdk(tmp_path: Path) -> None:
    """The other side of the seam: configured, the MCP client is there (doctor connects)."""
    server = tmp_path / "nothing.py"
    server.write_text("import sys\nsys.exit(3)\n")
    configure(
        tmp_path / "home",
        '[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'[mcp.dead]\ncommand = "{sys.executable}"\nargs = ["{server}"]\n',
    )
    done, loaded = yagent(["doctor"], tmp_path / "home", tmp_path)
    assert "dead" in done.stdout
    assert "mcp" in loaded
