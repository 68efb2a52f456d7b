"""callform: the signature a program calls a loaded tool by, and positional → JSON arguments.

Contract (one truth shared by the side that shows forms and the side that binds them):
- A tool's function name is `toolname.normalize(tool name)`; its positional order is the
  required parameters in declared order, then the optional ones in declared order. The signature
  reads `ident(a, b, c?)`, optional parameters marked `?`, parameter labels normalised with the
  same rule.
- `args_from_positional(entry, values)` maps positional values onto parameter names. Optional
  parameters that were not passed — or passed as `None` (a program's `undefined`) — are ABSENT
  from the result, never `null`. A missing required value or too many values is a
  `CallFormError` that says what the form is.
- `call_forms(entries)` refuses (`IdentCollisionError`) two tools whose names normalise to one
  identifier, and `call_form` refuses a tool whose parameter labels collide: a program could
  otherwise reach the wrong tool or argument with no signal.
What values mean and how they are validated against the schema is the tool's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from yagent.kernel.judge import toolname
from yagent.kernel.judge.tooldisclose.catalog import ToolEntry
from yagent.kernel.judge.tooldisclose.errors import CallFormError, IdentCollisionError


@dataclass(frozen=True, slots=True)
class CallForm:
    """How a program calls one tool."""

    tool: str
    ident: str
    params: tuple[str, ...]
    required: int

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(toolname.normalize(p) for p in self.params)

    @property
    def signature(self) -> str:
        marked = [
            label if i < self.required else f"{label}?" for i, label in enumerate(self.labels)
        ]
        return f"{self.ident}({', '.join(marked)})"


def _order(entry: ToolEntry) -> tuple[tuple[str, ...], int]:
    required = entry.required
    return tuple(p.name for p in (*required, *entry.optional)), len(required)


def call_form(entry: ToolEntry) -> CallForm:
    """The call form of one tool."""
    params, required = _order(entry)
    clashes = toolname.collisions(params)
    if clashes:
        raise IdentCollisionError(
            f"tool {entry.name!r}: parameters {dict(clashes)} normalise to one label"
        )
    return CallForm(entry.name, toolname.normalize(entry.name), params, required)


def call_forms(entries: Iterable[ToolEntry]) -> tuple[CallForm, ...]:
    """Call forms of `entries`, sorted by identifier; colliding identifiers are refused."""
    listed = list(entries)
    clashes = toolname.collisions(e.name for e in listed)
    if clashes:
        raise IdentCollisionError(f"tool names normalise to one identifier: {dict(clashes)}")
    return tuple(sorted((call_form(e) for e in listed), key=lambda f: f.ident))


def args_from_positional(entry: ToolEntry, values: Sequence[Any]) -> dict[str, Any]:
    """Positional `values` as the JSON object of arguments (see the module contract)."""
    form = call_form(entry)
    if len(values) > len(form.params):
        raise CallFormError(
            f"{form.signature} takes at most {len(form.params)} arguments, got {len(values)}"
        )
    args: dict[str, Any] = {}
    for i, name in enumerate(form.params):
        value = values[i] if i < len(values) else None
        if value is None:
            if i < form.required:
                raise CallFormError(
                    f"{form.signature}: required argument {name!r} (position {i + 1}) is missing"
                )
            continue
        args[name] = value
    return args
