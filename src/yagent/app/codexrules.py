"""Codex CLI's command rules (`~/.codex/rules/*.rules`, a project's `.codex/rules/*.rules`), read
without running them.

Codex writes these files in a Starlark dialect; yagent reads only what `prefix_rule` says:
`prefix_rule(pattern=[...], decision="allow"|"prompt"|"forbidden", justification="...",
match=[...], not_match=[...])`, where a pattern item is a word or a list of alternative words and
an example is a command line or a list of words.

Contract:
- The text is parsed with Python's `ast` (Starlark's expression syntax is a subset) and never
  evaluated: each top-level statement must be a call, its arguments literals (`ast.literal_eval`
  on each one). Comments, blank lines and trailing commas are fine.
- `parse(text, source)` returns the `prefix_rule` calls as `CodexRule`s and every other top-level
  call as a `Foreign` (name and line), for the importer to list as not imported.
- Refused with a `CodexRulesError` naming `source:line`: text that does not parse, a statement
  that is not a call, a positional or non-literal argument, an unknown keyword, a missing or
  empty `pattern`, a pattern item that is not a word or a non-empty list of words, a `decision`
  outside allow / prompt / forbidden, examples that are not strings or lists of strings.
Leaves to the caller (`app.rulesimport`): mapping the rules onto yagent's.
"""

from __future__ import annotations

import ast
import shlex
from dataclasses import dataclass
from typing import Any

DECISIONS = ("allow", "prompt", "forbidden")
_KEYS = frozenset({"pattern", "decision", "justification", "match", "not_match"})


class CodexRulesError(ValueError):
    """A rules file yagent cannot read; the message starts with `source:line`."""


@dataclass(frozen=True, slots=True)
class CodexRule:
    """One `prefix_rule`: each pattern item as its alternatives; examples as command lines."""

    line: int
    pattern: tuple[tuple[str, ...], ...]
    decision: str
    justification: str = ""
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Foreign:
    """A top-level call that is not a `prefix_rule`."""

    line: int
    name: str


def parse(text: str, source: str) -> list[CodexRule | Foreign]:
    """The calls of one rules file (module contract)."""
    try:
        tree = ast.parse(text, filename=source, mode="exec")
    except SyntaxError as exc:
        raise CodexRulesError(f"{source}:{exc.lineno or 0}: not a rules file: {exc.msg}") from None
    found: list[CodexRule | Foreign] = []
    for statement in tree.body:
        where = f"{source}:{statement.lineno}"
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            raise CodexRulesError(f"{where}: expected a call such as prefix_rule(...)")
        node = statement.value
        name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        if name != "prefix_rule":
            found.append(Foreign(statement.lineno, name))
            continue
        found.append(_rule(node, where, statement.lineno))
    return found


def _rule(node: ast.Call, where: str, line: int) -> CodexRule:
    if node.args:
        raise CodexRulesError(f"{where}: prefix_rule takes keyword arguments only")
    values: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None or keyword.arg not in _KEYS:
            known = ", ".join(sorted(_KEYS))
            raise CodexRulesError(f"{where}: unknown argument {keyword.arg!r} (known: {known})")
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise CodexRulesError(f"{where}: {keyword.arg} must be a literal") from None
    decision = values.get("decision", "allow")
    if decision not in DECISIONS:
        raise CodexRulesError(f"{where}: decision {decision!r} is not one of {list(DECISIONS)}")
    justification = values.get("justification", "")
    if not isinstance(justification, str):
        raise CodexRulesError(f"{where}: justification must be a string")
    return CodexRule(
        line,
        _pattern(values.get("pattern"), where),
        decision,
        justification,
        _examples(values.get("match", []), "match", where),
        _examples(values.get("not_match", []), "not_match", where),
    )


def _words(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(w, str) and w for w in value)


def _pattern(value: object, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list | tuple) or not value:
        raise CodexRulesError(f"{where}: pattern must be a non-empty list")
    items: list[tuple[str, ...]] = []
    for item in value:
        if isinstance(item, str) and item:
            items.append((item,))
        elif _words(item) and item:
            items.append(tuple(item))
        else:
            raise CodexRulesError(
                f"{where}: pattern item {item!r} must be a word or a list of alternative words"
            )
    return tuple(items)


def _examples(value: object, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise CodexRulesError(f"{where}: {key} must be a list")
    out: list[str] = []
    for item in value:
        if isinstance(item, str):
            out.append(item)
        elif _words(item):
            out.append(shlex.join(item))
        else:
            raise CodexRulesError(f"{where}: {key} example {item!r} must be a string or words")
    return tuple(out)
