"""Persistent user settings (`~/.yagent/settings.json`): the project-level standing permission,
and the local services the person opened for a project for good (`local_openings`).

Contract: the file is written atomically (temp file in the same directory, fsync, `os.replace`);
a file that cannot be parsed is reported with `SettingsError` and never overwritten — a person's
settings are not silently replaced by defaults. Paths are stored resolved (`realpath`).
`authorized_projects()` (asked before every tool call that needs a standing permission) reads
the file again only when it changed: its identity and time stamps (inode, size, mtime, ctime)
differ from the last read's, or it was modified less than `FRESH` seconds before that read — a
file written within the time stamps' granularity is never trusted to be unchanged.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from yagent.tools.atomicfile import MISSING, atomic_write, read_json

FRESH = 2.0  # seconds: a file modified this recently is read again at the next call

Stamp = tuple[int, int, int, int]


def _stamp(path: Path) -> tuple[Stamp, float] | None:
    """The file's identity and time stamps, and its mtime; None when it cannot be stat'ed (then
    nothing is remembered)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0, 0), 0.0  # no file: settled until one appears (then its stamp differs)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), st.st_mtime


class SettingsError(Exception):
    """The settings file exists but cannot be used; it was left untouched."""


def default_home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


class Settings:
    def __init__(self, home: Path | None = None) -> None:
        self.path = (home or default_home()) / "settings.json"
        self._lock = threading.Lock()
        self._authorized: tuple[Stamp, frozenset[str]] | None = None  # as of the last read

    def load(self) -> dict[str, Any]:
        data = read_json(self.path, SettingsError, "the settings file")
        if data is MISSING:
            return {}
        if not isinstance(data, dict):
            raise SettingsError(f"{self.path} must hold a JSON object, not {type(data).__name__}")
        return data

    def save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write(self.path, text.encode("utf-8"), force_mode=0o600)  # as mkstemp made it

    def authorized_projects(self) -> frozenset[str]:
        before = _stamp(self.path)  # taken before reading: a later change never hides
        known = self._authorized
        if before is not None and known is not None and known[0] == before[0]:
            return known[1]
        value = self.load().get("authorized_projects", [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{self.path}: authorized_projects must be a list of paths")
        found = frozenset(value)
        settled = before is not None and time.time() - before[1] >= FRESH
        self._authorized = (before[0], found) if before is not None and settled else None
        return found

    def is_project_authorized(self, project: Path) -> bool:
        return self.authorizes(os.path.realpath(project))

    def authorizes(self, resolved: str) -> bool:
        """Whether the project at `resolved` (a path already resolved with `realpath`, as
        stored) holds the project-level standing permission."""
        return resolved in self.authorized_projects()

    def authorize_project(self, project: Path) -> None:
        """Add `project` to authorized_projects (read-modify-write under a lock, atomic write)."""
        with self._lock:
            data = self.load()
            current = data.get("authorized_projects", [])
            if not isinstance(current, list):
                raise SettingsError(f"{self.path}: authorized_projects must be a list of paths")
            resolved = os.path.realpath(project)
            if resolved not in current:
                data["authorized_projects"] = [*current, resolved]
                self.save(data)

    def local_openings(self, project: Path) -> tuple[str, ...]:
        """The local services the person opened for `project` for good ("always" to the
        question of `tools.localask`): `allow_local` entries."""
        value = self.load().get("local_openings", {})
        entries = value.get(os.path.realpath(project), []) if isinstance(value, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise SettingsError(f"{self.path}: local_openings must map paths to lists of entries")
        return tuple(entries)

    def remember_local_opening(self, project: Path, entry: str) -> None:
        """Add `entry` to `project`'s local openings (read-modify-write under a lock, atomic)."""
        with self._lock:
            data = self.load()
            openings = data.get("local_openings", {})
            if not isinstance(openings, dict):
                raise SettingsError(f"{self.path}: local_openings must map paths to lists")
            current = list(openings.get(os.path.realpath(project), []))
            if entry not in current:
                openings[os.path.realpath(project)] = [*current, entry]
                data["local_openings"] = openings
                self.save(data)
