"""What to do when the model provider refuses a request, said with the failure.

Contract:
- `hints(llm, config_file)` maps the failure kinds a person fixes in their configuration to one
  clause naming what to check, from what this configuration actually uses: a refused key names
  where the key came from (`api_key_file`, the `api_key_env` variable) — or that no key was sent
  because that variable is unset (a loopback server runs keyless) — and the file where another is
  named; an unknown model or path names `[llm] model` and the base_url in use; a permission
  refusal, a rate limit or a spent quota say what they mean. Never the key's value.
- `advised(exc, hints)` is the same `EngineError` (kind unchanged, so retries and the failure
  table read it as before) with the clause appended after ` — `; a kind without a hint is
  returned as it is.
- The provider's own message stays first and whole: the hint adds, never replaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from yagent.app.llmconfig import DEFAULT_KEY_ENV, LLMConfig
from yagent.kernel.judge import toolfail
from yagent.llm.types import EngineError

Kind = toolfail.Kind


def hints(llm: LLMConfig, config_file: Path) -> dict[Kind, str]:
    env = llm.api_key_env or DEFAULT_KEY_ENV.get(llm.provider or "", "")
    if llm.api_key_file:
        refused = f"the server refused the API key in {llm.api_key_file} ([llm] api_key_file)"
    elif llm.api_key() is None:
        refused = (
            f"no API key was sent ({env} is not set): if this server needs one, "
            f"export {env}=… or name a key file with [llm] api_key_file in {config_file}"
        )
    else:
        refused = (
            f"the server refused the API key in {env}: check its value, or name another "
            f"variable with [llm] api_key_env (or a file with api_key_file) in {config_file}"
        )
    address = llm.base_url or "not set: the provider's own address"
    return {
        Kind.UNAUTHORIZED: refused,
        Kind.PERMISSION: (
            "the key may not use this model or endpoint: check [llm] model (or the agent's own "
            f"`model`) and the key's access with the provider ({config_file})"
        ),
        Kind.NOT_FOUND: (
            "the server has no such model or API path: check [llm] model (or the agent's own "
            f"`model`) and base_url ({address}) in {config_file}"
        ),
        Kind.RATE_LIMITED: (
            "the provider is limiting requests or the account's quota is spent: wait and resume, "
            "or check the account's plan and billing"
        ),
    }


def advised(exc: EngineError, known: Mapping[Kind, str]) -> EngineError:
    hint = known.get(exc.kind)
    if hint is None:
        return exc
    return EngineError(exc.kind, f"{exc} — {hint}")
