"""`yagent rules import`: Claude Code's `permissions` and Codex CLI's `prefix_rule` files mapped
onto yagent's rules, written into a yagent config file.

Sources (`sources`): Claude — a project's `.claude/settings.json` and `.claude/settings.local.json`
(scope project) or `~/.claude/settings.json` (scope user); Codex — `.codex/rules/*.rules` in the
project or `$CODEX_HOME/rules` (default `~/.codex/rules`); or one named file (`.json`: Claude,
`.rules`: Codex). The scope says both where rules are read and where they are written: the
project's `.yagent/config.toml` (whose loosening keys wait for `yagent trust`, as ever) or the
user's `config.toml`.

Mapping (`plan`), each source entry becoming one `Item` — imported, or not imported with why:
- `Bash(cmd:*)` / `Bash(cmd *)` → a `[[shell.rules]]` prefix rule; `Bash(cmd)` → the same prefix
  rule, said so (yagent's rules are token prefixes: longer commands match too); allow → allow,
  ask → prompt, deny → forbidden (never lifted by `-y`). Codex `prefix_rule` → the same rule
  (allow / prompt / forbidden), one per alternative of its pattern, its examples kept.
- `Read(path)` in deny → `[sandbox] deny_read` (`./x/**`, `~/x`, `//abs` → `/abs`, patterns:
  `tools.readpatterns`), which the file tools and the sandbox both honour.
- Not imported, with the reason: wildcards inside a command, `Bash`/`Bash(*)`, Read allow/ask,
  `Edit`/`Write` path rules, `WebFetch(domain:…)`, `mcp__…` names, other tools, Codex calls that
  are not `prefix_rule`, a rule the rules in force refuse (its example disagrees), and entries
  already in the destination file or among yagent's built-in rules.
Every candidate rule is checked against the built-in rules, the destination's rules and the ones
imported before it (`tools.shellrules.build_policy`), so what is written always loads.
`write` keeps the destination's other content and comments (tomlkit) and replaces the file
atomically. Refused (`RulesImportError`): an unreadable or malformed source (file and line), a
destination that is not valid TOML.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import tomlkit

from yagent.app import codexrules
from yagent.tools.atomicfile import atomic_write
from yagent.tools.shellrules import BUILTIN_RULES, ShellRulesError, build_policy

CLAUDE_VERDICTS = {"allow": "allow", "ask": "prompt", "deny": "forbidden"}
_ENTRY = re.compile(r"^([A-Za-z_][\w-]*)(?:\((.*)\))?$", re.DOTALL)
_WRITE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


class RulesImportError(Exception):
    """A source or destination that cannot be read; the message names the file."""


@dataclass(frozen=True, slots=True)
class Item:
    """One source entry: `target` is what it became ("" when not imported), `why` the reason it
    was not imported or a note on how it was."""

    source: str
    original: str
    target: str = ""
    why: str = ""

    @property
    def imported(self) -> bool:
        return bool(self.target)


@dataclass
class Plan:
    items: list[Item] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)
    deny_read: list[str] = field(default_factory=list)


def sources(
    kind: str, scope: str, workspace: Path, home: Path, env: Mapping[str, str]
) -> list[Path]:
    """The existing files `--from kind` reads in `scope` (kind: claude, codex or both)."""
    found: list[Path] = []
    if kind in ("claude", "both"):
        claude = workspace / ".claude" if scope == "project" else home / ".claude"
        names = (
            ("settings.json", "settings.local.json") if scope == "project" else ("settings.json",)
        )
        found += [claude / n for n in names]
    if kind in ("codex", "both"):
        codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
        folder = (workspace / ".codex" if scope == "project" else codex_home) / "rules"
        found += sorted(folder.glob("*.rules")) if folder.is_dir() else []
    return [p for p in found if p.is_file()]


def destination(scope: str, workspace: Path, yagent_home: Path) -> Path:
    return (
        workspace / ".yagent" / "config.toml" if scope == "project" else yagent_home / "config.toml"
    )


class _Planner:
    def __init__(self, existing: Mapping[str, Any]) -> None:
        self.plan = Plan()
        shell = existing.get("shell", {}) if isinstance(existing.get("shell"), dict) else {}
        self.current: list[dict[str, Any]] = list(shell.get("rules", []))
        self.builtin = bool(shell.get("builtin_rules", True))
        box = existing.get("sandbox", {}) if isinstance(existing.get("sandbox"), dict) else {}
        self.hidden: list[str] = list(box.get("deny_read", []))
        self.names = {str(r.get("name")) for r in self.current if isinstance(r, dict)}
        self.prefixes = {
            (_tokens(r.get("prefix")), str(r.get("verdict")))
            for r in self.current
            if isinstance(r, dict)
        }
        self.builtins = {
            (_tokens(r["prefix"]), str(r["verdict"]))
            for r in (BUILTIN_RULES if self.builtin else ())
        }

    def skip(self, source: str, original: str, why: str) -> None:
        self.plan.items.append(Item(source, original, why=why))

    def rule(self, source: str, original: str, entry: dict[str, Any], note: str = "") -> None:
        key = (_tokens(entry["prefix"]), entry["verdict"])
        if key in self.prefixes:
            self.skip(source, original, "already there (same prefix and verdict)")
            return
        if key in self.builtins:
            self.skip(source, original, "already one of yagent's built-in rules")
            return
        entry["name"] = self._name(entry["name"])
        try:
            build_policy([*self.current, *self.plan.rules, entry], builtin=self.builtin)
        except ShellRulesError as exc:
            self.skip(source, original, f"the rules in force refuse it: {exc}")
            return
        self.plan.rules.append(entry)
        self.prefixes.add(key)
        target = f"[[shell.rules]] {entry['verdict']} {shlex.join(key[0])}"
        self.plan.items.append(Item(source, original, target, note))

    def deny_read(self, source: str, original: str, path: str) -> None:
        if path in self.hidden or path in self.plan.deny_read:
            self.skip(source, original, "already there ([sandbox] deny_read)")
            return
        self.plan.deny_read.append(path)
        self.plan.items.append(Item(source, original, f"[sandbox] deny_read {path!r}"))

    def _name(self, wanted: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", wanted.lower()).strip("-")[:60] or "imported"
        name, n = base, 2
        while name in self.names:
            name, n = f"{base}-{n}", n + 1
        self.names.add(name)
        return name


def _tokens(prefix: object) -> tuple[str, ...]:
    if isinstance(prefix, str):
        try:
            return tuple(shlex.split(prefix))
        except ValueError:
            return (prefix,)
    if isinstance(prefix, list | tuple):
        return tuple(str(p) for p in prefix)
    return ()


def plan(paths: Sequence[Path], existing: Mapping[str, Any]) -> Plan:
    """What importing `paths` into a config holding `existing` does (module contract)."""
    planner = _Planner(existing)
    for path in paths:
        if path.suffix == ".rules":
            _codex(planner, path)
        else:
            _claude(planner, path)
    return planner.plan


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesImportError(f"{path}: cannot read: {exc}") from None


def _claude(planner: _Planner, path: Path) -> None:
    source = str(path)
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise RulesImportError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    permissions = data.get("permissions", {}) if isinstance(data, dict) else None
    if not isinstance(permissions, dict):
        raise RulesImportError(f"{path}: `permissions` must be an object")
    for key, value in permissions.items():
        if key not in CLAUDE_VERDICTS:
            planner.skip(source, f"permissions.{key}", "no counterpart in yagent's rules")
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RulesImportError(f"{path}: permissions.{key} must be a list of strings")
        for entry in value:
            _claude_entry(planner, source, key, entry.strip())


def _claude_entry(planner: _Planner, source: str, key: str, entry: str) -> None:
    found = _ENTRY.match(entry)
    if found is None:
        planner.skip(source, entry, "not a Claude permission rule (Tool or Tool(specifier))")
        return
    tool, spec = found.group(1), found.group(2)
    if tool == "Bash":
        _claude_bash(planner, source, key, entry, (spec or "").strip())
    elif tool == "Read" and spec and key == "deny":
        _claude_read(planner, source, entry, spec.strip())
    elif tool == "Read":
        why = (
            "yagent's file tools read the workspace without asking; re-opening a hidden path is "
            "[sandbox] allow_read, written by hand"
            if key == "allow"
            else "yagent has no ask-before-read rules (a deny hides the path)"
        )
        planner.skip(source, entry, why)
    elif tool in _WRITE_TOOLS:
        planner.skip(
            source,
            entry,
            "yagent has no per-path write rules: writes outside the workspace and to .git or "
            ".yagent always ask; a Read(...) deny hides a path from reading",
        )
    elif tool == "WebFetch":
        planner.skip(
            source,
            entry,
            "yagent has no per-host web_fetch rules: public hosts are fetched, local services "
            "open with [network] allow_local",
        )
    elif tool.startswith("mcp__"):
        planner.skip(
            source, entry, "yagent has no standing MCP tool rules: each call is judged and asked"
        )
    else:
        planner.skip(source, entry, f"yagent has no rules for Claude's {tool} tool")


def _claude_bash(planner: _Planner, source: str, key: str, entry: str, spec: str) -> None:
    verdict = CLAUDE_VERDICTS[key]
    if spec in ("", "*", ":*"):
        why = {
            "allow": "yagent has no allow-every-command rule; -y approves the questions of a run",
            "prompt": "already yagent's default: a command no rule names is asked",
            "forbidden": "yagent cannot deny every command while allow rules stand; [shell] "
            'default = "forbidden" with builtin_rules = false comes closest',
        }[verdict]
        planner.skip(source, entry, why)
        return
    note = ""
    if spec.endswith((":*", " *")):
        prefix = spec[:-2].strip()
    else:
        prefix = spec
        note = "as a prefix rule: the same command with more arguments matches too"
    if "*" in prefix or not prefix:
        planner.skip(source, entry, "a wildcard inside a command: yagent's rules are word prefixes")
        return
    rule = {
        "name": f"claude-{key}-{prefix}",
        "prefix": prefix,
        "verdict": verdict,
        "match": [prefix],
        "justification": f"imported from {source}: {entry}",
    }
    planner.rule(source, entry, rule, note)


def _claude_read(planner: _Planner, source: str, entry: str, spec: str) -> None:
    if spec.startswith("//"):
        path = spec[1:]
    elif spec.startswith("/"):
        planner.skip(
            source, entry, "a path relative to the settings file: write it as ./path or //abs"
        )
        return
    else:
        path = spec
    if path.startswith("./"):
        path = path[2:] or "."
    planner.deny_read(source, entry, path)


def _codex(planner: _Planner, path: Path) -> None:
    source = str(path)
    try:
        calls = codexrules.parse(_read(path), source)
    except codexrules.CodexRulesError as exc:
        raise RulesImportError(str(exc)) from None
    for found in calls:
        if isinstance(found, codexrules.Foreign):
            planner.skip(source, f"line {found.line}: {found.name}(...)", "not a prefix_rule")
            continue
        _codex_rule(planner, source, path.stem, found)


def _codex_rule(planner: _Planner, source: str, stem: str, rule: codexrules.CodexRule) -> None:
    expansions = [tuple(words) for words in product(*rule.pattern)]
    examples: dict[tuple[str, ...], list[str]] = {e: [] for e in expansions}
    for example in rule.match:
        words = _tokens(example)
        fits = [e for e in expansions if words[: len(e)] == e]
        if not fits:
            original = f"line {rule.line}: prefix_rule({' '.join(rule.pattern[0])} …)"
            planner.skip(source, original, f"its example {example!r} matches no alternative")
            return
        examples[max(fits, key=len)].append(example)
    for words in expansions:
        original = f"line {rule.line}: prefix_rule({shlex.join(words)}, {rule.decision})"
        entry = {
            "name": f"codex-{stem}-{' '.join(words)}",
            "prefix": list(words),
            "verdict": rule.decision,
            "match": examples[words] or [shlex.join(words)],
            "not_match": list(rule.not_match),
            "justification": rule.justification or f"imported from {source}",
        }
        planner.rule(source, original, entry)


def load_destination(path: Path) -> tuple[tomlkit.TOMLDocument, dict[str, Any]]:
    """The destination's document (empty when it does not exist) and its plain data."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesImportError(f"{path}: cannot read: {exc}") from None
    try:
        return tomlkit.parse(text), tomllib.loads(text)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise RulesImportError(f"{path}: not valid TOML: {exc}") from None


def write(path: Path, document: tomlkit.TOMLDocument, result: Plan) -> None:
    """Add `result` to `document` and replace `path` with it atomically (module contract)."""
    if result.rules:
        shell = document.setdefault("shell", tomlkit.table())
        rules = shell.get("rules")
        if rules is None:
            rules = tomlkit.aot()
            shell["rules"] = rules
        for entry in result.rules:
            rules.append(tomlkit.item(entry))
    if result.deny_read:
        box = document.setdefault("sandbox", tomlkit.table())
        hidden = box.get("deny_read")
        if hidden is None:
            box["deny_read"] = list(result.deny_read)
        else:
            hidden.extend(result.deny_read)
    text = tomlkit.dumps(document)
    tomllib.loads(text)  # what is written always reads back
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
