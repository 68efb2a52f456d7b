"""codegraph.languages: the grammars (tree-sitter wheels from PyPI) and what their nodes mean.

Contract:
- One `Lang` per grammar: Python, JavaScript (also JSX), TypeScript, TSX, Go. A file's language
  comes from its extension (`language_for`); any other file is "another language" to the caller.
- Each `Lang` says, as data, which node types are definitions (and of what kind), which nodes
  name a symbol, which nodes are calls (and which field holds the callee), and which are member
  accesses (`x.name`). The few shapes that need a look at a child (a JS `const f = () => …`, a Go
  `type T struct`, a Go method's receiver) are the functions below, nowhere else.
- Grammars load lazily, once per process; the symbol query is compiled once per (grammar, name).
  tree-sitter and the grammar wheels themselves are imported then, not with the tools: this module
  is their one seam (lazy loading of a heavy dependency where it is used, not an import loop
  hidden in a function), and `scan` reaches tree-sitter only through `Lang`.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter as ts

_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)


@dataclass(frozen=True, slots=True, eq=False)  # identity hash: a Lang keys the query cache
class Lang:
    name: str
    load: tuple[str, str]  # (grammar wheel module, its function returning the language)
    definitions: Mapping[str, str]  # node type → kind
    names: tuple[str, ...]  # node types that spell a symbol
    calls: Mapping[str, str]  # call node type → the callee's field
    members: Mapping[str, str]  # member-access node type → the member's field
    name_fields: tuple[str, ...] = ("name",)
    # Names that declare something else (parameters, keyword-argument names): parent node type →
    # the field holding them, or None for any direct child.
    not_references: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def language(self) -> ts.Language:
        return _language(self.name, self.load)

    def query(self, symbol: str) -> ts.Query:
        return _query(self, symbol)

    def parser(self) -> ts.Parser:
        from tree_sitter import Parser

        return Parser(self.language)

    def cursor(self, symbol: str) -> ts.QueryCursor:
        from tree_sitter import QueryCursor

        return QueryCursor(self.query(symbol))

    def name_node(self, node: ts.Node) -> ts.Node | None:
        for fname in self.name_fields:
            child = node.child_by_field_name(fname)
            if child is not None:
                return child
        return None

    def kind_of(self, node: ts.Node) -> str | None:
        """The definition kind of `node`, or None when it defines nothing we track."""
        kind = self.definitions.get(node.type)
        if kind is None:
            return None
        refine = _REFINE.get(node.type)
        return refine(node, kind) if refine is not None else kind


@functools.cache
def _language(name: str, load: tuple[str, str]) -> ts.Language:
    from tree_sitter import Language

    module, function = load
    return Language(getattr(importlib.import_module(module), function)())


@functools.cache
def _query(lang: Lang, symbol: str) -> ts.Query:
    # `symbol` is validated as an identifier by the caller, so it is safe inside the quotes.
    alternatives = " ".join(f"({t})" for t in lang.names)
    from tree_sitter import Query

    return Query(lang.language, f'([{alternatives}] @name (#eq? @name "{symbol}"))')


def _function_valued(node: ts.Node, kind: str) -> str | None:
    value = node.child_by_field_name("value")
    return kind if value is not None and value.type in _FUNCTION_VALUES else None


def _go_type(node: ts.Node, kind: str) -> str:
    body = node.child_by_field_name("type")
    if body is not None and body.type == "struct_type":
        return "struct"
    if body is not None and body.type == "interface_type":
        return "interface"
    return kind


_REFINE: Mapping[str, Callable[[ts.Node, str], str | None]] = MappingProxyType(
    {
        "variable_declarator": _function_valued,
        "public_field_definition": _function_valued,
        "field_definition": _function_valued,
        "type_spec": _go_type,
    }
)


def go_receiver(node: ts.Node) -> str | None:
    """The type name of a Go method's receiver: `(s *Server)` → Server, `(l List[T])` → List."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = [receiver]
    while stack:
        current = stack.pop()
        if current.type == "type_identifier" and current.text is not None:
            return current.text.decode("utf-8", errors="replace")
        stack.extend(reversed(current.named_children))
    return None


PYTHON = Lang(
    "python",
    ("tree_sitter_python", "language"),
    definitions={"function_definition": "function", "class_definition": "class"},
    names=("identifier",),
    calls={"call": "function"},
    members={"attribute": "attribute"},
    not_references={
        "keyword_argument": "name",
        "default_parameter": "name",
        "typed_default_parameter": "name",
        "parameters": None,
        "typed_parameter": None,
        "lambda_parameters": None,
    },
)

_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "class": "class",
    "method_definition": "method",
    "variable_declarator": "function",
    "field_definition": "method",
}
_JS_NAMES = (
    "identifier",
    "property_identifier",
    "private_property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
)
_TS_DEFINITIONS = {
    **{k: v for k, v in _JS_DEFINITIONS.items() if k != "field_definition"},
    "abstract_class_declaration": "class",
    "public_field_definition": "method",
    "method_signature": "method",
    "abstract_method_signature": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_JS_PARAMETERS: Mapping[str, str | None] = {"formal_parameters": None}
_TS_PARAMETERS: Mapping[str, str | None] = {
    **_JS_PARAMETERS,
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
}
_JS_CALLS = {"call_expression": "function", "new_expression": "constructor"}
_JS_MEMBERS = {"member_expression": "property"}

JAVASCRIPT = Lang(
    "javascript",
    ("tree_sitter_javascript", "language"),
    definitions=_JS_DEFINITIONS,
    names=_JS_NAMES,
    calls=_JS_CALLS,
    members=_JS_MEMBERS,
    name_fields=("name", "property"),
    not_references=_JS_PARAMETERS,
)
TYPESCRIPT = Lang(
    "typescript",
    ("tree_sitter_typescript", "language_typescript"),
    definitions=_TS_DEFINITIONS,
    names=(*_JS_NAMES, "type_identifier"),
    calls=_JS_CALLS,
    members=_JS_MEMBERS,
    name_fields=("name", "property"),
    not_references=_TS_PARAMETERS,
)
TSX = Lang(
    "tsx",
    ("tree_sitter_typescript", "language_tsx"),
    definitions=_TS_DEFINITIONS,
    names=(*_JS_NAMES, "type_identifier"),
    calls=_JS_CALLS,
    members=_JS_MEMBERS,
    name_fields=("name", "property"),
    not_references=_TS_PARAMETERS,
)
GO = Lang(
    "go",
    ("tree_sitter_go", "language"),
    definitions={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_spec": "type",
        "type_alias": "type",
        "method_elem": "method",
    },
    names=("identifier", "field_identifier", "type_identifier"),
    calls={"call_expression": "function"},
    members={"selector_expression": "field"},
    not_references={"parameter_declaration": "name", "variadic_parameter_declaration": "name"},
)

EXTENSIONS: Mapping[str, Lang] = MappingProxyType(
    {
        ".py": PYTHON,
        ".pyi": PYTHON,
        ".js": JAVASCRIPT,
        ".mjs": JAVASCRIPT,
        ".cjs": JAVASCRIPT,
        ".jsx": JAVASCRIPT,
        ".ts": TYPESCRIPT,
        ".mts": TYPESCRIPT,
        ".cts": TYPESCRIPT,
        ".tsx": TSX,
        ".go": GO,
    }
)


def language_for(path: str) -> Lang | None:
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def extension_label(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    return ext or "(no extension)"
