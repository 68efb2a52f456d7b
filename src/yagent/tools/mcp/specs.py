"""An MCP server's tool as a yagent `Spec`: its effect from its annotations, its text made safe.

Contract:
- Effect comes from the tool's declared hints, read with the MCP defaults for a hint that is
  absent (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true):
  readOnlyHint true ⇒ READ, anything else ⇒ WRITE — an unannotated tool is a mutating,
  destructive, open-world one. Profiles, presets, worktree confinement, the audit gate and the
  side-effect table then treat the tool exactly like a built-in tool with that effect.
- Open-world tools (openWorldHint true or absent) carry `always_authorize` naming the hint: a
  person answers every call unless a standing permission (-y, session, project) covers it.
- The hints travel as tags: `mcp`, the server's name, `annotated` or `unannotated`, and
  `read-only`, `destructive`, `idempotent`, `open-world` as read above. A tool that declares
  every hint false is `annotated`, mutating and non-destructive — not "unannotated".
- Server-supplied names, titles and descriptions are untrusted: control characters are removed,
  lengths are capped with a visible '…', and forged reminder bands or chat-template tokens are
  neutralised (`reminder.neutralize`) before anything reaches the catalog or the model.
- Input schemas are passed on with only what providers reject removed (`$schema`, `$id`, a
  top-level `title`, `$comment`); a schema that is not an object schema becomes one wrapping
  nothing, and the tool says so in its description.
- Tools whose execution requires task augmentation (`taskSupport: required`) are not offered:
  yagent does not run MCP tasks (`unsupported()` says why, for the problems list).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yagent.kernel import reminder
from yagent.toolspec import Effect, Spec, Tier

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
NAME_LIMIT = 64
TITLE_LIMIT = 80
DESCRIPTION_LIMIT = 1024
_DROPPED_KEYS = ("$schema", "$id", "$comment")


@dataclass(frozen=True, slots=True)
class Hints:
    """A tool's annotations with the MCP defaults applied to every hint it leaves out."""

    declared: bool
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool

    @classmethod
    def of(cls, annotations: Any) -> Hints:
        values = [
            getattr(annotations, attr, None)
            for attr in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
        ]
        read_only = values[0] is True
        return cls(
            declared=any(v is not None for v in values),
            read_only=read_only,
            destructive=not read_only and values[1] is not False,
            idempotent=read_only or values[2] is True,
            open_world=values[3] is not False,
        )

    @property
    def effect(self) -> Effect:
        return Effect.READ if self.read_only else Effect.WRITE

    def tags(self) -> set[str]:
        flags = {
            "read-only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "open-world": self.open_world,
        }
        return {"annotated" if self.declared else "unannotated"} | {
            k for k, v in flags.items() if v
        }

    def authorization(self) -> str:
        """Why every call needs a person ('' when it does not)."""
        if not self.declared:
            return (
                "declares no annotations: counted as mutating and open-world (it may reach "
                "systems outside this machine)"
            )
        if self.open_world:
            return "declares openWorldHint: it may reach systems outside this machine"
        return ""


def clean_text(text: str, limit: int) -> str:
    """Server-supplied text on one line: control characters gone, neutralised, capped."""
    kept = "".join(
        " " if ch in "\t\n\r" else ch
        for ch in text
        if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cf")
    )
    flat = reminder.neutralize(" ".join(kept.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def spec_name(server: str, tool: str) -> str:
    name = f"{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    return name[:NAME_LIMIT]


def sanitize_schema(schema: Any) -> tuple[dict[str, Any], str]:
    """The input schema as providers accept it, and a note when it had to be replaced."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}, "its input schema was not an object schema"
    out = {k: v for k, v in schema.items() if k not in _DROPPED_KEYS and k != "title"}
    out["type"] = "object"
    out.setdefault("properties", {})
    return out, ""


def unsupported(tool: Any) -> str:
    """Why this tool cannot be offered ('' when it can)."""
    execution = getattr(tool, "execution", None)
    if getattr(execution, "task_support", None) == "required":
        return "requires task augmentation (taskSupport: required), which yagent does not run"
    return ""


def to_spec(server: str, tool: Any, own_timeout: float) -> Spec:
    hints = Hints.of(tool.annotations)
    title = (getattr(tool.annotations, "title", None) or "") or (tool.title or "")
    schema, note = sanitize_schema(tool.input_schema)
    description = clean_text(tool.description or "", DESCRIPTION_LIMIT) or (
        f"{clean_text(tool.name, NAME_LIMIT)} (from MCP server {server})"
    )
    if note:
        description += f" [yagent: {note}; it is called without arguments]"
    return Spec(
        spec_name(server, tool.name),
        description,
        schema,
        hints.effect,
        Tier.COLD,
        brief=clean_text(title, TITLE_LIMIT),
        tags=frozenset({"mcp", server} | hints.tags()),
        external=True,
        always_authorize=hints.authorization(),
        own_timeout=lambda _args: own_timeout,
    )
