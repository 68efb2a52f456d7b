"""`[llm.providers.LABEL]`: what `/model NAME` resolves to, and what the configuration refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.app.config import ConfigError, _build
from yagent.app.llmproviders import ProviderSection, UnknownProviderError, choices, resolve

MAIN = {"provider": "openai", "model": "m", "base_url": "http://a/v1"}
SECTIONS = {
    "anthropic": ProviderSection(models=["claude-a", "claude-b"]),
    "local": ProviderSection(provider="ollama", base_url="http://b/v1", models=["qwen", "m"]),
}


def test_a_listed_name_picks_its_section_and_the_first_listing_wins() -> None:
    chosen = resolve("claude-b", MAIN, SECTIONS)
    assert chosen is not None
    assert chosen.update["provider"] == "anthropic"
    assert chosen.update["model"] == "claude-b"
    assert chosen.update["base_url"] is None  # a section's own place, not [llm]'s
    main = resolve("m", MAIN, SECTIONS)  # [llm]'s model first
    assert main is not None
    assert main.update == MAIN


def test_label_slash_model_takes_any_model_of_that_section_or_of_llm_itself() -> None:
    chosen = resolve("local/llama3", MAIN, SECTIONS)
    assert chosen is not None
    assert chosen.update["provider"] == "ollama"
    assert chosen.update["base_url"] == "http://b/v1"
    assert chosen.update["model"] == "llama3"
    own = resolve("openai/gpt-x", MAIN, SECTIONS)
    assert own is not None
    assert own.update == {**MAIN, "model": "gpt-x"}


def test_an_unknown_name_is_refused_with_every_model_and_provider() -> None:
    with pytest.raises(UnknownProviderError) as caught:
        resolve("gpt-nothing", MAIN, SECTIONS)
    said = str(caught.value)
    assert "m, anthropic/claude-a, anthropic/claude-b, local/qwen, local/m" in said
    assert "providers are openai, anthropic, local" in said


def test_without_sections_any_name_is_a_model_of_the_provider_in_use() -> None:
    assert resolve("gpt-x", MAIN, {}) is None
    assert [c.name for c in choices(MAIN, {})] == ["m"]


def test_a_section_naming_no_provider_is_refused_when_the_configuration_loads() -> None:
    data = {"llm": {"provider": "openai", "model": "m", "providers": {"work": {"models": ["x"]}}}}
    with pytest.raises(ConfigError, match=r"\[llm.providers.work\] names no provider"):
        _build([(Path("config.toml"), data)], {})
