"""Project and user memories: two JSON files, injected into the system prompt through `memorypipe`.

Contract:
- User (global) memories live in `<home>/memory.json` with scope `global`; project memories in
  `<workspace>/.yagent/memory.json` with scope `project`. Each item is an object with `id`,
  `text`, `source`, `at` (seconds since the epoch) and `scope`; `add` gives a new item a fresh id,
  the source `user` and the clock's time, and rewrites the file atomically.
- Each file is selected with exactly its own scope: an item whose scope is not the file's is
  out of scope and counted, never promoted (no falling back from project to global or back).
  Items without a source, id, text or usable time are dropped by `memorypipe` and reported;
  same id ⇒ only the newest. Project memories are chosen first within `BUDGET` tokens, global
  ones in what is left; what did not fit is reported as trimmed.
- A file that cannot be read or is not the expected shape is not an error for the run: nothing
  from it is injected and `Injected.problems` says why (shown in the `memory` event). Writing to
  such a file refuses (`MemoryFileError`) rather than overwrite what it could not read.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.kernel.context import budget, memorypipe
from yagent.tools.atomicfile import atomic_write

GLOBAL = "global"
PROJECT = "project"
FILE_NAME = "memory.json"
BUDGET = 2_000  # tokens of tagged memories in the system prompt
SOURCE_USER = "user"


class MemoryFileError(ValueError):
    """A memory file that cannot be read or written as asked."""


def _item(data: dict[str, Any]) -> memorypipe.Memory:
    source = data.get("source")
    at = data.get("at")
    return memorypipe.Memory(
        id=str(data.get("id") or ""),
        text=str(data.get("text") or ""),
        source=source if isinstance(source, str) else None,
        at=at if isinstance(at, int | float) and not isinstance(at, bool) else float("nan"),
        scope=str(data.get("scope") or ""),
    )


@dataclass(frozen=True, slots=True)
class MemoryFile:
    path: Path
    scope: str

    def _raw(self) -> list[Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise MemoryFileError(f"{self.path}: cannot read: {exc.strerror}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MemoryFileError(f"{self.path}: not valid JSON: {exc}") from exc
        items = data.get("memories") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise MemoryFileError(f'{self.path}: expected {{"memories": [...]}}')
        return items

    def load(self) -> list[memorypipe.Memory]:
        return self.load_checked()[0]

    def load_checked(self) -> tuple[list[memorypipe.Memory], list[str]]:
        """The memories, and a problem line for each entry that is not even an object."""
        raw = self._raw()
        problems = [
            f"{self.path}: entry {n} is not an object, ignored"
            for n, item in enumerate(raw, 1)
            if not isinstance(item, dict)
        ]
        return [_item(item) for item in raw if isinstance(item, dict)], problems

    def add(
        self, text: str, *, source: str = SOURCE_USER, now: float | None = None
    ) -> dict[str, Any]:
        if not text.strip():
            raise MemoryFileError("a memory needs some text")
        items = self._raw()
        item = {
            "id": f"mem-{secrets.token_hex(4)}",
            "text": text.strip(),
            "source": source,
            "at": time.time() if now is None else now,
            "scope": self.scope,
        }
        items.append(item)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"version": 1, "memories": items}, ensure_ascii=False, indent=2)
        atomic_write(self.path, (body + "\n").encode("utf-8"))
        return item


def heading(memory_file: MemoryFile, count: int) -> str:
    """The line above a file's memories: `project: 2 memories (PATH)`, `user: 1 memory (PATH)`."""
    amount = "no memories" if count == 0 else "1 memory" if count == 1 else f"{count} memories"
    return f"{memory_file.scope}: {amount} ({memory_file.path})"


def files(home: Path, workspace: Path) -> tuple[MemoryFile, MemoryFile]:
    """(project file, global file)."""
    return (
        MemoryFile(workspace / ".yagent" / FILE_NAME, PROJECT),
        MemoryFile(home / FILE_NAME, GLOBAL),
    )


@dataclass(frozen=True, slots=True)
class Injected:
    """The band for the system prompt ("" when there is nothing) and the `memory` event."""

    text: str
    injection: memorypipe.Injection
    problems: tuple[str, ...]

    def event(self) -> dict[str, Any]:
        inj = self.injection
        return {
            "injected": [m.id for m in inj.items],
            "dropped": [
                {"id": d.memory_id, "reason": d.reason.value, "detail": d.detail}
                for d in inj.dropped
            ],
            "out_of_scope": inj.out_of_scope,
            "scopes": list(inj.scopes),
            "used": inj.used,
            "budget": inj.budget,
            "problems": list(self.problems),
        }

    @property
    def worth_reporting(self) -> bool:
        inj = self.injection
        return bool(inj.items or inj.dropped or inj.out_of_scope or self.problems)


def inject(home: Path, workspace: Path, *, limit: int = BUDGET) -> Injected:
    """Both files' memories for the system prompt, each with exactly its own scope."""
    problems: list[str] = []
    parts: list[memorypipe.Injection] = []
    left = limit
    for memory_file in files(home, workspace):
        try:
            loaded, malformed = memory_file.load_checked()
        except MemoryFileError as exc:
            loaded, malformed = [], [str(exc)]
        problems += malformed
        chosen = memorypipe.select(
            loaded, scopes=memory_file.scope, budget=left, counter=budget.approx_tokens
        )
        left -= chosen.used
        parts.append(chosen)
    injection = memorypipe.Injection(
        items=tuple(m for p in parts for m in p.items),
        dropped=tuple(d for p in parts for d in p.dropped),
        scopes=tuple(s for p in parts for s in p.scopes),
        out_of_scope=sum(p.out_of_scope for p in parts),
        budget=limit,
        used=limit - left,
    )
    text = memorypipe.render(injection) if injection.items or injection.trimmed else ""
    return Injected(text, injection, tuple(problems))
