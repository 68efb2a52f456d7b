"""Text bound for the person's terminal, with its control codes made visible.

Contract: whatever text nobody in yagent wrote — the model's streamed replies, tool results, file
and directory names, command lines in an approval question, MCP servers' messages, a stored
session's content — passes `visible` (or `visible_event` for a whole event, `visible_value` for
what a renderer decodes itself) before the terminal renderer draws it. Guaranteed: the result
holds no C0 control character other than newline and tab (so no ESC, no bell, no carriage return
that would overwrite a line, no backspace), no DEL, no C1 control (U+0080–U+009F: the 8-bit CSI
and OSC), no bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069) that would
reorder what the person reads, and no character drawn as nothing that can hide or disguise text:
the bidirectional marks (U+200E, U+200F, U+061C), the zero-width space, word joiner and
invisible operators (U+200B, U+2060–U+2064), the byte order mark (U+FEFF), the line and
paragraph separators (U+2028, U+2029) and the Unicode tag characters (U+E0000–U+E007F, which
models read as ASCII). Each one removed is replaced by its escape written out (`\\x1b`,
`\\u202e`, `\\U000e0069`), so it is visible, never silently dropped. `visible` is idempotent.
Left alone: every other character — the zero-width joiner and non-joiner and the variation
selectors included, which emoji and several scripts need —, so text in any script is shown as
written. JSON text inside a payload keeps its escapes (`\\u001b`) until decoded: whoever decodes
it for display passes the result through `visible_value`. `--json` lines are written by
`json_line`: lossless, every control, override and invisible character above escaped in the
JSON text itself. Not here: the terminal styles yagent itself adds (rich markup applied after
this).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from yagent.messaging import Event

_INVISIBLE = "\u061c\u200b\u200e\u200f\u2028\u2029\u2060-\u2064\ufeff\U000e0000-\U000e007f"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{_INVISIBLE}]")


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every control code that could steer a terminal written out as its escape."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_written_out, text.replace("\r\n", "\n"))


def visible_value(value: Any) -> Any:
    """`value` with every string in it (at any depth: mappings, lists, tuples) made `visible`;
    for what a renderer decodes itself (a call's JSON arguments, a JSON receipt)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {
            visible(str(k)) if isinstance(k, str) else k: visible_value(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [visible_value(v) for v in value]
    return value


def visible_event(event: Event) -> Event:
    """The event with every string in its payload (at any depth) passed through `visible`."""
    return dataclasses.replace(event, payload=visible_value(event.payload))


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\u202a-\u202e\u2066-\u2069{_INVISIBLE}]")


def json_line(value: Any) -> str:
    """`value` as one JSON line (non-ASCII text kept as UTF-8), with DEL, C1 controls,
    bidirectional overrides and the invisible characters `visible` writes out escaped as
    `\\uXXXX` too (a surrogate pair above U+FFFF; JSON escapes C0 controls itself): the same
    strings once decoded, never the raw characters on the output."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return _JSON_UNSAFE.sub(lambda m: json.dumps(m.group())[1:-1], text)
