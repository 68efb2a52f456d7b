"""Persistent user settings (`~/.yagent/settings.json`): the project-level standing permission,
and the local services the person opened for a project for good (`local_openings`).

Contract: the file is written atomically (temp file in the same directory, fsync, `os.replace`);
a file that cannot be parsed is reported with `SettingsError` and never overwritten — a person's
settings are not silently replaced by defaults. Paths are stored resolved (`realpath`).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from yagent.tools.atomicfile import MISSING, atomic_write, read_json


class SettingsError(Exception):
    """The settings file exists but cannot be used; it was left untouched."""


def default_home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


class Settings:
    def __init__(self, home: Path | None = None) -> None:
        self.path = (home or default_home()) / "settings.json"
        self._lock = threading.Lock()

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
        value = self.load().get("authorized_projects", [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{self.path}: authorized_projects must be a list of paths")
        return frozenset(value)

    def is_project_authorized(self, project: Path) -> bool:
        return os.path.realpath(project) in self.authorized_projects()

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
