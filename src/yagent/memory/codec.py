"""JSON and text in and out of the store: every payload, message, meta, checkpoint and text
argument is checked here.

`encode_object` accepts exactly what reads back equal: a mapping with string keys whose values are
None, bool, int, finite float, str, lists / tuples (read back as lists) and such mappings (read back
as dicts). Anything else — a set, bytes, a non-string key, NaN, a cycle — raises `TypeError` naming
the path to the offending value, before the caller opens a transaction, so nothing is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from yagent.memory.errors import SchemaError


def _normal(value: Any, path: str) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise TypeError(f"{path} is {value!r}, which JSON cannot represent")
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path} has a non-string key {key!r}; JSON keys are strings")
            out[key] = _normal(item, f"{path}[{key!r}]")
        return out
    if isinstance(value, list | tuple):
        return [_normal(item, f"{path}[{index}]") for index, item in enumerate(value)]
    raise TypeError(f"{path} is a {type(value).__name__}, which is not JSON-serialisable")


def normalise_object(value: object, what: str) -> dict[str, Any]:
    """A plain-dict copy of a JSON object, or `TypeError` saying what is wrong and where."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a JSON object (a dict), got {type(value).__name__}")
    try:
        result: dict[str, Any] = _normal(value, what)
    except RecursionError:
        raise TypeError(f"{what} is circular or nested too deeply to store as JSON") from None
    return result


def dumps(value: dict[str, Any]) -> str:
    """Compact JSON of an already normalised object (no NaN can reach here). Text stays readable;
    a lone surrogate, which UTF-8 (SQLite's text) cannot hold, is kept as a JSON escape."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if _utf8_clean(text):
        return text
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _utf8_clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_arg(value: object, what: str) -> str:
    """A str argument SQLite can store as text, or `TypeError` / `ValueError` before any write."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not _utf8_clean(value):
        raise ValueError(f"{what} contains a lone surrogate, which cannot be stored as UTF-8 text")
    return value


def encode_object(value: object, what: str) -> str:
    return dumps(normalise_object(value, what))


def decode_object(text: str) -> dict[str, Any]:
    """The stored object back; a row that is not a JSON object was damaged outside this code."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"a stored record is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SchemaError(f"a stored record is a JSON {type(value).__name__}, not an object")
    return value
