"""The shell path check: which paths a command line names outside the workspace.

Contract (the workspace guard asks a person when this returns any reason):
- The line is read on its bash AST (`cmdpolicy`): every command it can run — in pipelines, lists,
  substitutions, inner `sh -c` scripts, heredocs fed to shells, what wrappers run — and every
  redirection's file. Each word is read after bash's static expansions: quote removal, `$'…'`,
  brace expansion (each field is a word), `~` and `~/…` (the home directory).
- A static word is a path, resolved against the command's working directory and `realpath`ed
  (symlinks followed, `..` collapsed): relative paths count (`../../x`). So do the `PATH` of
  `--opt=PATH` / `KEY=PATH` and of a glued short option (`-oPATH`). Outside the workspace it is a
  reason, unless under one of the safe system paths the guard passes — but not one that holds the
  workspace itself (a workspace under /tmp does not make its sibling directories safe); `/`
  itself always is.
- Working directory: the workspace, and every directory the line enters (`cd`, `pushd`, `-C DIR`,
  `--chdir`, `--directory`); a relative word is judged from each. Entering a directory outside the
  workspace is a reason even under a safe system path (`cd /proc/self` would make `root/…` read
  `/`), and so is a `cd`/`pushd`/`popd` whose target only run time knows (`cd`, `cd -`, `cd $X`).
- A glob stays in when its static directory is inside, none of its segments is `..` or could
  match `..` (a pattern segment starting with `.` or `[`), and none of the entries it can match —
  matched loosely: case-insensitively, dotfiles included — is a symbolic link leading outside
  (at most `MAX_GLOB_ENTRIES` entries are looked at; more is a reason).
- A word bash only knows at run time — `$VAR`, `${…}`, `$(…)`, `` `…` ``, `~user`, `~+`, a form
  the reader does not expand — is a reason (it may name any path), except in commands that only
  print their operands (`DATA_ONLY`: echo, printf…). Integer expansions (`$((…))`, `$?`) and
  process substitutions (`<(…)`, a `/dev/fd` path) are judged by what they become. Arguments
  `xargs` reads at run time are a reason.
- A line that cannot be read is a reason.
Leaves to the sandbox: what a program does with a directory it is given (`grep -R` following a
symbolic link, a tool reading its own configuration), paths a program builds itself, and paths
in files the line reads. These are the limits of reading a command line; docs/security.md.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from yagent.kernel.confine import cmdpolicy
from yagent.kernel.confine.cmdpolicy.decide import Words
from yagent.kernel.confine.cmdpolicy.expand import Dynamic, Field
from yagent.kernel.confine.cmdpolicy.model import Arg, basename

MAX_GLOB_ENTRIES = 5000
MAX_DIRECTORIES = 16
DATA_ONLY = frozenset({"echo", "printf", "true", "false", ":"})
"""Commands that open none of their operands: a run-time word there is data, not a path."""
_CHDIR = frozenset({"cd", "pushd", "popd"})
_DIR_OPTIONS = ("-C", "--chdir", "--directory")
_GLUED = re.compile(r"-[A-Za-z](.+)\Z")
_POSIX_CLASS = re.compile(r"\[:[a-z]+:\]")
# An empty rule set: the AST walk (every command, wrapper and inner script) without judgement.
_READER = cmdpolicy.Policy([])

Test = Callable[[str], bool]


def outside_reasons(line: str, workspace: Path, safe: Sequence[str]) -> list[str]:
    """Why `line` reaches outside `workspace` (empty: it names nothing outside); `safe` are the
    system paths a command may name without asking."""
    try:
        verdict = cmdpolicy.decide_command(_READER, line)
    except cmdpolicy.UnjudgeableError as exc:
        return [f"the command line cannot be read ({exc.reason})"]
    check = _Check(workspace, safe)
    for words in verdict.words:
        check.directories(words.args)
    for words in verdict.words:
        check.command(words)
    for target in verdict.targets:
        check.word(target, data_only=False)
    return list(dict.fromkeys(check.reasons))


class _Check:
    __slots__ = ("cwds", "reasons", "safe", "workspace")

    def __init__(self, workspace: Path, safe: Sequence[str]) -> None:
        self.workspace = os.path.realpath(workspace)
        self.safe = tuple(root for root in safe if not _under(self.workspace, root))
        self.cwds = [self.workspace]
        self.reasons: list[str] = []

    # -- where the line runs ------------------------------------------------------------------
    def directories(self, args: tuple[Arg, ...]) -> None:
        head = args[0].value
        name = None if head is None else basename(head)
        if name in _CHDIR:
            operands = [a for a in args[1:] if not (a.value or "").startswith("-")]
            if name == "popd" or not operands or any(a.value == "-" for a in args[1:]):
                self.reasons.append(f"{name} changes to a directory known only at run time")
            for arg in operands[:1]:
                self._enter(arg)
            return
        for i, arg in enumerate(args[1:], start=1):
            value = arg.value or ""
            if value in _DIR_OPTIONS and i + 1 < len(args):
                self._enter(args[i + 1])
            elif value.startswith(tuple(f"{o}=" for o in _DIR_OPTIONS[1:])):
                self._enter(Arg.of(value.partition("=")[2]))
            elif value.startswith("-C") and len(value) > 2:
                self._enter(Arg.of(value[2:]))

    def _enter(self, arg: Arg) -> None:
        for field in arg.expanded:
            text = field.static
            if text is None or field.tilde:
                self.reasons.append(f"the command enters {arg.source}, known only at run time")
                continue
            for cwd in list(self.cwds):
                resolved = os.path.realpath(os.path.join(cwd, text))
                if not self._inside(resolved):
                    self.reasons.append(
                        f"the command enters {text} → {resolved}, outside the workspace"
                    )
                elif resolved not in self.cwds:
                    if len(self.cwds) >= MAX_DIRECTORIES:
                        self.reasons.append("the command enters too many directories to follow")
                        return
                    self.cwds.append(resolved)

    # -- the words ------------------------------------------------------------------------------
    def command(self, words: Words) -> None:
        head = words.args[0].value
        data_only = head is not None and basename(head) in DATA_ONLY
        if words.open_tail and not data_only:
            self.reasons.append(
                f"{head or 'the command'} gets arguments read at run time "
                "(they may name paths outside the workspace)"
            )
        if head is not None and basename(head) in _CHDIR:
            return  # judged as directories
        for arg in words.args:
            self.word(arg, data_only=data_only)

    def word(self, arg: Arg, *, data_only: bool) -> None:
        for field in arg.expanded:
            probe = field.static if field.static is not None else field.probe
            if field.dynamic == {Dynamic.PROCESS}:
                continue  # `<(…)` is a /dev/fd path of bash's own making
            if probe is None:
                if not data_only:
                    self.reasons.append(
                        f"{arg.source} is known only at run time and may name a path outside "
                        "the workspace"
                    )
            elif field.glob is not None:
                self._glob(field.glob, tilde=field.tilde)
            else:
                self._static(probe, field)

    def _static(self, text: str, field: Field) -> None:
        self._path(text, tilde=field.tilde, whole=True)
        if "=" in text:
            self._path(text.partition("=")[2], tilde=True, whole=False)
        glued = _GLUED.match(text)
        if glued and not text.startswith("--"):
            self._path(glued.group(1), tilde=False, whole=False)

    def _path(self, text: str, *, tilde: bool, whole: bool) -> None:
        if not text or (not whole and text == "/"):
            return  # `cut -d/`: a separator, not the root
        if tilde and text.startswith("~"):
            home = _home(text)
            if home is None:
                self.reasons.append(f"{text} names a home directory known only at run time")
                return
            text = home
        for cwd in self.cwds if not os.path.isabs(text) else self.cwds[:1]:
            resolved = os.path.realpath(os.path.join(cwd, text))
            if resolved == "/":
                self.reasons.append("the command names the filesystem root /")
            elif not self._inside(resolved) and not self._excused(resolved):
                self.reasons.append(f"the command names {text} outside the workspace")

    def _inside(self, resolved: str) -> bool:
        return _under(resolved, self.workspace)

    def _excused(self, resolved: str) -> bool:
        return resolved != "/" and any(_under(resolved, root) for root in self.safe)

    # -- globs ----------------------------------------------------------------------------------
    def _glob(self, pattern: str, *, tilde: bool) -> None:
        segments = pattern.split("/")
        first = next(i for i, s in enumerate(segments) if _loose(s) is not None)
        rest = segments[first:]
        if any(s == ".." or (_loose(s) is not None and s.startswith((".", "["))) for s in rest):
            self.reasons.append(f"the glob {pattern} can reach a parent directory")
            return
        prefix = "/".join(segments[:first]) or ("/" if pattern.startswith("/") else ".")
        if tilde and prefix.startswith("~"):
            home = _home(prefix)
            if home is None:
                self.reasons.append(f"{pattern} names a home directory known only at run time")
                return
            prefix = home
        before = len(self.reasons)
        self._path(prefix, tilde=False, whole=True)
        if len(self.reasons) > before:
            return
        roots = [os.path.realpath(os.path.join(c, prefix)) for c in self.cwds]
        if all(not self._inside(r) for r in roots):
            return  # under a safe system path
        reason = _walk([r for r in roots if self._inside(r)], rest, self._inside, self._excused)
        if reason:
            self.reasons.append(f"the glob {pattern} {reason}")


def _home(text: str) -> str | None:
    """`~` and `~/…` with the home directory in place; None for `~user`, `~+`, `~-`."""
    prefix, slash, rest = text.partition("/")
    if prefix != "~":
        return None
    home = os.path.expanduser("~")
    return os.path.join(home, rest) if slash else home


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _walk(roots: list[str], segments: list[str], inside: Test, safe: Test) -> str | None:
    """Follow `segments` from `roots` over every entry a segment may match; why it leaves."""
    level = roots
    seen = 0
    for depth, segment in enumerate(segments):
        if not segment:
            continue
        loose = _loose(segment)
        found: list[str] = []
        for base in level:
            if loose is None:
                found.append(os.path.join(base, segment))
                continue
            try:
                entries = list(os.scandir(base))
            except OSError:
                continue
            seen += len(entries)
            if seen > MAX_GLOB_ENTRIES:
                return f"matches more than {MAX_GLOB_ENTRIES} entries to check"
            found.extend(e.path for e in entries if fnmatch.fnmatchcase(e.name.lower(), loose))
        for path in found:
            resolved = os.path.realpath(path)
            if not inside(resolved) and not safe(resolved):
                return f"reaches {path} → {resolved}, outside the workspace"
        last = depth == len(segments) - 1
        level = [] if last else [p for p in found if os.path.isdir(p)]
    return None


def _loose(segment: str) -> str | None:
    """A glob segment as a case-insensitive fnmatch pattern matching at least what bash matches
    (None: the segment has no pattern character)."""
    if not any(c in segment for c in "*?["):
        return None
    if _POSIX_CLASS.search(segment):
        return "*"
    return segment.replace("[^", "[!").lower()
