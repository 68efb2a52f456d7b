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
- The file every redirection names (`<`, `>`, `>>`, `&>`, `<>`, `>&file`…) is a target; one a
  write redirection writes is also `written`.
- Variable names assigned anywhere (prefix, standalone, `export`/`declare`/`local`, `for` loops)
  are reported so the caller can judge environment steering.
- Where tree-sitter-bash reads a line differently from bash, bash wins: words the grammar hangs on
  a redirection (`git >f push`) are the command's; a redirection on a pipeline or list belongs to
  its last command; an fd number after a line continuation is not an argument; backtick bodies are
  re-read after bash's un-escaping, and backticks the grammar left as text are found; an unquoted
  heredoc body with `$(` or a backtick is DYNAMIC by its text and re-read as the double-quoted
  string it is; a bare CR (bash keeps it in the word) is OPAQUE.
Refuses (raises an `UnjudgeableError`): text that is not UTF-8 encodable or holds NUL, an AST over
the node budget, a tree nested deeper than its depth limit, any ERROR or MISSING node
(`UnclosedQuoteError` when a quote is left open), and every misreading it can detect: lines the
grammar joined that bash keeps apart (a bare newline inside a command, a command continued past a
comment), a heredoc ended by a line that is not exactly its delimiter, a keyword taken for a
command name, words after a compound's redirection.
Leaves to the caller: what the commands mean (wrappers, rules) — this module only reads syntax.
tree-sitter and the bash grammar are imported with the first line parsed in a thread (`_parser`),
not with the kernel: lazy loading of a heavy dependency where it is used, not a hidden import loop.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from yagent.kernel.confine.cmdpolicy import nesting, words
from yagent.kernel.confine.cmdpolicy.errors import (
    ShellSyntaxError,
    TooLargeError,
    UnclosedQuoteError,
    UnjudgeableError,
)
from yagent.kernel.confine.cmdpolicy.model import Arg, Signal, SignalKind, Stdin

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_LOCAL = threading.local()

