"""Further model providers `/model` can switch to: `[llm.providers.LABEL]` sections.

Contract:
- `[llm]` names the provider and model a session starts with; each `[llm.providers.LABEL]`
  names one more provider (`provider`, default LABEL when LABEL is one: openai, anthropic,
  ollama), where it is (`base_url`), its key (`api_key_env` / `api_key_file`, as in `[llm]`) and
  the models it serves (`models`, at least one). Timeouts, retries, `max_tokens`, prices and
  `vision` stay those of `[llm]`.
- `resolve(name, ...)`: `LABEL/MODEL` is MODEL (any name) on that section — `[llm]`'s own
  provider is labelled by its provider name, a section of the same label wins; a bare name is
  the first configured choice serving it (`[llm]`'s model first). With no section configured,
  any other name is a model of the provider in use (how `/model` worked before sections); with
  sections, it is refused (`UnknownProviderError`) naming every configured model and provider.
- `choices(...)`: every configured model as `/model` accepts it, `[llm]`'s first.
Leaves to the host: building the engine (its key checks stay in `app.engines`), and what to do
with the engine it replaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Provider = Literal["openai", "anthropic", "ollama"]
PROVIDERS: tuple[str, ...] = get_args(Provider)


class ProviderSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Provider | None = None  # None: the section's label, when it names a provider
    base_url: str | None = None
    api_key_env: str | None = None
    api_key_file: str | None = None
    models: list[str] = Field(min_length=1)


class UnknownProviderError(ValueError):
    """`LABEL/MODEL` names no configured provider section."""


@dataclass(frozen=True, slots=True)
class Choice:
    label: str  # the section ("" for [llm] itself)
    model: str
    update: Mapping[str, Any]  # the [llm] fields this choice replaces

    @property
    def name(self) -> str:
        """How `/model` takes it (a model served by a section: LABEL/MODEL)."""
        return f"{self.label}/{self.model}" if self.label else self.model


def section_update(label: str, section: ProviderSection, model: str) -> dict[str, Any]:
    provider = section.provider or (label if label in PROVIDERS else None)
    if provider is None:
        raise UnknownProviderError(
            f"[llm.providers.{label}] names no provider: set provider = "
            f"{' | '.join(repr(p) for p in PROVIDERS)}"
        )
    return {
        "provider": provider,
        "model": model,
        "base_url": section.base_url,
        "api_key_env": section.api_key_env,
        "api_key_file": section.api_key_file,
    }


def choices(main: Mapping[str, Any], sections: Mapping[str, ProviderSection]) -> list[Choice]:
    """`main`: the `[llm]` fields a session started with (provider, model, base_url, keys)."""
    out = [Choice("", str(main.get("model") or ""), dict(main))] if main.get("model") else []
    for label, section in sections.items():
        out += [Choice(label, m, section_update(label, section, m)) for m in section.models]
    return out


def resolve(
    name: str, main: Mapping[str, Any], sections: Mapping[str, ProviderSection]
) -> Choice | None:
    """The choice `name` means; None: a model of the provider in use (not configured)."""
    known = choices(main, sections)
    for choice in known:
        if name in (choice.model, choice.name):
            return choice
    label, slash, model = name.partition("/")
    if slash and model and label in sections:
        return Choice(label, model, section_update(label, sections[label], model))
    if slash and model and label == str(main.get("provider") or "ollama"):
        return Choice("", model, {**main, "model": model})
    if not sections:
        return None
    labels = [str(main.get("provider") or "ollama"), *sections]
    raise UnknownProviderError(
        f"no configured model {name!r}: models are {', '.join(c.name for c in known)}; "
        f"providers are {', '.join(labels)} (LABEL/MODEL picks any model of one)"
    )
