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
  top-level `title`, `$comment`) and every string in them — keys and values at any depth:
  parameter descriptions, titles, enum and default values, definitions — neutralised like the
  description (a poisoned schema reaches the model in every request; a name that had to change
  makes the server refuse the call, never obey the band); a schema that is not an object schema
  becomes one wrapping nothing, and the tool says so in its description. Top-level `anyOf` /
  `oneOf` / `allOf` / `not` (refused by OpenAI and Anthropic alike) are folded into one object
  schema and the exact rule is appended to the description; the server still validates each call.
- The catalog line (`Spec.brief`) is the tool's title and the first sentence of its description
  ("Echo Tool — Echoes back the input string"), capped at `BRIEF_LIMIT`.
- Tools whose execution requires task augmentation (`taskSupport: required`) are not offered:
  yagent does not run MCP tasks (`unsupported()` says why, for the problems list).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yagent.kernel.context import reminder
from yagent.toolspec import Effect, Spec, Tier, first_sentence

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
NAME_LIMIT = 64
TITLE_LIMIT = 80
DESCRIPTION_LIMIT = 1024
_DROPPED_KEYS = ("$schema", "$id", "$comment")
_TOP_COMBINATORS = ("anyOf", "oneOf", "allOf", "not")
BRIEF_LIMIT = 160


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


def catalog_line(title: str, description: str) -> str:
    """The catalog's line for a tool: its title and the first sentence of its description."""
    short = first_sentence(clean_text(description, DESCRIPTION_LIMIT), BRIEF_LIMIT)
    if not title or short.lower().startswith(title.lower()):
        return short or title
    return first_sentence(f"{title} — {short}", BRIEF_LIMIT) if short else title


def spec_name(server: str, tool: str) -> str:
    name = f"{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    return name[:NAME_LIMIT]


def sanitize_schema(schema: Any) -> tuple[dict[str, Any], str]:
    """The input schema as providers accept it, and a note when it had to be changed."""
    schema = _neutral(schema)
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}, "its input schema was not an object schema"
    out = {k: v for k, v in schema.items() if k not in _DROPPED_KEYS and k != "title"}
    out["type"] = "object"
    out.setdefault("properties", {})
    note = ""
    combined = [k for k in _TOP_COMBINATORS if k in out]
    if combined:
        out, note = _folded(out, combined)
    return out, note


def _neutral(value: Any) -> Any:
    """`value` (a JSON value) with every string in it, keys included, neutralised."""
    if isinstance(value, str):
        return reminder.neutralize(value)
    if isinstance(value, Mapping):
        return {_neutral(str(k)): _neutral(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_neutral(v) for v in value]
    return value


def _folded(schema: dict[str, Any], combined: list[str]) -> tuple[dict[str, Any], str]:
    """Top-level anyOf / oneOf / allOf / not, which OpenAI and Anthropic both refuse, folded into
    one object schema: the branches' properties merged (required: all of allOf's, only those
    every anyOf / oneOf branch requires). The exact rule is stated in the description, and the
    server still validates every call (a refusal there settles as not applied)."""
    out = {k: v for k, v in schema.items() if k not in _TOP_COMBINATORS}
    props = dict(out.get("properties") or {})
    required = set(out.get("required") or ())
    for key in combined:
        branches = [b for b in schema.get(key) or () if isinstance(b, Mapping)]
        if key == "not":
            continue
        needed = [set(b.get("required") or ()) for b in branches]
        for branch in branches:
            for name, sub in dict(branch.get("properties") or {}).items():
                props.setdefault(name, sub)
        if key == "allOf":
            required |= set().union(*needed) if needed else set()
        elif needed:
            required |= set.intersection(*needed)
    out["properties"] = props
    if required:
        out["required"] = sorted(required)
    rule = json.dumps({k: schema[k] for k in combined}, ensure_ascii=False, sort_keys=True)
    return out, f"its arguments must also satisfy {clean_text(rule, 600)}"


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
    if note and not schema["properties"]:
        description += f" [yagent: {note}; it is called without arguments]"
    elif note:
        description += f" [yagent: {note}]"
    return Spec(
        spec_name(server, tool.name),
        description,
        schema,
        hints.effect,
        Tier.COLD,
        brief=catalog_line(clean_text(title, TITLE_LIMIT), tool.description or ""),
        tags=frozenset({"mcp", server} | hints.tags()),
        external=True,
        always_authorize=hints.authorization(),
        own_timeout=lambda _args: own_timeout,
    )
