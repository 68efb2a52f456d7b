"""A tool call named in one line on the terminal: its arguments read, its key argument picked.

Contract: `arguments(raw)` reads a call's arguments as the model sent them (JSON text or an
object) and never raises — text that is not an object comes back as `{"arguments": text}`; every
string in them is cleaned after decoding (`cli.safetext.visible`: a terminal control code the JSON
spelled as `\u001b` is shown written out, never obeyed);
`key_argument(args)` is the first non-empty string among `KEY_ARGS` (the argument that says
what the call acts on), else the first string argument, else "".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from yagent.cli.safetext import visible, visible_value

KEY_ARGS = ("command", "path", "url", "pattern", "query", "file_path", "name", "task")


def key_argument(args: Mapping[str, Any]) -> str:
    for key in KEY_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return next((v for v in args.values() if isinstance(v, str)), "")


def arguments(raw: object) -> dict[str, Any]:
    """A call's arguments as an object (the model sends them as JSON text), shown `visible`."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"arguments": visible(str(raw))}
    shown: dict[str, Any] = visible_value(
        dict(raw) if isinstance(raw, dict) else {"arguments": str(raw)}
    )
    return shown
