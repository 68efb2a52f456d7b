"""Tokenising and splitting on POSIX `shlex` — the token-level view of a command line.

Guarantees:
- `tokenize` / `scan` use `shlex` in POSIX mode: quotes and whitespace never shift a token, CR is
  whitespace (a CRLF line's CR does not stick to its last token), a backslash inside double quotes
  is kept except before `"` and `\\` (so `"a\\b"` is `a\\b`, as bash says), no comment stripping.
- Operators (`;`, `&&`, `||`, `|`, `&`, newline, redirections, parentheses) are tokens of their own
  and are merged only when their characters touch (`a & & b` is two `&`, never `&&`). A quoted or
  escaped operator (`'&&'`, `\\;`) is a word, not an operator.
- `split_commands` cuts on `;`, `&&`, `||`, `|`, `|&`, `&`, newlines and case ends (`;;`); each
  segment's text is rebuilt with `shlex.quote`, so re-tokenising it gives back exactly its tokens.
Refuses: an unclosed quote or a trailing escape (`UnclosedQuoteError`).
Leaves to `decide_command`: the meaning of the line — this view knows no substitutions, heredocs
or compound statements, so the judgement is made on the bash AST, not here.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy.errors import UnclosedQuoteError

OPERATOR_CHARS = "();<>|&\n"
_BLANKS = " \t\r"
# Longest first: a run of touching operator characters is cut greedily into these.
_OPERATORS = (
    "&>>", "<<<", "<<-", ";;&",
    "&&", "||", ";;", ";&", "|&", ">>", "&>", ">&", "<&", ">|", "<>", "<<",
    ";", "&", "|", "<", ">", "(", ")", "\n",
)  # fmt: skip
SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "\n", ";;", ";&", ";;&"})


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text, whether it is an unquoted operator, and its span in the line."""

    text: str
    operator: bool
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Segment:
    """One command of a line: its replayable text, its tokens, and the separator that ended it."""

    text: str
    tokens: tuple[str, ...]
    separator: str


class _Reader:
    """A character source that remembers how far `shlex` has read."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self, n: int = 1) -> str:
        chunk = self.text[self.pos : self.pos + n]
        self.pos += len(chunk)
        return chunk


def scan(line: str) -> tuple[Token, ...]:
    """Every token of `line` with its operator flag and span."""
    reader = _Reader(line)
    lex = shlex.shlex(reader, posix=True, punctuation_chars=OPERATOR_CHARS)  # type: ignore[arg-type]
    lex.whitespace = _BLANKS
    lex.whitespace_split = True
    lex.commenters = ""
    out: list[Token] = []
    prev_end = 0
    while True:
        try:
            text = lex.get_token()
        except ValueError as exc:
            raise UnclosedQuoteError(f"cannot tokenise: {exc}") from exc
        if text is None:  # POSIX shlex: None is the end; a quoted empty word is ""
            break
        start, end = _span(line, prev_end, _end_of(reader, lex))
        raw = line[start:end]
        if raw == text and all(ch in OPERATOR_CHARS for ch in text):
            out.extend(_cut_operators(text, start))
        else:
            out.append(Token(text, False, start, end))
        prev_end = end
    return tuple(out)


def _end_of(reader: _Reader, lex: shlex.shlex) -> int:
    pending = getattr(lex, "_pushback_chars", ())
    return reader.pos - len(pending)


def _span(line: str, prev_end: int, end: int) -> tuple[int, int]:
    raw = line[prev_end:end]
    start = prev_end + (len(raw) - len(raw.lstrip(_BLANKS)))
    stripped_end = start + len(line[start:end].rstrip(_BLANKS))
    return start, max(stripped_end, start)


def _cut_operators(run: str, start: int) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(run):
        op = next(o for o in _OPERATORS if run.startswith(o, i))
        out.append(Token(op, True, start + i, start + i + len(op)))
        i += len(op)
    return out


def tokenize(line: str) -> tuple[str, ...]:
    """The tokens of `line` as strings (operators included)."""
    return tuple(tok.text for tok in scan(line))


def join(tokens: tuple[Token, ...] | list[Token]) -> str:
    """Rebuild a line from tokens: words quoted, operators bare, touching tokens kept touching."""
    parts: list[str] = []
    prev_end: int | None = None
    for tok in tokens:
        if prev_end is not None and tok.start != prev_end:
            parts.append(" ")
        parts.append(tok.text if tok.operator else shlex.quote(tok.text))
        prev_end = tok.end
    return "".join(parts)


def split_commands(line: str) -> list[Segment]:
    """The commands of `line`, cut on the command separators; empty segments are dropped."""
    segments: list[Segment] = []
    current: list[Token] = []
    for tok in scan(line):
        if tok.operator and tok.text in SEPARATORS:
            if current:
                segments.append(_segment(current, tok.text))
            current = []
        else:
            current.append(tok)
    if current:
        segments.append(_segment(current, ""))
    return segments


def _segment(tokens: list[Token], separator: str) -> Segment:
    return Segment(join(tokens), tuple(t.text for t in tokens), separator)
