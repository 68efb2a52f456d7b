"""The bash AST facts of one script (tree-sitter-bash): every command, and what rules cannot see.

Guarantees:
- Every simple command anywhere in the tree is reported — in lists, pipelines, subshells, `{ }`
  groups, if/for/while/until/case bodies, function bodies, `$( )`, backticks, `<( )`, `>( )`,
  arithmetic, `[[ ]]`, assignment values and unquoted heredoc bodies — in source order.
- A word is static (`Arg.value` set) only when bash could not change it at run time: no expansion
  of any kind, no unquoted glob or brace pattern, no line continuation glued inside it. Anything
  else is `None`, which no rule token can equal.
- Write redirections (`>`, `>>`, `&>`, `&>>`, `>|`, `<>`, `>&file`) are WRITE signals unless they go
  to /dev/null, /dev/stdout or /dev/stderr; fd duplications (`2>&1`, `>&-`) are not writes. Command
  and process substitutions are DYNAMIC signals.
- Variable names assigned anywhere (prefix, standalone, `export`/`declare`/`local`, `for` loops)
  are reported so the caller can judge environment steering.
Refuses (raises an `UnjudgeableError`): text that is not UTF-8 encodable or holds NUL, an AST over
the node budget, and any ERROR or MISSING node (`UnclosedQuoteError` when a quote is left open).
Leaves to the caller: what the commands mean (wrappers, rules) — this module only reads syntax.
"""

from __future__ import annotations

import re
import shlex
import threading
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from yagent.kernel.cmdpolicy.errors import (
    ShellSyntaxError,
    TooLargeError,
    UnclosedQuoteError,
    UnjudgeableError,
)
from yagent.kernel.cmdpolicy.model import Arg, Signal, SignalKind, Stdin

_LANGUAGE = Language(tree_sitter_bash.language())
_LOCAL = threading.local()

# Node types a static word may be made of; anything else (any expansion, $'…', $"…") is run time.
_STATIC_PARTS = frozenset({"word", "string", "raw_string", "concatenation", "number", '"'})
_STATIC_PARTS_ALL = _STATIC_PARTS | {"string_content"}
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_DUP_OPS = frozenset({">&", "<&"})
_CLOSE_OPS = frozenset({">&-", "<&-", "<"})
_SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_ESCAPED = re.compile(r"\\.", re.DOTALL)
_QUOTES = frozenset("\"'`")


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command: its words (possibly empty) and the stdin text the line gives it."""

    args: tuple[Arg, ...]
    stdin: Stdin


@dataclass(slots=True)
class Facts:
    invocations: list[Invocation] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)
    nodes: int = 0


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = Parser(_LANGUAGE)
        _LOCAL.parser = parser
    return parser


def parse(text: str, node_budget: int) -> Facts:
    """The facts of `text`, or an `UnjudgeableError` when it cannot be read with certainty."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnjudgeableError(f"not encodable as UTF-8: {exc.reason}") from exc
    if b"\x00" in data:
        raise UnjudgeableError("the line holds a NUL byte")
    root = _parser().parse(data).root_node
    nodes = root.descendant_count
    if nodes > node_budget:
        raise TooLargeError(f"the AST has more than {node_budget} nodes left in the budget")
    if root.has_error:
        raise _syntax_error(data, root)
    facts = _Walker(data).walk(root)
    facts.nodes = nodes
    return facts


def _syntax_error(data: bytes, root: Node) -> UnjudgeableError:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            snippet = data[node.start_byte : node.start_byte + 40].decode("utf-8", "replace")
            where = f"at byte {node.start_byte}: {snippet!r}"
            if (node.is_missing and node.type in _QUOTES) or snippet[:1] in _QUOTES:
                return UnclosedQuoteError(f"unclosed quote {where}")
            what = f"missing {node.type!r}" if node.is_missing else "syntax error"
            return ShellSyntaxError(f"bash {what} {where}")
        stack.extend(reversed(node.children))
    return ShellSyntaxError("bash syntax error")  # pragma: no cover - has_error implies a node


