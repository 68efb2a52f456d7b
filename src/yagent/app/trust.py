"""The person's trust in a workspace's own safety files: `<home>/trust.json`.

A repository ships `.yagent/config.toml` and `.yagent/shell-rules.toml`; what in them could loosen
yagent's safety applies only once the person trusted that exact content (`yagent trust`).

Guarantees:
- Trust is recorded per workspace (its `realpath`) as the sha256 of each project file's content
  at the moment the person trusted it. A file whose content no longer has that hash is CHANGED —
  untrusted again; a file with no recorded hash is UNTRUSTED. There is no "trust everything"
  switch: nothing but these records (written by `yagent trust` or by yagent carrying trust over
  its own append) trusts a file.
- Writes are atomic (temp file in the same directory, fsync, `os.replace`, mode 0600) and
  read-modify-write happens under a lock (a thread lock and an `flock` on `trust.json.lock`), so
  two yagent processes never lose each other's records.
- A trust file that cannot be read or parsed is a `TrustError` naming it, never "trust all" and
  never "trust none, overwrite": it is left untouched for the person to fix.
- `carry_over` records the new content of a file yagent itself just rewrote ONLY when the content
  before the write was trusted or the file did not exist: an untrusted file does not become
  trusted because yagent appended to it.
Leaves to the caller: which files count, what trusting them changes, and asking the person.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from yagent.tools.atomicfile import MISSING, atomic_write, read_json

FILE_NAME = "trust.json"
CONFIG_FILE = ".yagent/config.toml"
RULES_FILE = ".yagent/shell-rules.toml"
CLAUDE_SETTINGS = ".claude/settings.json"  # its hooks (app.claudehooks) wait for trust too
MCP_JSON = ".mcp.json"  # Claude Code's project MCP servers (app.mcpjson) wait for trust too
PROJECT_FILES = (CONFIG_FILE, RULES_FILE, CLAUDE_SETTINGS, MCP_JSON)
_VERSION = 1
_LOCK = threading.Lock()  # one per process: Store instances for the same home share it


class TrustError(Exception):
    """The trust file exists but cannot be used; it was left untouched."""


class Status(enum.StrEnum):
    TRUSTED = "trusted"
    UNTRUSTED = "not trusted"
    CHANGED = "changed since you trusted it"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def status_of(records: Mapping[str, str], name: str, sha256: str) -> Status:
    """The status of content hashing to `sha256` against one workspace's `records`."""
    recorded = records.get(name)
    if recorded is None:
        return Status.UNTRUSTED
    return Status.TRUSTED if recorded == sha256 else Status.CHANGED


def workspace_key(workspace: Path) -> str:
    return os.path.realpath(workspace)


class Store:
    """The trust records under one yagent home."""

    def __init__(self, home: Path) -> None:
        self.path = home / FILE_NAME

    # -- reading ------------------------------------------------------------------------------
    def load(self) -> dict[str, dict[str, str]]:
        """Every workspace's records: realpath → {project file → sha256}."""
        why = " trusts no project while it cannot read it"
        data = read_json(self.path, TrustError, "the trust file", why)
        return {} if data is MISSING else self._checked(data)

    def _checked(self, data: Any) -> dict[str, dict[str, str]]:
        bad = TrustError(
            f"the trust file {self.path} must hold "
            '{"version": 1, "workspaces": {PATH: {FILE: SHA256}}}; fix or remove it'
        )
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            raise bad
        workspaces = data.get("workspaces")
        if set(data) != {"version", "workspaces"} or not isinstance(workspaces, dict):
            raise bad
        for files in workspaces.values():
            if not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()
            ):
                raise bad
        return workspaces

    def records(self, workspace: Path) -> dict[str, str]:
        """The trusted hashes of `workspace`'s files (empty: nothing trusted)."""
        return dict(self.load().get(workspace_key(workspace), {}))

    def status(self, workspace: Path, name: str, content: bytes) -> Status:
        """Whether `content` of the project file `name` is what the person trusted."""
        return status_of(self.records(workspace), name, digest(content))

    # -- writing ------------------------------------------------------------------------------
    def trust(self, workspace: Path, digests: Mapping[str, str]) -> None:
        """Trust exactly these contents of `workspace`'s files (replacing its earlier record)."""
        with self._locked() as records:
            records[workspace_key(workspace)] = dict(digests)
            self._save(records)

    def revoke(self, workspace: Path) -> bool:
        """Forget `workspace`'s trust; False when there was none."""
        with self._locked() as records:
            if records.pop(workspace_key(workspace), None) is None:
                return False
            self._save(records)
            return True

    def carry_over(self, workspace: Path, name: str, before: bytes | None, after: bytes) -> bool:
        """After yagent rewrote `name` from `before` (None: it did not exist) to `after`: trust
        `after` only if `before` was trusted or absent. True when trust was carried."""
        with self._locked() as records:
            files = records.setdefault(workspace_key(workspace), {})
            if before is not None and files.get(name) != digest(before):
                return False
            files[name] = digest(after)
            self._save(records)
            return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict[str, str]]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(FILE_NAME + ".lock")
        with _LOCK, open(lock_path, "a", encoding="utf-8") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yield self.load()
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _save(self, records: dict[str, dict[str, str]]) -> None:
        data = {"version": _VERSION, "workspaces": records}
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write(self.path, text.encode("utf-8"), force_mode=0o600)
