"""Agent identity recognised from a request's system prompt (shared by the scripted and replay
engines).

Contract: the identity is the first one, in sorted order, whose marker (the identity's own name
unless `markers` gives another text) occurs in the first line of the system prompt. It is never
taken from a call counter or from the request's `agent` field, so the two test engines dispatch
exactly as a real multi-agent run presents itself. No match is an `EngineError` quoting that line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from yagent.kernel.judge import toolfail
from yagent.llm.types import EngineError


def first_line(system: str) -> str:
    stripped = system.strip()
    return stripped.splitlines()[0] if stripped else ""


def identify(
    system: str, identities: Iterable[str], markers: Mapping[str, str], *, who: str
) -> str:
    """The identity whose marker occurs in the prompt's first line; `who` names the engine."""
    first = first_line(system)
    for ident in sorted(identities):
        marker = markers.get(ident, ident)
        if marker and marker in first:
            return ident
    raise EngineError(toolfail.Kind.INTERNAL, f"{who}: no script for system prompt {first!r}")
