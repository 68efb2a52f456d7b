"""Persistent user settings (`~/.yagent/settings.json`): the project-level standing permission.

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
