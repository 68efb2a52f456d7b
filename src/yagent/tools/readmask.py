"""What no tool may read: secrets, other people's homes and yagent's own state.

Contract:
- `ReadMask.hidden()` lists the host paths a sandboxed command cannot see, by default: yagent's
  home (`$YAGENT_HOME`, and `~/.yagent` whether or not it is the one in use: sessions — with the
  genuine reminder marker —, durable state, trust, settings), the usual credential stores under
  the user's home (`CREDENTIAL_STORES`: ssh, gnupg, cloud and cluster credentials, docker,
  netrc, git credentials, gh, npm, pypi, cargo, shell and REPL histories), every other home
  (`/home/*` except the one holding the user's home, and `/root` when it is not the user's
  home), plus `[sandbox] deny_read`; minus what `[sandbox] allow_read` re-opens (a hidden path
  at or under an `allow_read` entry is dropped; an `allow_read` entry under a hidden directory
  is `shown()` — bound back read-only).
- The model keys yagent itself was configured with are secrets too, whatever their names: `keys`
  (the files `api_key_file` names) are hidden like the credential stores — in the workspace or
  beside it, and `allow_read` does not re-open them —, and `key_env` (the variables
  `api_key_env` names) lists the variables no command is given (`tools.commands.sandbox_env`).
- `denies` also refuses every process's environment (`/proc/<pid>/environ`, a thread's too,
  reached through `/proc/self` or `/proc/thread-self` alike): the file tools and `search` run in
  yagent's own process, whose environment holds the API keys the sandbox keeps from commands.
  Nothing re-opens it (the sandbox's own `/proc` is another namespace's).
- `denies(path)` says whether a (resolved, absolute) path lies in what is hidden: the file tools'
  guard refuses such a path whatever stands (`-y` included), so what the sandbox hides no tool
  reads either.
- A configured entry is `~`-expanded; a relative one is taken against the workspace. The user's
  home comes from `HOME` (the environment the sandbox is built for), never from a guess.
- A `deny_read` entry may be a gitignore-style pattern (`./secrets/**`, `config/*.pem`,
  `**/.env`: `tools.readpatterns`): `denies` refuses every path it covers; `hidden()` lists the
  paths that match when it is asked (the sandbox asks when it is set up).
Leaves to the host: which entries come from whom (a project's `allow_read` needs trust:
`app.projectkeys`); what the sandbox does with the list (`kernel.confine.sandbox.BwrapProvider`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from yagent.tools.readpatterns import Pattern, read_entries

CREDENTIAL_STORES: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".sh_history",
    ".history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".viminfo",
)
"""Credential stores and histories under the user's home that no sandboxed command may read."""
# a process's or a thread's environment, as a resolved path names it
PROC_ENVIRON = re.compile(r"/proc/[0-9]+(?:/task/[0-9]+)?/environ")
HOMES = Path("/home")
ROOT_HOME = Path("/root")


def yagent_home(env: Mapping[str, str]) -> Path:
    """yagent's own home, as the CLI and the session store resolve it."""
    configured = env.get("YAGENT_HOME", "").strip()
    if configured:
        return Path(os.path.abspath(os.path.expanduser(configured)))
    return user_home(env) / ".yagent"


def user_home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME", "").strip()
    return Path(os.path.abspath(home)) if home else Path.home()


def other_homes(home: Path) -> list[Path]:
    """Every home that is not the user's: `/home/*` but the one holding `home`, and `/root`
    unless it is the user's home."""
    mine = Path(os.path.realpath(home))
    try:
        listed = sorted(HOMES.iterdir()) if HOMES.is_dir() else []
    except OSError:
        listed = []
    candidates = [*listed, ROOT_HOME]
    return [
        p
        for p in candidates
        if not mine.is_relative_to(os.path.realpath(p)) and (p.is_dir() or p.is_symlink())
    ]


