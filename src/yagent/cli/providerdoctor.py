"""`yagent doctor`'s provider row: whether the configured model provider would answer a run, and
when not, what to do — the advice a run's failure carries (`app.provideradvice`), naming this
home's `config.toml`.

Contract:
- The engine is chosen as a run chooses it (`app.engines`, with the home): a missing provider,
  model or key is the run's own message, whole (it names the file to edit and the variable to
  set). A configured provider needs no event loop; finding a local Ollama server does.
- One request, `GET <models>` (`<base_url>/models`; Anthropic `<base>/v1/models`), with the key
  the run would send (none when the run goes keyless): unreachable names the address and says
  to check `[llm] base_url`; a refused key (401), a forbidden one (403), an unknown path (404)
  or a rate limit (429) fail with the run's advice for that kind; a listing that lacks the
  model fails with the unknown-model advice (an Ollama `NAME` matches `NAME:latest`; Anthropic's
  listing has no aliases, so its model is not looked up). Another answer leaves the row ok and
  says that the key and the model are checked at the first request.
- The key's value is never shown: a server's message that quotes it has it replaced.
Nothing is sent to the chat endpoint: no tokens are spent.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio
import httpx

from yagent.app import provideradvice
from yagent.app.config import ConfigError
from yagent.app.engines import OLLAMA_URL, build_engine, configured_engine, keyless_notice
from yagent.kernel.judge import toolfail
from yagent.llm import tls

Row = tuple[str, bool, str, bool]
OFFICIAL = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
ANTHROPIC_VERSION = "2023-06-01"
QUOTE = 200  # characters of a server's error message shown in the row


def provider_row(config: Any, home: Path) -> Row:
    llm = config.llm
    config_file = home / "config.toml"
    try:  # a configured provider needs no event loop; finding a local Ollama server does
        if llm.provider is None:
            engine = anyio.run(functools.partial(build_engine, llm, home=home))
        else:
            engine = configured_engine(llm, home=home)
        key = llm.api_key()
    except ConfigError as exc:
        return ("provider", False, str(exc), True)
    base = llm.base_url or OFFICIAL.get(llm.provider or "", f"{OLLAMA_URL}/v1")
    url, headers = _listing(llm.provider, base, key.get_secret_value() if key else None)
    where = f"{engine.model} at {base}"
    try:
        response = httpx.get(url, headers=headers, timeout=3.0, verify=tls.for_url(base))
    except httpx.HTTPError as exc:
        detail = f"{where}: unreachable ({exc}) — is the server running at {base}? "
        return ("provider", False, f"{detail}check [llm] base_url in {config_file}", True)
    advice = provideradvice.hints(llm, config_file)
    status = response.status_code
    hint = advice.get(toolfail.classify_status(status)) if status >= 400 else None
    if hint is not None:
        said = _message(response, key.get_secret_value() if key else None)
        return (
            "provider",
            False,
            f"{where}: GET {url} answered HTTP {status}{said} — {hint}",
            True,
        )
    if status == 200 and llm.provider != "anthropic":
        listed = _models(response)
        if listed and engine.model not in listed and f"{engine.model}:latest" not in listed:
            shown = ", ".join(sorted(listed)[:5]) + (" …" if len(listed) > 5 else "")
            missing = f"the server does not list model {engine.model!r} (it lists {shown})"
            hint = advice[toolfail.Kind.NOT_FOUND]
            return ("provider", False, f"{where}: {missing} — {hint}", True)
    keyless = keyless_notice(llm)
    detail = where + (f" — {keyless}" if keyless else "")
    if status != 200:
        detail += (
            f" (GET {url} answered HTTP {status}: the key and the model are checked at the "
            "first request)"
        )
    return ("provider", True, detail, True)


def _listing(provider: str | None, base: str, key: str | None) -> tuple[str, dict[str, str]]:
    """The models listing's address and the headers the run would authenticate with."""
    root = base.rstrip("/")
    if provider == "anthropic":
        headers = {"anthropic-version": ANTHROPIC_VERSION} | ({"x-api-key": key} if key else {})
        return f"{root}/v1/models", headers  # as the SDK reaches `/v1/messages`
    if provider == "openai" and key:
        return f"{root}/models", {"Authorization": f"Bearer {key}"}
    return f"{root}/models", {}


def _models(response: httpx.Response) -> set[str]:
    """The model ids of an OpenAI-style listing (`{"data": [{"id": …}]}`); empty when unread."""
    try:
        data = response.json()
    except ValueError:
        return set()
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return set()
    return {str(m["id"]) for m in items if isinstance(m, dict) and isinstance(m.get("id"), str)}


def _message(response: httpx.Response, key: str | None) -> str:
    """` (the server's message)`, short, without the key; '' when it sent none."""
    try:
        data = response.json()
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    text = error.get("message") if isinstance(error, dict) else error
    if not isinstance(text, str) or not text.strip():
        return ""
    text = " ".join(text.split())
    if key and len(key) >= 4:
        text = text.replace(key, "[redacted]")
    return f" ({text[:QUOTE]}{' …' if len(text) > QUOTE else ''})"
