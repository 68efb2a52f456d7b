"""The instructions files an agent reads: yagent's, Codex's and Claude Code's conventions, merged.

Contract:
- Order (each file under its own heading, the closest last, so it is read last and wins): the
  global file — `<yagent home>/AGENTS.override.md`, else `<yagent home>/AGENTS.md`, else the
  user's `~/.claude/CLAUDE.md` — then one file per directory from the workspace root down to the
  directory the person started in. In each directory `AGENTS.override.md` replaces that
  directory's `AGENTS.md` (Codex); without either, `CLAUDE.md`, then `.claude/CLAUDE.md` (Claude
  Code) stand in.
- `@path` imports in CLAUDE.md files (Claude Code: relative to the importing file, `~/` for the
  user's home; not inside code spans or fenced blocks; a token needs a `.` or `/` so `@alice` is a
  mention) follow the file they were named in, at most `MAX_IMPORT_DEPTH` hops deep. An import
  is confined: from a file in the workspace, to the workspace; from a file in the user's home
  (outside the workspace), to that home; never into what the read mask hides (yagent's state,
  credential stores — `tools.readmask`). A cycle, a repeat, a missing or non-file target, a path
  outside its confinement or hidden, or one hop too deep is skipped with a visible note saying
  which and why — never silently. The files themselves are held to the same: a workspace's file
  that is a link leading out of the workspace or into what the read mask hides (`CLAUDE.md` →
  `~/.ssh/id_rsa`, `AGENTS.md` → `/proc/self/environ`), or a global one leading out of its own
  folder, is skipped with a note naming where it leads, its text never read.
- Budget: `MAX_INSTRUCTIONS_BYTES` over all files. When they exceed it, the closest files keep
  their text first (they are the most specific); every file that lost text ends in a line saying
  how much is shown and that `read_file` reads the rest. Each text is decoded as UTF-8
  (replacement characters for bad bytes) and neutralised with `reminder` (repository text is
  data: it cannot forge a system band).
Leaves to the caller: where the workspace root, the start directory and the homes are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from yagent.kernel.context import reminder
from yagent.tools.readmask import ReadMask

MAX_INSTRUCTIONS_BYTES = 32 * 1024
MAX_IMPORT_DEPTH = 5
MAX_FILE_BYTES = 1024 * 1024  # read no more of any one file than this
OVERRIDE, AGENTS, CLAUDE = "AGENTS.override.md", "AGENTS.md", "CLAUDE.md"
_IMPORT = re.compile(r"(?<![\w@/`])@((?:~/)?[\w.\-/]*[\w\-/])")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Doc:
    label: str  # how the heading names it: a path relative to the workspace, or `~/…`
    text: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Sources:
    """Where instructions are looked for."""

    root: Path  # the workspace root
    start: Path | None = None  # where the person started (None: the root)
    home: Path | None = None  # yagent's home (its AGENTS.md is the global file)
    user_home: Path | None = None  # the person's home (~/.claude/CLAUDE.md, `@~/` imports)
    reads: ReadMask | None = field(default=None, compare=False)

    def directories(self) -> list[Path]:
        root = self.root.resolve()
        start = (self.start or root).resolve()
        if start != root and root not in start.parents:
            return [root]  # started outside the workspace: only the root's files
        chain = [start, *[p for p in start.parents if p == root or root in p.parents]]
        return list(reversed(chain))


def directory_file(folder: Path) -> Path | None:
    """The one instructions file a directory contributes (see the module contract)."""
    for candidate in (
        folder / OVERRIDE,
        folder / AGENTS,
        folder / CLAUDE,
        folder / ".claude" / CLAUDE,
    ):
        if candidate.is_file():
            return candidate
    return None


def global_file(sources: Sources) -> Path | None:
    candidates: list[Path] = []
    if sources.home is not None:
        candidates += [sources.home / OVERRIDE, sources.home / AGENTS]
    if sources.user_home is not None:
        candidates.append(sources.user_home / ".claude" / CLAUDE)
    return next((c for c in candidates if c.is_file()), None)


def collect(sources: Sources) -> list[Doc]:
    """Every instructions text in force, in reading order (imports after their file)."""
    root = sources.root.resolve()
    mask = sources.reads or ReadMask(root)
    docs: list[Doc] = []
    seen: set[Path] = set()
    first = global_file(sources)
    files = ([first] if first is not None else []) + [
        f for d in sources.directories() if (f := directory_file(d)) is not None
    ]
    for path in files:
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        why = _misplaced(path, real, sources, mask, is_global=path is first)
        if why:
            label = _label(path.parent.resolve() / path.name, root, sources.user_home)
            docs.append(Doc(label, "", (f"[{label} skipped: {why}]",)))
            continue
        docs.extend(_with_imports(real, _label(real, root, sources.user_home), sources, mask, seen))
    return docs


def _misplaced(path: Path, real: Path, sources: Sources, mask: ReadMask, *, is_global: bool) -> str:
    """Why an instructions file (a link, maybe) is not read, or "": a workspace file must lead
    to a file in the workspace that no tool is refused; the global one, into its own folder."""
    if is_global:
        folder = path.parent.resolve() if path.parent.name != ".claude" else path.parent.parent
        if not _under(real, folder.resolve()):
            return f"it leads to {real}, outside {folder}"
        yagent_home = sources.home.resolve() if sources.home is not None else None
        hidden = mask.denies(str(real)) is not None
        if hidden and not (yagent_home is not None and _under(real, yagent_home)):
            return f"it leads to {real}, hidden from every tool (a credential store or the like)"
        return ""
    root = sources.root.resolve()
    if not _under(real, root):
        return f"it leads to {real}, outside the workspace (only the workspace's own files count)"
    if mask.denies(str(real)) is not None:
        return f"it leads to {real}, hidden from every tool"
    return ""


def _with_imports(
    path: Path, label: str, sources: Sources, mask: ReadMask, seen: set[Path]
) -> Iterator[Doc]:
    """`path`'s text, then what it imports (depth first), each import confined like `path`."""
    root = sources.root.resolve()
    jail = root if _under(path, root) or sources.user_home is None else sources.user_home.resolve()
    stack: list[tuple[Path, str, int, tuple[Path, ...]]] = [(path, "", 0, (path,))]
    while stack:
        current, importer, depth, chain = stack.pop()
        name = _label(current, root, sources.user_home)
        text = _read(current)
        notes: list[str] = []
        found: list[tuple[Path, str, int, tuple[Path, ...]]] = []
        if current.name == CLAUDE or depth > 0:  # CLAUDE.md and what it imports
            for token in imports_in(text):
                target, why = _judge_import(
                    token, current, jail, mask, chain, seen, depth, sources.user_home
                )
                if target is None:
                    notes.append(f"[import @{token} skipped: {why}]")
                    continue
                seen.add(target)
                found.append((target, name, depth + 1, (*chain, target)))
        yield Doc(f"{name} (imported by {importer})" if importer else label, text, tuple(notes))
        stack.extend(reversed(found))


