"""A small reader for untrusted YAML mappings that names every problem instead of guessing.

Every accessor records a problem (with its location, e.g. `modules[2].roots`) and returns a safe
placeholder, so one pass over the policy reports all of its problems at once. `done()` names the
keys nobody asked for: an unknown key is a typo or a feature this gate does not have, and both must
be said out loud rather than silently ignored.
"""

from __future__ import annotations

import datetime as dt
from typing import Any


class Fields:
    """Typed access to one mapping of the policy, at location `where`."""

    def __init__(self, data: object, where: str, problems: list[str]) -> None:
        self.where = where
        self.problems = problems
        self.seen: set[str] = set()
        if isinstance(data, dict):
            self.data: dict[Any, Any] = data
        else:
            self.data = {}
            problems.append(f"{where}: expected a mapping, got {type(data).__name__}")

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _get(self, key: str, required: bool) -> object:
        self.seen.add(key)
        if key not in self.data:
            if required:
                self.problems.append(f"{self.at(key)}: required key is missing")
            return None
        return self.data[key]

    def text(self, key: str, required: bool = True, default: str = "") -> str:
        value = self._get(key, required)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.problems.append(f"{self.at(key)}: expected a non-empty string, got {value!r}")
            return default
        return value

    def number(self, key: str, default: int, minimum: int = 0) -> int:
        value = self._get(key, False)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.problems.append(f"{self.at(key)}: expected an integer >= {minimum}, got {value!r}")
            return default
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problems.append(f"{self.at(key)}: expected true or false, got {value!r}")
            return default
        return value

    def texts(self, key: str, required: bool = False) -> tuple[str, ...]:
        value = self._get(key, required)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.problems.append(f"{self.at(key)}: expected a list of non-empty strings")
            return ()
        if required and not value:
            self.problems.append(f"{self.at(key)}: must not be empty")
        return tuple(value)

    def items(self, key: str) -> list[Fields]:
        value = self._get(key, False)
        if value is None:
            return []
        if not isinstance(value, list):
            self.problems.append(f"{self.at(key)}: expected a list")
            return []
        return [Fields(v, f"{self.at(key)}[{i}]", self.problems) for i, v in enumerate(value)]

    def section(self, key: str) -> Fields | None:
        value = self._get(key, False)
        return None if value is None else Fields(value, self.at(key), self.problems)

    def date(self, key: str) -> dt.date:
        value = self._get(key, True)
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        if value is not None:
            self.problems.append(f"{self.at(key)}: expected a date YYYY-MM-DD, got {value!r}")
        return dt.date.min

    def done(self) -> None:
        for key in self.data:
            if key not in self.seen:
                self.problems.append(f"{self.at(str(key))}: unknown key")
