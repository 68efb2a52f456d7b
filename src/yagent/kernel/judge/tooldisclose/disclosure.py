"""disclosure: per-run state of which tools' full schemas the model has been given.

Contract:
- A `Disclosure` starts with the host's always-visible ("hot") tools, which must all be in the
  catalog (`UnknownToolError` otherwise), and nothing loaded.
- `load(names, budget)` adds schemas in the order given (the host passes search order, best
  first), each name once. Names already visible are reported as `already`; names not in the
  catalog are reported as `unknown` (never ignored, never loaded); names the budget had no room
  for are reported as `trimmed`. The budget caps the schemas one load adds (`max_schemas`) and/or
  their total size (`max_size`, in the units of the sizer, token-ish by default); packing is
  first-fit in the given order, so a large schema that does not fit does not block a smaller one
  after it.
- `snapshot()` / `restore()` carry the loaded set across a crash: a resumed run does not make the
  model load again. Restoring reports names the catalog no longer has as `unknown` and loads none
  of them; a snapshot that cannot be read raises `SnapshotError` (fail closed).
- Mutations hold a lock, so calls judged from worker threads see one consistent set.
What counts as a "load" request from the model (a tool call, a search result) is the host's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from yagent.kernel.judge.tooldisclose.catalog import Catalog, ToolEntry, approx_size
from yagent.kernel.judge.tooldisclose.errors import SnapshotError, UnknownToolError

SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Budget:
    """How much one load may add: at most `max_schemas` schemas and/or `max_size` in total."""

    max_schemas: int | None = None
    max_size: int | None = None

    def __post_init__(self) -> None:
        for field_name in ("max_schemas", "max_size"):
            value = getattr(self, field_name)
            if value is not None and value < 1:
                raise ValueError(f"Budget.{field_name} must be at least 1 or None, got {value}")


UNLIMITED = Budget()


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What a load did. Every requested name lands in exactly one of the four tuples."""

    added: tuple[str, ...]
    already: tuple[str, ...] = ()
    trimmed: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    size: int = 0

    @property
    def complete(self) -> bool:
        """True when nothing was trimmed and no name was unknown."""
        return not self.trimmed and not self.unknown


@dataclass(frozen=True, slots=True)
class LoadedSet:
    """The loaded set (hot tools are configuration, not state, so they are not in it)."""

    loaded: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"version": SNAPSHOT_VERSION, "loaded": list(self.loaded)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadedSet:
        if not isinstance(data, Mapping) or data.get("version") != SNAPSHOT_VERSION:
            raise SnapshotError(f"unreadable disclosure snapshot (version): {data!r}")
        loaded = data.get("loaded")
        if not isinstance(loaded, list) or not all(isinstance(n, str) and n for n in loaded):
            raise SnapshotError(f"unreadable disclosure snapshot (loaded): {loaded!r}")
        return cls(tuple(sorted(set(loaded))))


class Disclosure:
    """Which tools are visible to the model in one run."""

    __slots__ = ("_catalog", "_hot", "_loaded", "_lock", "_sizer")

    def __init__(
        self,
        catalog: Catalog,
        *,
        always: Iterable[str] = (),
        sizer: Callable[[ToolEntry], int] = approx_size,
    ) -> None:
        hot = frozenset(always)
        missing = sorted(n for n in hot if n not in catalog)
        if missing:
            raise UnknownToolError(f"always-visible tools are not in the catalog: {missing}")
        self._catalog = catalog
        self._hot = hot
        self._sizer = sizer
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    @property
    def hot(self) -> frozenset[str]:
        return self._hot

    def loaded(self) -> tuple[str, ...]:
        """Tools loaded on demand in this run, sorted (hot tools excluded)."""
        with self._lock:
            return tuple(sorted(self._loaded))

    def visible(self) -> tuple[str, ...]:
        """Hot and loaded tools, sorted: the schemas the model has."""
        with self._lock:
            return tuple(sorted(self._hot | self._loaded))

    def is_visible(self, name: str) -> bool:
        with self._lock:
            return name in self._hot or name in self._loaded

    def visible_entries(self) -> tuple[ToolEntry, ...]:
        return tuple(e for n in self.visible() if (e := self._catalog.get(n)) is not None)

    def load(self, names: Iterable[str], budget: Budget = UNLIMITED) -> LoadResult:
        """Load `names` within `budget` (see the module contract)."""
        added: list[str] = []
        already: list[str] = []
        trimmed: list[str] = []
        unknown: list[str] = []
        size = 0
        with self._lock:
            for name in dict.fromkeys(names):
                entry = self._catalog.get(name)
                if entry is None:
                    unknown.append(name)
                    continue
                if name in self._hot or name in self._loaded:
                    already.append(name)
                    continue
                cost = self._sizer(entry)
                over_count = budget.max_schemas is not None and len(added) >= budget.max_schemas
                over_size = budget.max_size is not None and size + cost > budget.max_size
                if over_count or over_size:
                    trimmed.append(name)
                    continue
                self._loaded.add(name)
                added.append(name)
                size += cost
        return LoadResult(tuple(added), tuple(already), tuple(trimmed), tuple(unknown), size)

    def snapshot(self) -> LoadedSet:
        return LoadedSet(self.loaded())

    def restore(self, snapshot: LoadedSet) -> LoadResult:
        """Bring back a snapshot's loaded set (no budget: the model already paid for it)."""
        if not isinstance(snapshot, LoadedSet):
            raise SnapshotError(f"restore needs a LoadedSet, got {type(snapshot).__name__}")
        return self.load(snapshot.loaded)