_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_DUP_OPS = frozenset({">&", "<&"})
_CLOSE_OPS = frozenset({">&-", "<&-"})
_SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_QUOTES = frozenset("\"'`")
# Text-bearing nodes where bash still performs backtick substitution.
_TEXTUAL = frozenset({"word", "string_content"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_PASS_THROUGH = frozenset({"pipeline", "list", "negated_command"})
_LITERAL = frozenset(
    {"raw_string", "string_content", "ansi_c_string", "heredoc_content", "comment"}
)
# Unquoted in command position these are syntax to bash; the grammar naming a command so misread.
_RESERVED = frozenset(
    [
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "case",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "until",
        "while",
    ]
)


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command: its words (possibly empty) and the stdin text the line gives it."""

    args: tuple[Arg, ...]
    stdin: Stdin


@dataclass(slots=True)
class Facts:
    invocations: list[Invocation] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)
    assigned: list[tuple[str, Arg]] = field(default_factory=list)  # (variable, value)
    scripts: list[str] = field(default_factory=list)  # inner code: backtick and heredoc bodies
    targets: list[Arg] = field(default_factory=list)  # files the line's redirections name
    written: list[Arg] = field(default_factory=list)  # those a write redirection writes
    nodes: int = 0


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        # tree-sitter and the bash grammar load with the first line parsed (module contract)
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        parser = Parser(Language(tree_sitter_bash.language()))
        _LOCAL.parser = parser
    return parser


def parse(text: str, node_budget: int, depth_limit: int) -> Facts:
    """The facts of `text`, or an `UnjudgeableError` when it cannot be read with certainty.
    A tree nested deeper than `depth_limit` is refused before it is walked (see `nesting`)."""
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
    nesting.check(root, depth_limit)
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
            if (node.is_missing and node.type in _QUOTES) or snippet.lstrip()[:1] in _QUOTES:
                return UnclosedQuoteError(f"unclosed quote {where}")
            what = f"missing {node.type!r}" if node.is_missing else "syntax error"
            return ShellSyntaxError(f"bash {what} {where}")
        stack.extend(reversed(node.children))
    return ShellSyntaxError("bash syntax error")  # pragma: no cover - has_error implies a node


class _Walker:
    __slots__ = ("_data", "_facts", "_holders", "_literal")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._facts = Facts()
        self._literal: list[tuple[int, int]] = []  # byte ranges where a CR is plain text
        self._holders: dict[int, list[Node]] = {}  # command id → statements redirecting it

    def text(self, node: Node) -> str:
        return self._data[node.start_byte : node.end_byte].decode("utf-8")

    def walk(self, root: Node) -> Facts:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "command_substitution" and self._data[node.start_byte] == ord("`"):
                # bash un-escapes \$, \` and \\ inside backticks before parsing: re-read it.
                self._backquoted(self.text(node))
                continue
            if kind in _TEXTUAL:
                self._backquoted(self.text(node))
            elif kind == "heredoc_body" and self._expands(node):
                self._expanding_body(self.text(node))
            if kind == "command":
                self._command(node)
            elif kind == "redirected_statement":
                self._attach(node)
            elif kind in ("command_substitution", "process_substitution"):
                self._signal(SignalKind.DYNAMIC, f"{kind.replace('_', ' ')} {self.text(node)}")
            elif kind == "file_redirect":
                self._redirect(node)
            elif kind == "variable_assignment":
                self._assigned(node.child_by_field_name("name"), node.child_by_field_name("value"))
            elif kind == "for_statement":
                self._assigned(node.child_by_field_name("variable"), None)
            elif kind == "heredoc_redirect":
                self._heredoc_end(node)
            if b"\r" in self._data:
                self._note_literal(node)
            stack.extend(reversed(node.children))
        self._bare_cr()
        return self._facts

    def _heredoc_end(self, node: Node) -> None:
        """bash ends a heredoc only at a line that is exactly its delimiter: did the grammar?"""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        if start is None or end is None:  # pragma: no cover - the grammar errors first
            return
        try:
            delimiter = shlex.split(self.text(start))
        except ValueError:  # pragma: no cover - an unbalanced quote is a grammar error first
            delimiter = []
        line_start = self._data.rfind(b"\n", 0, end.start_byte) + 1
        line_end = self._data.find(b"\n", end.end_byte)
        before = self._data[line_start : end.start_byte]
        after = self._data[end.end_byte : len(self._data) if line_end < 0 else line_end]
        strip_tabs = any(c.type == "<<-" for c in node.children)
        if (
            delimiter != [self.text(end)]
            or after
            or (before.strip(b"\t") if strip_tabs else before)
        ):
            raise ShellSyntaxError(
                f"heredoc end {self.text(end)!r} at byte {end.start_byte} is not its own line"
            )

    def _note_literal(self, node: Node) -> None:
        """Record where a CR is quoted text (inside a string: everything but its code parts)."""
        if node.type in _LITERAL:
            self._literal.append((node.start_byte, node.end_byte))
        elif node.type == "heredoc_redirect":
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            if body is None or not body.named_child_count:  # no code inside: all of it is text
                self._literal.append((self._data.find(b"\n", node.start_byte), node.end_byte))
        elif node.type == "string":
            at = node.start_byte
            for code in (c for c in node.named_children if c.type != "string_content"):
                self._literal.append((at, code.start_byte))
                at = code.end_byte
            self._literal.append((at, node.end_byte))

    def _bare_cr(self) -> None:
        """bash keeps a bare CR inside the neighbouring word; the grammar takes it for a blank."""
        at = self._data.find(b"\r")
        while at >= 0:
            if not any(start <= at < end for start, end in self._literal):
                detail = f"bare carriage return at byte {at}: bash keeps it in the word"
                self._signal(SignalKind.OPAQUE, detail)
                return
            at = self._data.find(b"\r", at + 1)

    def _backquoted(self, text: str) -> None:
        """Judge every backtick substitution in `text` (the grammar may have left it as text)."""
        for body in words.backtick_bodies(text):
            self._signal(SignalKind.DYNAMIC, f"command substitution `{body}`")
            self._facts.scripts.append(words.unescape_backtick(body))

    def _expanding_body(self, text: str) -> None:
        """An unquoted heredoc body is expanded like a double-quoted string: judge what it runs.

        The grammar's reading of such bodies is not reliable, so the text itself decides the
        DYNAMIC fact, and the body is re-read as the double-quoted string it is equivalent to.
        """
        if "$(" not in text and "`" not in text:
            return
        self._signal(SignalKind.DYNAMIC, f"heredoc body runs substitutions: {text}")
        self._facts.scripts.append(f'_="{words.as_double_quoted(text)}"')

    def _expands(self, body: Node) -> bool:
        start = body.prev_named_sibling
        while start is not None and start.type != "heredoc_start":
            start = start.prev_named_sibling
        return start is None or not any(ch in self.text(start) for ch in "\"'\\")

    def _signal(self, kind: SignalKind, detail: str) -> None:
        self._facts.signals.append(Signal(kind, _clip(detail)))

    def _assigned(self, name: Node | None, value: Node | None) -> None:
        if name is not None:
            arg = Arg.of("") if value is None else words.word_arg(self._data, value)
            self._facts.assigned.append((self.text(name), arg))

    def _command(self, node: Node) -> None:
        """One simple command, with the parts bash gives it (the grammar hangs some elsewhere)."""
        holders = self._holders.get(node.id, [])
        parts: list[Node] = []
        redirects: list[Node] = []
        comment = False
        for i, child in enumerate(node.children):
            part = node.field_name_for_child(i)
            if comment and child.is_named:
                # A comment runs to the end of its line in bash, and the newline ends the command.
                raise ShellSyntaxError("the grammar continued a command past a comment")
            comment = child.type == "comment"
            if part in ("name", "argument"):
                named = child.named_children
                parts.append(
                    named[0] if child.type == "command_name" and len(named) == 1 else child
                )
            elif child.type in _REDIRECTS:
                redirects.append(child)
        for holder in holders:
            redirects.extend(c for c in holder.children if c.type in _REDIRECTS)
        for redirect in redirects:
            parts.extend(self._trailing_words(redirect))
        parts.sort(key=lambda w: w.start_byte)
        args = self._args([w for w in parts if not self._fd_number(w)], redirects)
        scripts = [self._herestring(r) for r in redirects if r.type == "herestring_redirect"]
        scripts += [self._heredoc(r) for r in redirects if r.type == "heredoc_redirect"]
        self._facts.invocations.append(Invocation(args, Stdin(tuple(scripts))))

    def _args(self, parts: list[Node], redirects: list[Node]) -> tuple[Arg, ...]:
        heredocs = [span for r in redirects if (span := words.heredoc_span(r)) is not None]
        args: list[Arg] = []
        last_end = -1
        last_count = 0  # how many args the previous word gave (brace expansion gives several)
        for word in parts:
            given = words.word_args(self._data, word)
            if not args and given[0].source in _RESERVED:
                raise ShellSyntaxError(
                    f"the grammar took the keyword {given[0].source!r} for a command"
                )
            gap = words.cut(self._data, last_end, word.start_byte, heredocs) if args else b""
            if words.bare_newline(gap) or words.bare_newline(words.unquoted(self._data, word)):
                # bash ends a command at a bare newline; the grammar did not: it misread.
                raise ShellSyntaxError(
                    f"the grammar joined lines bash keeps apart near byte {word.start_byte}"
                )
            if args and (words.glued(gap) or word.start_byte == last_end):
                # `a\<newline>b` and `'-'\y` are one word to bash but two to the grammar.
                prev = args[-last_count:]
                del args[-last_count:]
                given = [Arg(None, prev[0].source + gap.decode("utf-8") + given[0].source)]
            args.extend(given)
            last_count = len(given)
            last_end = word.end_byte
        return tuple(args)

    def _trailing_words(self, redirect: Node) -> list[Node]:
        """Words the grammar hangs on a redirection that bash passes to the command."""
        if redirect.type == "herestring_redirect":
            return redirect.named_children[1:]
        field = "destination" if redirect.type == "file_redirect" else "argument"
        hung = redirect.children_by_field_name(field)
        return hung[1:] if field == "destination" else hung

    def _attach(self, statement: Node) -> None:
        """Give a statement's redirections to the command bash gives them to (the rightmost)."""
        redirects = [c for c in statement.children if c.type in _REDIRECTS]
        node = statement.child_by_field_name("body")
        while node is not None and node.type in _PASS_THROUGH:
            named = [c for c in node.named_children if c.type != "comment"]
            node = named[-1] if named else None
        if node is not None and node.type == "command":
            self._holders.setdefault(node.id, []).append(statement)
        elif any(self._trailing_words(r) for r in redirects):
            raise ShellSyntaxError("words after the redirection of a compound command")

    def _fd_number(self, word: Node) -> bool:
        text = self._data[word.start_byte : word.end_byte]
        return text.isdigit() and self._data[word.end_byte : word.end_byte + 1] in (b"<", b">")

    def _heredoc(self, node: Node) -> str | None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        text = "" if body is None else self.text(body)
        quoted = start is not None and any(ch in self.text(start) for ch in "\"'\\")
        if not quoted and any(ch in text for ch in "$`\\"):
            return None  # bash expands the body before the reader sees it
        return text

    def _herestring(self, node: Node) -> str | None:
        named = node.named_children  # later words are the command's (`_trailing_words`)
        return words.word_arg(self._data, named[0]).value if named else None

    def _redirect(self, node: Node) -> None:
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if op in _CLOSE_OPS:
            return
        target = words.word_arg(self._data, dest) if dest is not None else None
        if op in _DUP_OPS and (
            target is None or (dest is not None and dest.type == "number") or target.value == "-"
        ):
            return
        if target is not None:
            self._facts.targets.append(target)
        if op == "<":
            return
        if op in _WRITE_OPS and target is not None and target.value in _SAFE_SINKS:
            return
        self._facts.written.extend([] if target is None else [target])
        self._signal(SignalKind.WRITE, self.text(node))


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