class _Walker:
    __slots__ = ("_data", "_facts")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._facts = Facts()

    def text(self, node: Node) -> str:
        return self._data[node.start_byte : node.end_byte].decode("utf-8")

    def walk(self, root: Node) -> Facts:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "command":
                self._command(node)
            elif kind in ("command_substitution", "process_substitution"):
                self._signal(SignalKind.DYNAMIC, f"{kind.replace('_', ' ')} {self.text(node)}")
            elif kind == "file_redirect":
                self._redirect(node)
            elif kind == "variable_assignment":
                self._assigned(node.child_by_field_name("name"))
            elif kind == "for_statement":
                self._assigned(node.child_by_field_name("variable"))
            stack.extend(reversed(node.children))
        return self._facts

    def _signal(self, kind: SignalKind, detail: str) -> None:
        self._facts.signals.append(Signal(kind, _clip(detail)))

    def _assigned(self, name: Node | None) -> None:
        if name is not None:
            self._facts.assigned.append(self.text(name))

    def _command(self, node: Node) -> None:
        args: list[Arg] = []
        scripts: list[str | None] = []
        last_end = -1
        for i, child in enumerate(node.children):
            part = node.field_name_for_child(i)
            if part in ("name", "argument"):
                word = child
                if child.type == "command_name" and child.named_child_count == 1:
                    word = child.named_children[0]
                arg = self.arg(word)
                if args and _glued(self._data[last_end : child.start_byte]):
                    # `a\<newline>b` is one word to bash but two to the grammar.
                    prev = args.pop()
                    arg = Arg(None, prev.source + "\\\n" + arg.source)
                args.append(arg)
                last_end = child.end_byte
            elif child.type == "herestring_redirect":
                scripts.append(self._herestring(child))
        holder = node.parent
        if holder is not None and holder.type == "redirected_statement":
            body = holder.child_by_field_name("body")
            if body is not None and body.id == node.id:
                scripts.extend(self._stdin_of(holder))
        self._facts.invocations.append(Invocation(tuple(args), Stdin(tuple(scripts))))

    def _stdin_of(self, holder: Node) -> list[str | None]:
        out: list[str | None] = []
        for child in holder.children:
            if child.type == "heredoc_redirect":
                out.append(self._heredoc(child))
            elif child.type == "herestring_redirect":
                out.append(self._herestring(child))
        return out

    def _heredoc(self, node: Node) -> str | None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        text = "" if body is None else self.text(body)
        quoted = start is not None and any(ch in self.text(start) for ch in "\"'\\")
        if not quoted and any(ch in text for ch in "$`\\"):
            return None  # bash expands the body before the reader sees it
        return text

    def _herestring(self, node: Node) -> str | None:
        words = node.named_children
        if len(words) != 1:
            return None
        return self.arg(words[0]).value

    def _redirect(self, node: Node) -> None:
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if op in _CLOSE_OPS:
            return
        target = self.arg(dest) if dest is not None else None
        if op in _DUP_OPS and (
            target is None or (dest is not None and dest.type == "number") or target.value == "-"
        ):
            return
        if op in _WRITE_OPS and target is not None and target.value in _SAFE_SINKS:
            return
        self._signal(SignalKind.WRITE, self.text(node))

    def arg(self, node: Node) -> Arg:
        """The word under `node`: its literal value, or None when only run time knows it."""
        source = self.text(node)
        stack = [node]
        words: list[str] = []
        while stack:
            part = stack.pop()
            if part.type not in _STATIC_PARTS_ALL:
                return Arg(None, source)
            if part.type == "word":
                words.append(self.text(part))
            elif part.type in _STATIC_PARTS:
                stack.extend(part.children)
        if "\\\n" in source or "\\$" in source or "\\`" in source:
            return Arg(None, source)
        if any(_is_pattern(w) for w in words) or _BRACE.search(_ESCAPED.sub("_", source)):
            return Arg(None, source)
        try:
            tokens = shlex.split(source)
        except ValueError:
            return Arg(None, source)
        if len(tokens) != 1:
            return Arg(None, source)
        return Arg(tokens[0], source)


def _is_pattern(word: str) -> bool:
    """An unescaped glob character in an unquoted word: bash may replace the word by file names."""
    bare = _ESCAPED.sub("_", word)
    return any(ch in bare for ch in "*?[")


def _glued(gap: bytes) -> bool:
    return bool(gap) and not gap.replace(b"\\\n", b"")


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
