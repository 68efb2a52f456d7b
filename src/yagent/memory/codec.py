"""JSON and text in and out of the store: every payload, message, meta, checkpoint and text
argument is checked here.

`encode_object` accepts exactly what reads back equal: a mapping with string keys whose values are
None, bool, int, finite float, str, lists / tuples (read back as lists) and such mappings (read back
as dicts). Anything else — a set, bytes, a non-string key, NaN, a cycle — raises `TypeError` naming
the path to the offending value, before the caller opens a transaction, so nothing is written.

`pack` stores a record's JSON of `PACK_AT` bytes or more deflated (a BLOB) when that makes it at
least a fifth smaller — a tool output of a few KB then takes a fraction of a page instead of a
page and an overflow page; shorter records stay readable text. `decode_object` reads both.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

from yagent.memory.errors import SchemaError

PACK_AT = 768  # bytes of JSON from which a record is stored deflated, when that saves a fifth


_PLAIN = frozenset({str, int, bool, type(None)})  # exact types stored as they are


def _normal(value: Any, path: str) -> Any:
    if type(value) in _PLAIN or value is None or isinstance(value, str | bool | int):
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


class _NotPlain(Exception):
    """Raised by `_plain` at the first value it does not copy as it is: `_normal` then walks
    the value again to say where and why."""


def _plain(value: Any) -> Any:
    """`_normal` without the path of each value (built only when something is wrong): the copy
    of an object whose every value is plain, the common case."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NotPlain
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = _plain(item)
        return out
    if kind is list or kind is tuple:
        return [_plain(item) for item in value]
    raise _NotPlain


def normalise_object(value: object, what: str) -> dict[str, Any]:
    """A plain-dict copy of a JSON object, or `TypeError` saying what is wrong and where."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a JSON object (a dict), got {type(value).__name__}")
    try:
        try:
            fast: dict[str, Any] = _plain(value) if type(value) is dict else _normal(value, what)
            return fast
        except _NotPlain:
            result: dict[str, Any] = _normal(value, what)  # says where, or copies a subclass
            return result
    except RecursionError:
        raise TypeError(f"{what} is circular or nested too deeply to store as JSON") from None


# The two encoders `dumps` uses, built once: `json.dumps` with options builds a new encoder per
# call (≈ 1.7 µs, and every record of every step is encoded here). An encoder keeps only its
# options, so one instance serves every thread.
_READABLE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ESCAPED = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _readable_c() -> Any:
    """`_READABLE`'s C encoder, built once (`JSONEncoder.encode` builds one per call): without
    the cycle check, which the values `dumps` gets have passed already (`normalise_object` or
    `_keys_plain`). None where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    return make(
        None, _READABLE.default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )


_READABLE_C = _readable_c()


def dumps(value: dict[str, Any]) -> str:
    """Compact JSON of an already normalised object (no NaN, no cycle can reach here). Text stays
    readable; a lone surrogate, which UTF-8 (SQLite's text) cannot hold, is kept as a JSON
    escape."""
    text = _READABLE.encode(value) if _READABLE_C is None else "".join(_READABLE_C(value, 0))
    if text.isascii() or _utf8_clean(text):
        return text
    return _ESCAPED.encode(value)


def _utf8_clean(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_arg(value: object, what: str) -> str:
    """A str argument SQLite can store as text, or `TypeError` / `ValueError` before any write."""
    if type(value) is str and value.isascii():  # the common case, without a call
        return value
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not _utf8_clean(value):
        raise ValueError(f"{what} contains a lone surrogate, which cannot be stored as UTF-8 text")
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})  # exact types the C encoder judges


def _keys_plain(value: dict[Any, Any]) -> bool:
    """Whether every key in `value` (and in the dicts and lists in it) is a str and every
    container an exact dict, list or tuple: what the C encoder cannot judge itself (it writes an
    int key as a string). It refuses the rest: another type (`TypeError`), NaN (`ValueError`)."""
    for key in value:
        if type(key) is not str:
            return False
    return _values_plain(value.values())


def _values_plain(values: Iterable[Any]) -> bool:
    for item in values:
        kind = type(item)
        if kind is dict:
            if not _keys_plain(item):
                return False
        elif kind is list or kind is tuple:
            if not _values_plain(item):
                return False
        elif kind not in _SCALARS:
            return False
    return True


def encode_object(value: object, what: str) -> str:
    """`dumps(normalise_object(value, what))`, without the copy: the keys are checked here, the
    values by the encoder; anything either refuses takes the copy, which says what and where."""
    if type(value) is dict:
        try:
            if _keys_plain(value):
                return dumps(value)
        except (RecursionError, ValueError):
            pass  # circular, too deep, or NaN: `normalise_object` says so
    return dumps(normalise_object(value, what))


def pack(text: str) -> str | bytes:
    """A record's JSON as it is stored (see the module docstring)."""
    if len(text) * 4 < PACK_AT:  # at most four bytes a character: short whatever it holds
        return text
    raw = text.encode("utf-8")
    if len(raw) < PACK_AT:
        return text
    packed = zlib.compress(raw, 1)
    return packed if len(packed) * 5 <= len(raw) * 4 else text


def decode_object(text: str | bytes) -> dict[str, Any]:
    """The stored object back; a row that is not a JSON object was damaged outside this code."""
    if isinstance(text, bytes):
        try:
            text = zlib.decompress(text).decode("utf-8")
        except (zlib.error, UnicodeDecodeError) as exc:
            raise SchemaError(f"a stored record is not a packed JSON object: {exc}") from exc
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"a stored record is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SchemaError(f"a stored record is a JSON {type(value).__name__}, not an object")
    return value
