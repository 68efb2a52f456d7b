"""The workspace guard: which calls need a person's authorization.

Contract:
- Judged by a spec's declared facts (`Effect`, `path_args`, `command_arg`, `danger_flag`,
  `always_authorize`), never by tool name. A spec with `always_authorize` is asked about on every
  call (its risk cannot be judged from its arguments), unless a standing permission covers it.
- Paths are judged after `realpath` (symlinks resolved, `..` collapsed). The workspace directory
  itself counts as outside for destructive (write) operations on it (`rel == "."`).
- One resolution per call: inside `pinned(paths)` (entered by `Adapter.call` around the ring and
  the executor) `resolve` answers each pinned path with the resolution made on entry, so every
  ring judges — and the executor then uses — the same resolved path, however the disk changes
  meanwhile. The executor walks that path by descriptors without following links
  (`tools.files.judged`), so a later change is an error, never a second resolution.
- The shell has no blacklist. Defence is: the model's own danger flag, plus every path the
  command line names outside the workspace needs authorization (`shellpaths`: words read on the
  bash AST after static expansion, relative paths against the command's working directory,
  `--opt=PATH`, redirect targets, globs; a word only run time knows may be any path), except
  the one `SAFE_SYSTEM_PATHS` allow-list below; `/` itself is always dangerous. A command line
  that cannot be read needs authorization.
- The only enforcement is "ask the person": the guard returns a reason, never a hard refusal.
  Standing permissions skip the question: session (per tool, or all), project (persisted
  `authorized_projects`), YOLO (`-y`: everything, including paths outside the workspace) —
  except one: a file-writing tool aimed into `PROTECTED_PATHS` (every `.git` — directory or
  gitfile — and every `.yagent` at any depth: the root's, a nested repository's, a vendored
  project's; components compared case-folded, since `.GIT` is `.git` on a case-insensitive
  filesystem), or at one of `ASK_BEFORE_WRITING` anywhere (`.gitmodules`, `.gitattributes`,
  `.envrc`, shell start-up files, `.gitconfig`: the host runs what they name later), or into
  the person's own agent configuration (`PERSON_CONFIG`: `~/.claude`, read as the person's word
  in every later session), is asked about every time, whatever stands (`protected`): a model
  that could write its own rules, git hooks or standing instructions unasked would approve
  itself.
- A path argument too long to resolve (`PATH_MAX` bytes or more, as given or as resolved: past
  it `realpath` cannot look at a component, so a link to `.git` or out of the workspace would
  pass for a plain name) is refused outright by the boundary ring (`unresolvable`), whatever
  stands — never judged as an ordinary workspace path.
- What the sandbox hides (`tools.readmask`: yagent's home, credential stores, other homes,
  `[sandbox] deny_read`) no file tool reaches either, nor any process's environment:
  `unreadable` names such a path, and the boundary ring refuses the call outright — no
  question, no standing permission, `-y` included.
- Read roots (`add_read_roots`: the skill folders, `tools.skills`) are readable by tools whose
  effect is READ as if they were in the workspace, even where they lie under yagent's home — a
  path is judged after `realpath`, so a link inside such a folder pointing elsewhere is judged
  where it leads. Nothing else (writes, commands) gains anything from them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from yagent.kernel.confine.beneath import PATH_MAX
from yagent.tools import fsnames
from yagent.tools.readmask import PROC_ENVIRON, ReadMask, user_home
from yagent.tools.settings import Settings, SettingsError
from yagent.tools.shellpaths import outside_reasons
from yagent.tools.yolo import Yolo
from yagent.toolspec import Effect, Spec

# The one allow-list of system paths a command may name without asking. `/` is never safe.
SAFE_SYSTEM_PATHS: tuple[str, ...] = (
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/fd",
    "/proc/self",
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/lib",
    "/usr/local/lib",
    "/usr/include",
    "/usr/share",
    "/etc/os-release",
    "/tmp",
)

_DESTRUCTIVE = frozenset({Effect.WRITE})
"""Linux resolves no longer path: past it `realpath` keeps a link as a plain name."""
PROTECTED_PATHS: tuple[str, ...] = (".git", ".yagent")
"""Names (at any depth) only a person may let a tool write into (a sandbox keeps them read-only)."""
ASK_BEFORE_WRITING: tuple[str, ...] = (
    ".gitmodules",
    ".gitattributes",
    ".envrc",
    # run on the host, outside every sandbox, by the next shell or git command
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".gitconfig",
)
"""File names (at any depth) whose content the host acts on later: writing one is always asked."""
PERSON_CONFIG: tuple[str, ...] = (".claude",)
"""Folders under the person's home whose files yagent reads as the person's own word in every
later session (`CLAUDE.md`, `agents/`, `skills/` with their `allowed-tools`): writing into one
is always asked, like `PROTECTED_PATHS` — `-y` for one run must not become a standing word."""
_PROTECTED_FOLDED = frozenset(name.casefold() for name in PROTECTED_PATHS)
_PERSON_FOLDED = frozenset(name.casefold() for name in PERSON_CONFIG)
_ASK_FOLDED = frozenset(name.casefold() for name in ASK_BEFORE_WRITING)


# The call being judged and run (per task, so parallel calls keep their own): whose guard pinned
# which given path to which resolution.
_PINNED: ContextVar[tuple[WorkspaceGuard, Mapping[str, str]] | None] = ContextVar(
    "yagent_pinned_paths", default=None
)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def is_safe_system_path(resolved: str) -> bool:
    if resolved == "/":
        return False
    return any(_under(resolved, safe) for safe in SAFE_SYSTEM_PATHS)


class WorkspaceGuard:
    def __init__(
        self,
        workspace: Path,
        *,
        settings: Settings | None = None,
        yolo: Yolo = Yolo.OFF,
        reads: ReadMask | None = None,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self._workspace_text = str(self.workspace)  # as settings store it: resolved
        self.reads = reads or ReadMask(self.workspace)
        self.settings = settings
        self.yolo = yolo
        self._session_tools: set[str] = set()
        self._skip_all = False
        self._read_roots: tuple[str, ...] = ()

    def add_read_roots(self, roots: Iterable[Path]) -> None:
        """Folders READ tools may read wherever they are (module contract)."""
        self._read_roots += tuple(os.path.realpath(r) for r in roots)

    def _read_root_holds(self, spec: Spec, resolved: str) -> bool:
        return spec.effect is Effect.READ and any(_under(resolved, r) for r in self._read_roots)

    # -- standing permissions -------------------------------------------------------------
    def standing(self, spec: Spec) -> bool:
        """True when a standing permission lets `spec` through without asking."""
        if self.yolo >= Yolo.YOLO or self._skip_all or spec.name in self._session_tools:
            return True
        if self.settings is None:
            return False
        try:
            return self.settings.authorizes(self._workspace_text)
        except SettingsError:
            return False  # a broken settings file grants nothing (and is reported elsewhere)

    def allow_tool_for_session(self, name: str) -> None:
        self._session_tools.add(name)

    def skip_all_for_session(self) -> None:
        self._skip_all = True

    # -- judgements ------------------------------------------------------------------------
    def resolve(self, path: str) -> str:
        pinned = _PINNED.get()
        if pinned is not None and pinned[0] is self:
            hit = pinned[1].get(path)
            if hit is not None:
                return hit
        return self._resolve_now(path)

    @contextlib.contextmanager
    def pinned(self, paths: Iterable[str]) -> Iterator[None]:
        """Resolve `paths` once; inside, `resolve` answers them with that resolution."""
        token = _PINNED.set((self, {p: self._resolve_now(p) for p in paths}))
        try:
            yield
        finally:
            _PINNED.reset(token)

    def _resolve_now(self, path: str) -> str:
        expanded = os.path.expanduser(path)
        joined = expanded if os.path.isabs(expanded) else os.path.join(self.workspace, expanded)
        resolved = os.path.realpath(joined)
        raw = fsnames.name_of(joined)  # a name shown as `\xNN` (not UTF-8) given back
        if raw != joined and not os.path.lexists(resolved):
            return os.path.realpath(raw)
        return resolved

    def in_workspace(self, path: str, *, destructive: bool = False) -> bool:
        resolved = self.resolve(path)
        rel = os.path.relpath(resolved, self.workspace)
        if rel == ".":
            return not destructive
        return not (rel == ".." or rel.startswith("../"))

    def boundary(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call's path arguments need authorization, or None."""
        destructive = spec.effect in _DESTRUCTIVE
        outside = [
            p
            for p in spec.arg_paths_of(args)
            if not self.in_workspace(p, destructive=destructive)
            and not self._read_root_holds(spec, self.resolve(p))
        ]
        if not outside:
            return None
        where = ", ".join(f"{p} → {self.resolve(p)}" for p in outside)
        if destructive and any(self.resolve(p) == str(self.workspace) for p in outside):
            return f"{spec.name} would act on the workspace directory itself ({where})"
        return f"{spec.name} reaches outside the workspace {self.workspace}: {where}"

    def protected(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call writes into a protected path (asked regardless of standing), or None."""
        if spec.effect not in _DESTRUCTIVE:
            return None
        hits = [p for p in spec.arg_paths_of(args) if self._is_protected(self.resolve(p))]
        if not hits:
            return None
        where = ", ".join(f"{p} → {self.resolve(p)}" for p in hits)
        return (
            f"{spec.name} would write into a protected path ({where}); only a person may allow it"
        )

    def _is_protected(self, resolved: str) -> bool:
        """A protected name among the path's components below the workspace (the whole path when
        it lies outside), or an always-asked file name at its end — compared case-folded —, or a
        path in the person's own agent configuration (`PERSON_CONFIG`)."""
        home = os.path.realpath(user_home(self.reads.env or os.environ))
        below = Path(os.path.relpath(resolved, home)).parts if _under(resolved, home) else ()
        if below and below[0].casefold() in _PERSON_FOLDED:  # `.CLAUDE` too (case-insensitive)
            return True
        rel = os.path.relpath(resolved, self.workspace)
        inside = not (rel == ".." or rel.startswith("../"))
        parts = [p.casefold() for p in (Path(rel) if inside else Path(resolved)).parts]
        if any(p in _PROTECTED_FOLDED for p in parts):
            return True
        return bool(parts) and parts[-1] in _ASK_FOLDED

    def unresolvable(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call's paths cannot be judged at all (refused outright), or None."""
        too_long = [p for p in spec.arg_paths_of(args) if self._too_long(p)]
        if not too_long:
            return None
        size = max(len(os.fsencode(os.path.join(self.workspace, p))) for p in too_long)
        return (
            f"{spec.name}: a path of {size} bytes is too long to resolve (the system resolves at "
            f"most {PATH_MAX - 1}): whether it leads into .git, .yagent or out of the workspace "
            "cannot be told, so it is refused, whatever stands; name a shorter path"
        )

    def _too_long(self, path: str) -> bool:
        joined = os.path.join(self.workspace, os.path.expanduser(path))
        longest = max(len(os.fsencode(joined)), len(os.fsencode(self.resolve(path))))
        return longest >= PATH_MAX

    def unreadable(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call's paths are refused outright (they lie in what the sandbox hides)."""
        hits = [
            (p, self.reads.denies(self.resolve(p)))
            for p in spec.arg_paths_of(args)
            if not self._read_root_holds(spec, self.resolve(p))
        ]
        named = [f"{p} (in {entry})" for p, entry in hits if entry is not None]
        if not named:
            return None
        if all(PROC_ENVIRON.fullmatch(str(entry)) for _, entry in hits if entry is not None):
            return (
                f"{spec.name} would read a process's environment, which holds credentials "
                f"(yagent's own API keys among them) and is hidden from every tool: "
                f"{', '.join(named)}"
            )
        return (
            f"{spec.name} would reach a path hidden from every tool — yagent's state or model "
            f"key, a credential store, another home or [sandbox] deny_read: {', '.join(named)}; "
            "[sandbox] allow_read in your own config re-opens a path (never a model key)"
        )

    @staticmethod
    def can_be_dangerous(spec: Spec) -> bool:
        """Whether `danger` can name a reason for some call to `spec`: only a spec declaring
        `always_authorize`, a `danger_flag` or a `command_arg` has one (False: `danger` is None
        whatever the arguments)."""
        return bool(spec.always_authorize or spec.danger_flag or spec.command_arg)

    def danger(self, spec: Spec, args: Mapping[str, Any]) -> str | None:
        """Why this call is a dangerous operation needing authorization, or None."""
        if not self.can_be_dangerous(spec):
            return None
        reasons: list[str] = []
        if spec.always_authorize:
            reasons.append(f"{spec.name} {spec.always_authorize}")
        if spec.danger_flag and args.get(spec.danger_flag) is True:
            reasons.append("the model marked this command as dangerous")
        command = args.get(spec.command_arg) if spec.command_arg else None
        if isinstance(command, str):
            reasons.extend(outside_reasons(command, self.workspace, SAFE_SYSTEM_PATHS))
        elif spec.command_arg and command is not None:
            reasons.append(f"{spec.command_arg} is not a string")
        return "; ".join(dict.fromkeys(reasons)) or None
