"""What a configuration validation problem says: where it is, and for an unknown key the section
that has it when another top-level section does (`[sandbox] preset` → `agent.preset`), else the
closest known one (`modle` → `model`) among the keys the model accepts at that place — so a typo
never reads as a silent default. Works for any pydantic model tree: nested models, tables of named
entries (`dict[str, Model]`) and lists of models.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

QUOTE_LIMIT = 60  # characters of a wrong value quoted back
_SCALARS = (str, int, float, bool)
_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}


def _quote(given: object) -> str:
    text = repr(given) if isinstance(given, _SCALARS) else type(given).__name__
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + "…"


def keys_at(root: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys `root` accepts where `loc`'s last part sits."""
    at: Any = root
    for part in loc[:-1]:
        if isinstance(at, type) and issubclass(at, BaseModel) and isinstance(part, str):
            field = at.model_fields.get(part)
            at = field.annotation if field is not None else None
        elif typing.get_origin(at) in (dict, list):  # a table of named entries, or a list
            at = typing.get_args(at)[-1]
        else:
            return []
    if isinstance(at, type) and issubclass(at, BaseModel):
        return list(at.model_fields)
    return []


def section_of(root: type[BaseModel], key: str, *, exclude: str = "") -> str:
    """The top-level section (other than `exclude`) that has `key` itself, or ""."""
    for name, field in root.model_fields.items():
        at = field.annotation
        if name == exclude or not (isinstance(at, type) and issubclass(at, BaseModel)):
            continue
        if key in at.model_fields:
            return name
    return ""


def problem(
    root: type[BaseModel], loc: Sequence[int | str], message: str, kind: str, given: object = None
) -> str:
    """One validation problem; an unknown key names the closest known one, a wrong value quotes
    what was `given` (a scalar, cut at `QUOTE_LIMIT`), and pydantic's own wording is kept out
    (its "Value error, " prefix, "instance of <class>")."""
    where = ".".join(map(str, loc))
    if kind in ("model_type", "dict_type") and loc:  # the value itself is not quoted: a table
        got = _KINDS.get(type(given), type(given).__name__)  # of env or headers holds secrets
        return f"{where}: must be a table ([{where}] with its keys below it), got {got}"
    message = message.removeprefix("Value error, ")
    if kind not in ("value_error", "missing", "extra_forbidden") and isinstance(given, _SCALARS):
        return f"{where}: {message} (got {_quote(given)})"
    if kind == "extra_forbidden" and loc:
        home = section_of(root, str(loc[-1]), exclude=str(loc[0]) if len(loc) > 1 else "")
        if home:
            return f"{where}: unknown key (it belongs in [{home}]: {home}.{loc[-1]})"
        close = difflib.get_close_matches(str(loc[-1]), keys_at(root, loc), n=1, cutoff=0.6)
        if close:
            return f"{where}: unknown key (did you mean {close[0]!r}?)"
        return f"{where}: unknown key"
    return f"{where}: {message}"
