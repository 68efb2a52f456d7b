"""ptc redact: credentials masked out of a worker's stderr before it reaches errors or logs.

Contract: `redact(text)` replaces, in this order, URL credentials (`scheme://user:pass@` and
`scheme://token@`), authorization headers and bearer tokens, JWTs (`eyJ…`), vendor token
prefixes (OpenAI/Anthropic `sk-`, GitHub `ghp_ gho_ ghs_ ghu_ ghr_ github_pat_`, Slack `xox?-`,
AWS `AKIA…`/`ASIA…`, Google `AIza…`, GitLab `glpat-`), `key=value` / `"key": "value"` secrets
whose key names a password, secret, token or API key, and hex strings of 32 or more characters.
Everything else — the crash reason, a Python traceback, a V8 fatal error — is kept verbatim, so
the cause of an abnormal end stays readable. Masks say what was removed (`[redacted:jwt]`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

MASK = "[redacted:{}]"

_Replacement = str | Callable[[re.Match[str]], str]

_RULES: tuple[tuple[str, re.Pattern[str], _Replacement], ...] = (
    (
        "url-credentials",
        re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@:]*(?::[^/\s@]*)?@"),
        r"\1" + MASK.format("credentials") + "@",
    ),
    (
        "authorization",
        re.compile(
            r"(?i)\b(authorization\s*[:=]\s*[\"']?)(?:(bearer|basic|token|digest)\s+)?[^\s\"',;]+"
        ),
        lambda m: (
            f"{m.group(1)}{m.group(2) + ' ' if m.group(2) else ''}" + MASK.format("authorization")
        ),
    ),
    (
        "bearer",
        re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"),
        r"\1 " + MASK.format("bearer"),
    ),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]+){0,2}"),
        MASK.format("jwt"),
    ),
    (
        "vendor-token",
        re.compile(
            r"\b(?:sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}"
            r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
            r"|AIza[0-9A-Za-z_-]{35}"
            r"|glpat-[A-Za-z0-9_-]{20,})"
        ),
        MASK.format("token"),
    ),
    (
        "key-value",
        re.compile(
            r"(?i)(\b[\w.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w.-]*"
            r"[\"']?\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"'}]+)"
        ),
        r"\1" + MASK.format("secret"),
    ),
    (
        "hex",
        re.compile(r"\b[0-9a-fA-F]{32,}\b"),
        MASK.format("hex"),
    ),
)


def redact(text: str) -> str:
    """`text` with every credential form of the module contract masked."""
    for _name, pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def rules() -> tuple[str, ...]:
    """The names of the redaction rules, in the order they apply."""
    return tuple(name for name, _pattern, _replacement in _RULES)