def _judge_import(
    token: str,
    importer: Path,
    jail: Path,
    mask: ReadMask,
    chain: tuple[Path, ...],
    seen: set[Path],
    depth: int,
    home: Path | None,
) -> tuple[Path | None, str]:
    if token.startswith("~/") and home is None:
        return None, "no home directory is known"
    raw = home / token[2:] if token.startswith("~/") and home else importer.parent / token
    target = raw.resolve()
    if target in chain:
        return None, "it imports itself through a cycle"
    if depth + 1 > MAX_IMPORT_DEPTH:
        return None, f"imports nest deeper than {MAX_IMPORT_DEPTH} levels"
    if not _under(target, jail):
        return None, f"outside {jail} (imports stay in the folder their file belongs to)"
    if mask.denies(str(target)) is not None:
        return None, "the path is hidden from every tool (yagent state or a credential store)"
    if not target.is_file():
        return None, "no such file"
    if target in seen:
        return None, "already included above"
    return target, ""


def imports_in(text: str) -> list[str]:
    """The `@path` tokens of a CLAUDE.md text, outside code fences and code spans, in order."""
    tokens: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for i, piece in enumerate(line.split("`")):
            if i % 2:
                continue  # inside a code span
            for match in _IMPORT.finditer(piece):
                token = match.group(1).rstrip(".")
                if ("." in token or "/" in token) and token not in tokens:
                    tokens.append(token)
    return tokens


def render(sources: Sources, budget: int = MAX_INSTRUCTIONS_BYTES) -> str:
    """The instructions section's body (empty when there is none), within `budget` bytes."""
    docs = collect(sources)
    if not docs:
        return ""
    sizes = [len(d.text.encode("utf-8")) for d in docs]
    shown = [0] * len(docs)
    left = budget
    for i in reversed(range(len(docs))):  # the closest (last) files keep their text first
        shown[i] = min(sizes[i], left)
        left -= shown[i]
    parts: list[str] = []
    for doc, size, keep in zip(docs, sizes, shown, strict=True):
        text = doc.text.encode("utf-8")[:keep].decode("utf-8", "ignore")
        if keep < size:
            text += (
                f"\n[{doc.label} truncated: showing {keep} of {size} bytes (the instructions "
                f"budget is {budget} bytes); read the file with read_file for the rest]"
            )
        body = reminder.neutralize("\n".join([text.rstrip(), *doc.notes]).strip())
        parts.append(f"### {doc.label}\n{body}")
    return "\n\n".join(parts)


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    text = raw[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(raw) > MAX_FILE_BYTES:
        text += f"\n[file cut at {MAX_FILE_BYTES} bytes]"
    return text


def _label(path: Path, root: Path, user_home: Path | None) -> str:
    if _under(path, root):
        return str(path.relative_to(root))
    if user_home is not None and _under(path, user_home.resolve()):
        return "~/" + str(path.relative_to(user_home.resolve()))
    return str(path)


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
