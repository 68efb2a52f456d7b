"""protocol.scan: finding JSON objects in model text, and telling repairable from structureless.

Guarantees:
- `fences(text)` yields the bodies of closed Markdown code fences, in order.
- `balanced(text)` yields the balanced `{...}` spans outside one another, in order; braces inside
  JSON strings (double quotes, with escapes) do not count. At most `MAX_STARTS` unbalanced
  openings are retried, so a pathological text costs a bounded number of linear scans.
- `structure_problem(candidate)` is the gate before repair: it names what makes a text
  structurally unrepairable — no `{`, or an object key that is not followed by a colon (`{"a"
  "b"}`, `{agent x}`): repairing those would invent structure the text never had. Missing values,
  commas, closing brackets, quotes styles and truncation are repairable and pass.
- `requote(candidate)` rewrites the single-quoted strings that walk finds as JSON double-quoted
  strings, closing a value where the gate does (its quote followed by `,`, `}`, `]` or the end):
  so `'isn't'` stays one string for the repair that follows instead of ending at the apostrophe.
  Inside, `\'` becomes `'` and `"` is escaped; other escapes are kept. Double-quoted strings,
  bare words and an unclosed string's missing end are left as written (repair's business).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_STARTS = 16

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+.-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_OUTSIDE = re.compile(r'[{}"]')
_INSIDE = re.compile(r'["\\]')


def fences(text: str) -> Iterator[str]:
    for match in _FENCE.finditer(text):
        yield match.group(1)


def _close(text: str, start: int) -> int | None:
    """Index just past the `}` matching the `{` at `start`, or None when it never closes."""
    depth, pos = 0, start
    while True:
        match = _OUTSIDE.search(text, pos)
        if match is None:
            return None
        char, pos = match.group(), match.end()
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return pos
        else:
            while True:  # skip the string
                inner = _INSIDE.search(text, pos)
                if inner is None:
                    return None
                pos = inner.end() + (1 if inner.group() == "\\" else 0)
                if inner.group() == '"':
                    break


def balanced(text: str) -> Iterator[str]:
    pos, retries = 0, 0
    while (start := text.find("{", pos)) != -1:
        end = _close(text, start)
        if end is None:
            retries += 1
            if retries > MAX_STARTS:
                return
            pos = start + 1
            continue
        yield text[start:end]
        pos = end


_QUOTES = "\"'"
_BARE_KEY_END = re.compile(r"[:,{}\[\]\"']|$")
_BARE_VALUE_END = re.compile(r"[,}\]\n]|$")
_VALUE_CLOSE = re.compile(r"\s*(?:[,}\]]|$)")


def _skip_string(text: str, pos: int, *, value: bool) -> int:
    """Index past the string starting at `pos` (the end of the text when it never closes).

    A key closes at its next unescaped quote. A value is read leniently, as repair will: a quote
    closes it only when a `,`, `}`, `]` or the end follows, so an apostrophe in `'it's'` or an
    unescaped quote inside a value does not end it early.
    """
    quote, pos = text[pos], pos + 1
    while pos < len(text):
        if text[pos] == "\\":
            pos += 2
        elif text[pos] == quote and (not value or _VALUE_CLOSE.match(text, pos + 1)):
            return pos + 1
        else:
            pos += 1
    return len(text)


class _Gate:
    """A tolerant walk of the object grammar that judges one thing: keys followed by colons."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[list[str]] = []  # per open container: [kind, what comes next]
        self.single: list[tuple[int, int]] = []  # single-quoted strings walked: (start, end)

    def string(self, pos: int, *, value: bool) -> int:
        end = _skip_string(self.text, pos, value=value)
        if self.text[pos] == "'":
            self.single.append((pos, end))
        return end

    def key(self, pos: int) -> int:
        if self.text[pos] in _QUOTES:
            return self.string(pos, value=False)
        match = _BARE_KEY_END.search(self.text, pos)
        assert match is not None  # `$` always matches
        return match.start()

    def value(self, pos: int) -> int:
        char = self.text[pos]
        if char in "{[":
            self.stack.append(["o", "key"] if char == "{" else ["a", "value"])
            return pos + 1
        if char in _QUOTES:
            return self.string(pos, value=True)
        match = _BARE_VALUE_END.search(self.text, pos + 1)
        assert match is not None
        return match.start()

    def step(self, pos: int) -> int | str:
        """The next position, or the reason the text is beyond repair."""
        char, top = self.text[pos], self.stack[-1]
        if top[1] == "colon":
            if char != ":":
                return f"a key without a colon at offset {pos}"
            top[1] = "value"
            return pos + 1
        if char in "}]":
            self.stack.pop()
            if self.stack:
                self.stack[-1][1] = "after"
            return pos + 1
        if char == ",":
            top[1] = "key" if top[0] == "o" else "value"
            return pos + 1
        if top[0] == "a" or top[1] == "value":
            top[1] = "after"
            return self.value(pos)
        if char in "{[:":  # a key is due (right after a value too: a missing comma is repairable)
            return f"an object member without a key at offset {pos}"
        top[1] = "colon"
        return self.key(pos)

    def run(self) -> str | None:
        pos = self.text.find("{")
        if pos == -1:
            return "no JSON object structure"
        self.stack.append(["o", "key"])
        pos += 1
        while self.stack and pos < len(self.text):
            if self.text[pos].isspace():
                pos += 1
                continue
            outcome = self.step(pos)
            if isinstance(outcome, str):
                return outcome
            pos = outcome
        return None


def structure_problem(candidate: str) -> str | None:
    """Why `candidate` is structurally beyond repair, or None when repair may try it."""
    return _Gate(candidate).run()


def _json_string(body: str) -> str:
    """The inside of a single-quoted string as the inside of a JSON double-quoted one."""
    out: list[str] = []
    pos = 0
    while pos < len(body):
        char = body[pos]
        if char == "\\" and pos + 1 < len(body):
            pair = body[pos : pos + 2]
            out.append("'" if pair == "\\'" else pair)
            pos += 2
            continue
        out.append('\\"' if char == '"' else char)
        pos += 1
    return "".join(out)


def requote(candidate: str) -> str:
    """`candidate` with its single-quoted strings written as JSON strings (see the contract)."""
    if "'" not in candidate:
        return candidate
    gate = _Gate(candidate)
    gate.run()
    parts: list[str] = []
    last = 0
    for start, end in gate.single:
        body = candidate[start + 1 : end - 1]
        escaped = (len(body) - len(body.rstrip("\\"))) % 2 == 1
        closed = end - 1 > start and candidate[end - 1] == "'" and not escaped
        stop = end - 1 if closed else end
        parts.append(candidate[last:start])
        parts.append('"' + _json_string(candidate[start + 1 : stop]) + ('"' if closed else ""))
        last = end
    parts.append(candidate[last:])
    return "".join(parts)
