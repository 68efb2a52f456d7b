"""Choosing the model engine from configuration.

With a provider configured: OpenAI-compatible (`openai`, `ollama`) or Anthropic. With none: a
local Ollama server is used if one answers on its default address; otherwise `NoProviderError`
says exactly how to configure one. A missing API key for a provider that needs one is an error
naming the environment variable to set — unless `base_url` is on loopback (a local server that
ignores keys): then the run goes keyless and `keyless_notice` says so (at start and in doctor).
A `base_url` elsewhere never runs keyless.

This module is the factory of the provider engines: each engine's module is imported when that
engine is built. The Anthropic engine loads the `anthropic` SDK (heavier to import than the rest
of a command), so a run on another provider never loads it and commands that build no engine
load no engine at all; the OpenAI-compatible engine speaks its protocol on httpx itself and
loads no SDK (`yagent.llm.openai_engine`). That is lazy loading at the factory, not an import
loop hidden in a function (the engine modules import nothing from `app`). With a provider
configured, `build_engine` makes every check (model, key) at once but returns a `Deferred`
engine: the engine is built at the first model request — the interactive prompt is drawn
without waiting for it. `configured_engine` is that step alone, synchronous: with a provider
configured nothing needs the network or an event loop (`doctor` checks it so). Asking a local
Ollama server for its models loads no CA bundle (plain HTTP: `yagent.llm.tls`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from yagent.app import provideradvice
from yagent.app.config import DEFAULT_KEY_ENV, ConfigError, LLMConfig
from yagent.llm import tls
from yagent.llm.types import Engine, EngineError, Request, StreamEvent

OLLAMA_URL = "http://127.0.0.1:11434"
USER_CONFIG = Path("~/.yagent/config.toml")  # as said when the caller names no home
HOW_TO = """no model provider is configured and no local Ollama server answered at {url}.

Configure one in {config_file} (a <repo>/.yagent/config.toml [llm] applies once you
run `yagent trust` there), for example:

    [llm]
    provider = "openai"          # or "anthropic", or "ollama"
    model = "gpt-4.1"
    # base_url = "http://localhost:8000/v1"   # any OpenAI-compatible server (vLLM, llama.cpp…)

