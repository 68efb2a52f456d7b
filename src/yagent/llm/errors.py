"""Provider errors → `EngineError(kind, message)`, classified with the `toolfail` table.

Contract:
- Every exception an SDK or an engine's own HTTP client raises leaves an engine as an
  `EngineError` whose kind comes from `toolfail`: an HTTP status through `classify_status` (429
  rate_limited, 503/529 overloaded, 401 unauthorized, 400 invalid_args …), a timeout as
  `timeout`, a refused or broken connection as `transient`. An error reported *inside* a 200
  stream (Anthropic's `event: error`, an OpenAI-style `{"error": …}` chunk) is classified from
  its error type or code, the same way.
- The message names the provider, the model, the address when the engine gives it (so a refused
  connection or an unknown name says where it was trying) and the status; it never contains the
  API key (the key is redacted if a server echoes it) and the provider's detail is capped at
  `DETAIL_LIMIT` characters, marked when cut.
- Anything that cannot be classified is `toolfail.Kind.UNKNOWN` (not retryable: fail closed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yagent.kernel.judge import toolfail
from yagent.llm.types import EngineError

Kind = toolfail.Kind

DETAIL_LIMIT = 400

# Error type / code strings used by Anthropic, OpenAI and the OpenAI-compatible servers.
_ERROR_TYPES: Mapping[str, Kind] = {
    "overloaded_error": Kind.OVERLOADED,
    "overloaded": Kind.OVERLOADED,
    "rate_limit_error": Kind.RATE_LIMITED,
    "rate_limit_exceeded": Kind.RATE_LIMITED,
    "insufficient_quota": Kind.RATE_LIMITED,
    "api_error": Kind.TRANSIENT,
    "server_error": Kind.TRANSIENT,
    "timeout_error": Kind.TIMEOUT,
    "invalid_request_error": Kind.INVALID_ARGS,
    "authentication_error": Kind.UNAUTHORIZED,
    "invalid_api_key": Kind.UNAUTHORIZED,
    "permission_error": Kind.PERMISSION,
    "not_found_error": Kind.NOT_FOUND,
    "request_too_large": Kind.TOO_LARGE,
    "context_length_exceeded": Kind.TOO_LARGE,
}


def _error_object(body: object) -> Mapping[str, Any]:
    """The `{"type", "code", "message"}` object of an error body, wherever the provider put it."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        return body
    return {}


def kind_of_body(body: object) -> Kind:
    """Kind of an error body (used for errors that arrive inside a successful stream)."""
    error = _error_object(body)
    for key in ("type", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return toolfail.classify_status(value)
        if isinstance(value, str):
            if value.isdigit():
                return toolfail.classify_status(int(value))
            if value in _ERROR_TYPES:
                return _ERROR_TYPES[value]
    return Kind.UNKNOWN


def _detail(exc: BaseException) -> str:
    message = _error_object(getattr(exc, "body", None)).get("message")
    text = message if isinstance(message, str) and message else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def _redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    if len(text) > DETAIL_LIMIT:
        text = text[:DETAIL_LIMIT] + f" … [truncated, {len(text)} chars]"
    return text


def to_engine_error(
    exc: Exception,
    *,
    provider: str,
    model: str,
    timeout_types: tuple[type[BaseException], ...],
    connection_types: tuple[type[BaseException], ...],
    secret: str | None = None,
    url: str | None = None,
) -> EngineError:
    """Classify `exc` (raised by the provider's SDK or its HTTP transport) as an `EngineError`;
    `url`: the address the request went to, named in the message (`at URL`).

    `timeout_types` are checked before `connection_types` because the SDKs' timeout error is a
    subclass of their connection error.
    """
    if isinstance(exc, EngineError):
        return exc
    status = getattr(exc, "status_code", None)
    where = f"{provider} model {model!r}" + (f" at {url}" if url else "")
    if isinstance(status, int) and status >= 400:
        kind = toolfail.classify_status(status)
        where += f": HTTP {status}"
    elif isinstance(exc, timeout_types):
        kind = Kind.TIMEOUT
    elif isinstance(exc, connection_types):
        kind = Kind.TRANSIENT
    elif getattr(exc, "body", None) is not None:
        kind = kind_of_body(exc.body)  # type: ignore[attr-defined]
        where += ": error in stream"
    else:
        kind = toolfail.classify(exc)
    return EngineError(kind, f"{where} ({kind.value}): {_redact(_detail(exc), secret)}")
