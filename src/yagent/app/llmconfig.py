"""The `[llm]` table (provider, model, key, prices) and the two pieces every config table shares:
`ConfigError` (one line for the person, exit 2 from the CLI) and `Strict` (unknown keys refused).
`app.config` re-exports them; the key is read from the file or the environment at the moment it
is asked for, never kept in the config object.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from yagent.app.llmproviders import Provider as Provider
from yagent.app.llmproviders import ProviderSection, section_update


class ConfigError(Exception):
    pass


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Price(Strict):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0)
    cache_read: float = Field(0.0, ge=0)
    cache_write: float = Field(0.0, ge=0)


DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "ollama": ""}


class LLMConfig(Strict):
    provider: Provider | None = None
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    api_key_file: str | None = None
    timeout: float = Field(120.0, gt=0)
    step_retries: int = Field(2, ge=0, le=10)
    max_tokens: int = Field(8192, gt=0)
    prices: dict[str, Price] = Field(default_factory=dict)
    vision: bool | None = None  # the model takes images (default: anthropic yes, others no)
    providers: dict[str, ProviderSection] = Field(default_factory=dict)  # more, for /model

    @field_validator("providers")
    @classmethod
    def _named(cls, value: dict[str, ProviderSection]) -> dict[str, ProviderSection]:
        for label, section in value.items():
            section_update(label, section, "")  # a section naming no provider: refused here
        return value

    def takes_images(self) -> bool:
        """Whether tool results' images go to the model as images (else as text placeholders)."""
        return self.vision if self.vision is not None else self.provider == "anthropic"

    def api_key(self) -> SecretStr | None:
        if self.api_key_file:
            path = Path(self.api_key_file).expanduser()
            try:
                return SecretStr(path.read_text(encoding="utf-8").strip())
            except OSError as exc:
                raise ConfigError(f"cannot read api_key_file {path}: {exc.strerror}") from exc
        env = self.api_key_env or DEFAULT_KEY_ENV.get(self.provider or "", "")
        value = os.environ.get(env) if env else None
        return SecretStr(value) if value else None
