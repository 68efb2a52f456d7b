"""Configuration: precedence, strictness, keys only from env or file, never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.projecttrust import trust_project
from yagent.app.config import ConfigError, load

from .files import write


def test_defaults_without_files(tmp_path: Path) -> None:
    config = load(home=tmp_path / "h", workspace=tmp_path / "w", env={})
    assert config.llm.provider is None
    assert config.agent.default == "coding"
    assert config.sources == []


def test_project_overrides_user_and_env_overrides_both(tmp_path: Path) -> None:
    home, ws = tmp_path / "h", tmp_path / "w"
    write(home / "config.toml", '[llm]\nprovider = "openai"\nmodel = "user-model"\ntimeout = 30\n')
    write(ws / ".yagent" / "config.toml", '[llm]\nmodel = "project-model"\n')
    trust_project(home, ws)  # [llm] from a repository applies only once trusted
    config = load(home=home, workspace=ws, env={})
    assert (config.llm.provider, config.llm.model, config.llm.timeout) == (
        "openai",
        "project-model",
        30,
    )
    config = load(home=home, workspace=ws, env={"YAGENT_MODEL": "env-model"})
    assert config.llm.model == "env-model"
    assert config.sources[-1] == "environment"


def test_unknown_keys_are_errors_naming_the_key(tmp_path: Path) -> None:
    write(tmp_path / "h" / "config.toml", "[agent]\nmax_stepz = 3\n")
    with pytest.raises(ConfigError, match=r"agent\.max_stepz"):
        load(home=tmp_path / "h", workspace=tmp_path / "w", env={})


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    write(tmp_path / "h" / "config.toml", "[llm\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(home=tmp_path / "h", workspace=tmp_path / "w", env={})


def test_api_key_in_config_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "h" / "config.toml", '[llm]\napi_key = "sk-123"\n')
    with pytest.raises(ConfigError, match="not allowed"):
        load(home=tmp_path / "h", workspace=tmp_path / "w", env={})


def test_api_key_from_env_or_file_never_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "h" / "config.toml", '[llm]\nprovider = "anthropic"\n')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value")
    config = load(home=tmp_path / "h", workspace=tmp_path / "w", env={})
    key = config.llm.api_key()
    assert key is not None
    assert key.get_secret_value() == "sk-secret-value"
    assert "sk-secret-value" not in repr(config) + str(key)
    keyfile = tmp_path / "key"
    keyfile.write_text("sk-from-file\n")
    write(tmp_path / "h" / "config.toml", f'[llm]\napi_key_file = "{keyfile}"\n')
    config = load(home=tmp_path / "h", workspace=tmp_path / "w", env={})
    assert config.llm.api_key().get_secret_value() == "sk-from-file"  # type: ignore[union-attr]
    write(tmp_path / "h" / "config.toml", '[llm]\napi_key_file = "/nonexistent/key"\n')
    config = load(home=tmp_path / "h", workspace=tmp_path / "w", env={})
    with pytest.raises(ConfigError, match="cannot read api_key_file"):
        config.llm.api_key()


def test_sections_for_mcp_hooks_agents(tmp_path: Path) -> None:
    write(
        tmp_path / "h" / "config.toml",
        """
[mcp.github]
command = "npx"
args = ["-y", "server"]

[[hooks]]
command = "exit 0"
matcher = "run_bash"

[agents.reviewer]
prompt = "Review."
tools = ["read_file"]
""",
    )
    config = load(home=tmp_path / "h", workspace=tmp_path / "w", env={})
    assert config.mcp["github"].args == ["-y", "server"]
    assert config.hooks[0].matcher == "run_bash"
    assert config.agents["reviewer"].tools == ["read_file"]
