"""yagent's own model key against the real product, under `-y`: a `yagent run --json -y` process
(real bubblewrap, default preset) against a scripted OpenAI-compatible server on loopback.

The key is where the person's configuration says it is — a variable of their choosing
(`[llm] api_key_env`, a `[llm.providers.*]` section's too) whose name matches none of the
credential-looking patterns, or a file (`api_key_file`) kept in the workspace or beside it. yagent
reads it there; no tool may bring it to the model: not `env` or `/proc/self/environ` inside the
sandbox, not `cat` or `grep -r` of the file, not `read_file` / `search` / `list_dir` in yagent's
own process (refused outright, saying why, `-y` or not).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_attacks_floods import run

ENV_KEY = "sk-ENVKEY-5c1d"
ALT_KEY = "sk-ALTKEY-90b2"
FILE_KEY = "sk-FILEKEY-e41f"
OUT_KEY = "sk-OUTKEY-77c3"


def _configured(tmp_path: Path) -> tuple[Path, str]:
    ws = tmp_path / "ws"
    (ws / ".keys").mkdir(parents=True)
    (ws / ".keys" / "llm.key").write_text(FILE_KEY + "\n")
    (ws / "a.txt").write_text("hello\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "alt.key").write_text(OUT_KEY + "\n")
    extra = (
        'api_key_env = "LLM_KEY"\n'
        '[llm.providers.alt]\nprovider = "openai"\napi_key_env = "ALT_LLM"\nmodels = ["m"]\n'
        '[llm.providers.filed]\nprovider = "openai"\n'
        f'api_key_file = "{ws / ".keys" / "llm.key"}"\nmodels = ["m"]\n'
        '[llm.providers.outside]\nprovider = "openai"\n'
        f'api_key_file = "{tmp_path / "keys" / "alt.key"}"\nmodels = ["m"]\n'
    )
    return ws, extra


def _no_key_anywhere(sent: list[Any], results: list[dict[str, Any]]) -> None:
    for result in results:
        for key in (ENV_KEY, ALT_KEY, FILE_KEY, OUT_KEY):
            assert key not in result["content"], result
    for body in sent:
        text = json.dumps(body)
        for key in (ENV_KEY, ALT_KEY, FILE_KEY, OUT_KEY):
            assert key not in text


def test_a_key_variable_of_any_name_is_not_given_to_commands(tmp_path: Path) -> None:
    ws, extra = _configured(tmp_path)
    batch: list[tuple[str, dict[str, Any]]] = [
        ("run_bash", {"command": "env"}),
        ("run_bash", {"command": "tr '\\0' '\\n' < /proc/self/environ"}),
        ("run_bash", {"command": 'echo "$LLM_KEY $ALT_LLM"'}),
    ]
    secrets = {"LLM_KEY": ENV_KEY, "ALT_LLM": ALT_KEY}
    sent, results = run(tmp_path, ws, batch, secrets=secrets, extra=extra)
    _no_key_anywhere(sent, results)
    assert "PATH=" in results[0]["content"], "the rest of the environment is passed"


def test_a_key_file_is_hidden_from_every_tool(tmp_path: Path) -> None:
    ws, extra = _configured(tmp_path)
    outside = str(tmp_path / "keys" / "alt.key")
    batch: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": ".keys/llm.key"}),
        ("read_file", {"path": outside}),
        ("search", {"pattern": "KEY", "path": "."}),
        ("search", {"pattern": "KEY", "path": outside}),
        ("list_dir", {"path": ".keys"}),
        ("run_bash", {"command": "cat .keys/llm.key"}),
        ("run_bash", {"command": "grep -r KEY ."}),
        ("run_bash", {"command": "cat a.txt"}),
    ]
    sent, results = run(tmp_path, ws, batch, secrets={"LLM_KEY": ENV_KEY}, extra=extra)
    _no_key_anywhere(sent, results)
    for result in results[:2]:
        assert "hidden from every tool" in result["content"], result
    assert "hello" in results[7]["content"], "the rest of the workspace stays readable"


def test_the_default_yagent_home_is_hidden_while_another_is_in_use(tmp_path: Path) -> None:
    # YAGENT_HOME names the home in use; ~/.yagent (used before, or by another checkout) holds
    # sessions, trust and configuration all the same
    other = tmp_path / ".yagent"  # the run's HOME is tmp_path
    other.mkdir()
    (other / "config.toml").write_text(f'# key: "{OUT_KEY}"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    batch: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "~/.yagent/config.toml"}),
        ("search", {"pattern": "KEY", "path": str(other)}),
        ("list_dir", {"path": "~/.yagent"}),
    ]
    sent, results = run(tmp_path, ws, batch)
    _no_key_anywhere(sent, results)
    for result in results[:3]:
        assert "hidden from every tool" in result["content"], result