and put the key in the environment: export OPENAI_API_KEY=…  (ANTHROPIC_API_KEY for Anthropic).
Or start Ollama (`ollama serve`) and pull a model."""


class NoProviderError(ConfigError):
    pass


async def ollama_models(url: str = OLLAMA_URL, *, wait: float = 1.5) -> list[str] | None:
    """Model names a local Ollama server offers, or None when nothing answers there."""
    try:
        async with httpx.AsyncClient(timeout=wait, verify=tls.for_url(url)) as client:
            response = await client.get(f"{url}/api/tags")
            response.raise_for_status()
            data = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    models = data.get("models", []) if isinstance(data, dict) else []
    return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("name")]


async def build_engine(
    llm: LLMConfig, *, ollama_url: str = OLLAMA_URL, home: Path | None = None
) -> Engine:
    """The engine `llm` names, or a local Ollama server's; `home`: the yagent home whose
    `config.toml` the messages name (`~/.yagent` when None)."""
    provider = llm.provider
    config_file = home / "config.toml" if home is not None else USER_CONFIG
    if provider is None:
        models = await ollama_models(ollama_url)
        if models is None:
            raise NoProviderError(HOW_TO.format(url=ollama_url, config_file=config_file))
        if not llm.model and not models:
            raise NoProviderError(
                f"the Ollama server at {ollama_url} has no models; run `ollama pull <model>`"
            )
        model = llm.model or models[0]
        return _openai(
            model,
            base_url=f"{ollama_url}/v1",
            api_key="ollama",
            timeout=llm.timeout,
            max_tokens=llm.max_tokens,
        )
    return configured_engine(llm, home=home)


def configured_engine(llm: LLMConfig, *, home: Path | None = None) -> Engine:
    """The engine of the configured provider, every check (model, key) made, built at its first
    request; `ConfigError` when something is missing. No provider configured: see
    `build_engine` (it asks the local Ollama server). Its failures carry what to check
    (`provideradvice`), naming `home`'s `config.toml`."""
    provider = llm.provider
    config_file = home / "config.toml" if home is not None else USER_CONFIG
    if provider is None:
        raise NoProviderError(HOW_TO.format(url=OLLAMA_URL, config_file=config_file))
    if not llm.model:
        raise ConfigError(f"[llm] model is required for provider {provider!r}")
    key = llm.api_key()
    advice = provideradvice.hints(llm, config_file)
    if provider == "ollama":
        base = llm.base_url or f"{OLLAMA_URL}/v1"
        return _openai(
            llm.model,
            base_url=base,
            api_key="ollama",
            timeout=llm.timeout,
            max_tokens=llm.max_tokens,
            hints=advice,
        )
    if key is None and not loopback(llm.base_url):
        env = llm.api_key_env or DEFAULT_KEY_ENV[provider]
        where = f" (only a base_url on loopback may run keyless, not {llm.base_url})"
        raise ConfigError(
            f"no API key for {provider}: the environment variable {env} is not set"
            + (where if llm.base_url else "")
            + f"; export {env}=… (or name another variable or a key file with [llm] api_key_env "
            f"or api_key_file in {config_file})"
        )
    secret = key.get_secret_value() if key is not None else "not-needed"
    if provider == "anthropic":
        return _anthropic(
            llm.model,
            base_url=llm.base_url,
            api_key=secret,
            timeout=llm.timeout,
            max_tokens=llm.max_tokens,
            hints=advice,
        )
    return _openai(
        llm.model,
        base_url=llm.base_url,
        api_key=secret,
        timeout=llm.timeout,
        max_tokens=llm.max_tokens,
        hints=advice,
    )


class Deferred:
    """An engine built at its first request (see the module docstring); its failures leave with
    what to check appended (`provideradvice.advised`)."""

    def __init__(
        self,
        model: str,
        build: Callable[[], Engine],
        hints: Mapping[provideradvice.Kind, str] | None = None,
    ) -> None:
        self._model = model
        self._build = build
        self._hints = dict(hints or {})
        self._engine: Engine | None = None

    @property
    def model(self) -> str:
        return self._model

    @property
    def built(self) -> bool:
        return self._engine is not None

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        try:
            if self._engine is None:
                self._engine = self._build()
            async for event in self._engine.stream(request):
                yield event
        except EngineError as exc:
            raise provideradvice.advised(exc, self._hints) from exc


def _openai(
    model: str, *, hints: Mapping[provideradvice.Kind, str] | None = None, **options: Any
) -> Engine:
    def build() -> Engine:
        from yagent.llm.openai_engine import OpenAIEngine  # built at the first request

        return OpenAIEngine(model, **options)

    return Deferred(model, build, hints)


def _anthropic(
    model: str, *, hints: Mapping[provideradvice.Kind, str] | None = None, **options: Any
) -> Engine:
    def build() -> Engine:
        from yagent.llm.anthropic_engine import AnthropicEngine  # the SDK loads here

        return AnthropicEngine(model, **options)

    return Deferred(model, build, hints)


def loopback(url: str | None) -> bool:
    """Whether `url` names this machine (localhost or a loopback address)."""
    host = urlsplit(url).hostname if url else None
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def keyless_notice(llm: LLMConfig) -> str | None:
    """The line saying a provider that takes a key runs without one (loopback base_url only)."""
    if llm.provider not in ("openai", "anthropic") or llm.api_key_file:
        return None
    env = llm.api_key_env or DEFAULT_KEY_ENV[llm.provider]
    if llm.api_key() is not None or not loopback(llm.base_url):
        return None
    return f"no API key: {env} is not set; running keyless against {llm.base_url} (loopback)"
