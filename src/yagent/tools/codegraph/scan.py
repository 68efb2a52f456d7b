"""codegraph.scan: one file's definitions of, and references to, one name.

Contract:
- Only nodes that spell the name are visited (a tree-sitter query with `#eq?`); for each, its
  ancestors say whether it is the name of a definition, what encloses it and which function it
  sits in. Strings and comments never match: they are not name nodes.
- A definition is a node listed in the language's table whose name child is the hit; its kind is
  refined where the table needs it (a Python `def` directly in a class is a method). Its
  `container` is the dotted chain of enclosing definitions (a Go method's receiver type), its
  `signature` the first line of the definition, clipped.
- A reference is any other hit except a keyword-argument name: `is_call` when it is the callee of
  a call (or the member called, `x.name()`, or a constructor in `new`), `caller` the dotted name
  of the innermost enclosing function or method (None at module level).
- Tree-sitter recovers from syntax errors; `FileScan.has_error` says when it had to, so the caller
  can flag that file's results as possibly partial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from yagent.tools.codegraph.languages import Lang, go_receiver
from yagent.tools.searchkit.results import clip

if TYPE_CHECKING:
    import tree_sitter as ts

SIGNATURE_CHARS = 300
_FUNCTION_KINDS = frozenset({"function", "method"})


@dataclass(frozen=True, slots=True)
class Definition:
    line: int
    column: int
    kind: str
    name: str
    container: str | None
    signature: str


@dataclass(frozen=True, slots=True)
class Reference:
    line: int
    column: int
    is_call: bool
    caller: str | None
    text: str


@dataclass(slots=True)
class FileScan:
    definitions: list[Definition] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    has_error: bool = False


@dataclass(frozen=True, slots=True)
class _Scope:
    kind: str
    name: str
    node: ts.Node


def _text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


class _Source:
    def __init__(self, data: bytes) -> None:
        self.lines = data.split(b"\n")

    def line(self, row: int) -> str:
        raw = self.lines[row] if row < len(self.lines) else b""
        return raw.decode("utf-8", errors="replace").removesuffix("\r")

    def column(self, point: ts.Point) -> int:
        raw = self.lines[point.row] if point.row < len(self.lines) else b""
        return len(raw[: point.column].decode("utf-8", errors="replace")) + 1


def _scopes(lang: Lang, node: ts.Node) -> list[_Scope]:
    """The definitions enclosing `node` (not `node` itself), outermost first."""
    out: list[_Scope] = []
    current = node.parent
    while current is not None:
        kind = lang.kind_of(current)
        if kind is not None:
            name = _text(lang.name_node(current))
            if name:
                out.append(_Scope(kind, name, current))
        current = current.parent
    out.reverse()
    return out


def _qualified(scopes: list[_Scope]) -> str:
    last = scopes[-1]
    if last.node.type == "method_declaration":
        receiver = go_receiver(last.node)
        return f"{receiver}.{last.name}" if receiver else last.name
    return ".".join(s.name for s in scopes)


def _caller(scopes: list[_Scope]) -> str | None:
    for index in range(len(scopes) - 1, -1, -1):
        if scopes[index].kind in _FUNCTION_KINDS:
            return _qualified(scopes[: index + 1])
    return None


def _child_is(parent: ts.Node | None, fname: str | None, node: ts.Node) -> bool:
    if parent is None or fname is None:
        return False
    return parent.child_by_field_name(fname) == node


def _declares_other(lang: Lang, parent: ts.Node, node: ts.Node) -> bool:
    """True when `node` names a parameter or keyword argument: a different thing, same name."""
    if parent.type not in lang.not_references:
        return False
    fname = lang.not_references[parent.type]
    return fname is None or node in parent.children_by_field_name(fname)


def _is_call(lang: Lang, node: ts.Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if _child_is(parent, lang.calls.get(parent.type), node):
        return True
    if _child_is(parent, lang.members.get(parent.type), node):
        outer = parent.parent
        return outer is not None and _child_is(outer, lang.calls.get(outer.type), parent)
    return False


def _definition(lang: Lang, node: ts.Node, src: _Source) -> Definition:
    kind = lang.kind_of(node) or "definition"
    scopes = _scopes(lang, node)
    if kind == "function" and node.type == "function_definition" and scopes:
        kind = "method" if scopes[-1].kind == "class" else kind
    if node.type == "method_declaration":
        container = go_receiver(node)
    else:
        container = ".".join(s.name for s in scopes) or None
    start = node.start_point
    return Definition(
        start.row + 1,
        src.column(start),
        kind,
        _text(lang.name_node(node)),
        container,
        clip(src.line(start.row).strip(), 0, SIGNATURE_CHARS),
    )


def scan(lang: Lang, data: bytes, name: str) -> FileScan:
    parser = lang.parser()
    tree = parser.parse(data)
    result = FileScan(has_error=tree.root_node.has_error)
    hits = lang.cursor(name).captures(tree.root_node).get("name", [])
    src = _Source(data)
    for node in sorted(hits, key=lambda n: n.start_byte):
        parent = node.parent
        if parent is None:
            continue
        if lang.kind_of(parent) is not None and lang.name_node(parent) == node:
            result.definitions.append(_definition(lang, parent, src))
            continue
        if _declares_other(lang, parent, node):
            continue
        point = node.start_point
        column = src.column(point)
        result.references.append(
            Reference(
                point.row + 1,
                column,
                _is_call(lang, node),
                _caller(_scopes(lang, node)),
                clip(src.line(point.row), column - 1, SIGNATURE_CHARS),
            )
        )
    return result