@dataclass(frozen=True, slots=True)
class ReadMask:
    """The default hidden set, `deny` added and `allow` re-opened (see the module contract)."""

    workspace: Path
    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    keys: tuple[str, ...] = ()
    """Files yagent reads its model keys from: hidden, never re-opened."""
    key_env: tuple[str, ...] = ()
    """Variables yagent reads its model keys from: not given to any command."""
    # what `denies` compares against, computed at its first use (the guard asks on every call)
    _rules: dict[str, tuple[tuple[str, int], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _split: list[tuple[tuple[str, ...], tuple[Pattern, ...]]] = field(
        default_factory=list, compare=False, repr=False
    )

    def _env(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def _path(self, entry: str) -> Path:
        expanded = _expand(entry, self._env())
        return Path(os.path.abspath(os.path.join(self.workspace, expanded)))

    def _allowed(self) -> list[Path]:
        return [self._path(a) for a in self.allow]

    def _denied(self) -> tuple[tuple[str, ...], tuple[Pattern, ...]]:
        if not self._split:
            self._split.append(read_entries(self.deny, self.workspace, user_home(self._env())))
        return self._split[0]

    def _fixed(self) -> tuple[Path, ...]:
        """What is hidden but the patterns' matches (`denies` matches patterns itself)."""
        env = self._env()
        home = user_home(env)
        # yagent's default home too when another is in use: it holds sessions, trust and keys
        found = [yagent_home(env), home / ".yagent", *(home / rel for rel in CREDENTIAL_STORES)]
        found += other_homes(home)
        found += [self._path(d) for d in self._denied()[0]]
        allowed = self._allowed()
        kept = [p for p in found if not any(_at_or_under(p, a) for a in allowed)]
        return tuple(dict.fromkeys([*kept, *(self._path(k) for k in self.keys)]))

    def hidden(self) -> tuple[Path, ...]:
        """The host paths a sandboxed command cannot see (existing or not: checked per run;
        a pattern's matches as they are now — `ReadPatternError` when they cannot all be found)."""
        allowed = self._allowed()
        matches = [m for pattern in self._denied()[1] for m in pattern.existing()]
        kept = [p for p in matches if not any(_at_or_under(p, a) for a in allowed)]
        return tuple(dict.fromkeys([*self._fixed(), *kept]))

    def shown(self) -> tuple[Path, ...]:
        """`allow_read` entries that lie under a hidden path (bound back read-only) and exist."""
        fixed = self._fixed()
        patterns = self._denied()[1]
        return tuple(
            a
            for a in self._allowed()
            if a.exists()
            and (
                any(_at_or_under(a, h) and a != h for h in fixed)
                or any(p.covers(str(a)) not in (None, a) for p in patterns)
            )
        )

    def denies(self, resolved: str) -> Path | None:
        """The hidden entry `resolved` (absolute, links resolved) lies in, or None. As in the
        sandbox, the deepest rule wins: the workspace and `shown()` paths inside a hidden one
        are readable, a hidden path inside the workspace is not. A process environment is never
        readable."""
        if PROC_ENVIRON.fullmatch(resolved):
            return Path(resolved)
        if not self._rules:
            self._rules["open"] = tuple(
                (str(r), len(r.parts)) for r in (_real(self.workspace), *self.shown())
            )
            hidden = [(form, entry) for entry in self._fixed() for form in {entry, _real(entry)}]
            self._rules["hidden"] = tuple((str(f), len(f.parts)) for f, _ in hidden)
            self._rules["entries"] = tuple((str(e), 0) for _, e in hidden)
        depth = max((d for r, d in self._rules["open"] if _prefix(resolved, r)), default=0)
        for (root, deep), (entry, _) in zip(
            self._rules["hidden"], self._rules["entries"], strict=True
        ):
            if deep > depth and _prefix(resolved, root):
                return Path(entry)
        return self._pattern_covers(resolved, depth)

    def _pattern_covers(self, resolved: str, depth: int) -> Path | None:
        allowed = self._allowed()
        for pattern in self._denied()[1]:
            match = pattern.covers(resolved)
            if match is None or len(match.parts) <= depth:
                continue
            if not any(_at_or_under(match, a) or _at_or_under(_real(match), a) for a in allowed):
                return match
        return None


def _expand(entry: str, env: Mapping[str, str]) -> str:
    if entry == "~" or entry.startswith("~/"):
        return str(user_home(env)) + entry[1:]
    return entry


def _prefix(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _at_or_under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def tool_paths_under(hidden: Sequence[Path], candidates: Sequence[str]) -> tuple[str, ...]:
    """The `candidates` (interpreter prefixes, PATH directories) that lie under a hidden path:
    they are bound back read-only so the tools a command needs still exist in the sandbox. A
    `shims` directory of a version manager (pyenv, rbenv, nodenv: its shims exec the manager's
    `libexec/` and read its versions) brings back the manager's whole root instead — the
    outermost directory below the hidden path holding both `shims` and `libexec`."""
    out: dict[str, None] = {}
    for raw in candidates:
        if not raw or not os.path.isdir(raw):
            continue
        real = os.path.realpath(raw)
        for entry in hidden:
            root = os.path.realpath(entry)
            if real != root and real.startswith(root.rstrip("/") + "/"):
                out.setdefault(_shim_root(real, root), None)
    return tuple(out)


def _shim_root(path: str, hidden: str) -> str:
    """The version manager's root `path` (a `shims` directory) belongs to, or `path` itself."""
    if os.path.basename(path) != "shims":
        return path
    found = path
    here = os.path.dirname(path)
    while here != hidden and here.startswith(hidden.rstrip("/") + "/"):
        if os.path.isdir(os.path.join(here, "shims")) and os.path.isdir(
            os.path.join(here, "libexec")
        ):
            found = here
        here = os.path.dirname(here)
    return found
