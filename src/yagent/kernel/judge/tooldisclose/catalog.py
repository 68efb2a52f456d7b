"""catalog: the immutable set of tools a run may disclose, and deterministic search over it.

Contract:
- A `Catalog` holds `ToolEntry`s by name and refuses two entries with one name
  (`DuplicateToolError`). It keeps them sorted by name, so nothing it returns depends on the
  order the host listed them in, on dict order or on file order.
- `search(query, k)` scores every entry with BM25 over its name, brief, description, parameter
  names, parameter descriptions and tags (name matches weigh most; the query is read with the
  general developer vocabulary of `vocab` — `PR` meets `pull request`, `remove` meets `delete` at
  a lower weight; a query word no tool contains falls back, weakly, on the catalog words sharing
  its first `UNSEEN_PREFIX` characters — visible in the hits' lower scores) and returns at most
  `k` hits, best first; equal scores are ordered by name. A query word no tool contains is first
  read as a typo of a catalog word (`TYPO_LENGTH`). Two factors then weigh the BM25 score: a tool
  whose action class (`intent.tool_action`: read / write) differs from the request's intent
  (`intent.query_intent` of the request as `phrasing` rewrites it: "which pods are running"
  reads, "delete the pod" and "file a bug" write) is weighed by
  `INTENT_WEIGHT` (< 1: down, never out); a tool whose tags name a server the request names as a
  word of its own (not inside a path, slug, URL or file name: `kubernetes/kubernetes` is a
  repository) is weighed by `SERVER_WEIGHT` (> 1). Entries with score 0 are never
  returned. The result says how many entries matched in all (`matched`), whether `k` cut the
  list (`truncated`) and, when it is empty, why (`reason`: a query without searchable words is
  not "nothing matched").
- The search index (`search.SearchIndex`: BM25, the vocabulary, intents, servers) is built at
  the catalog's first search (or `prepare()`), once, from what the catalog captured when it was
  constructed — its entries and the seams below as they were then; listing, looking up and
  gating tools never build it, nor load the modules that read a query.
- `render_catalog(entries)` is the compact model-facing listing: one `name — brief` line per tool.
It holds no schemas' JSON and no tool implementations: those stay with the host.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from yagent.kernel.judge.tooldisclose.errors import DuplicateToolError, InvalidEntryError

if TYPE_CHECKING:  # the index's module loads at a catalog's first search (module contract)
    from yagent.kernel.judge.tooldisclose.search import SearchIndex

# Field weights of the search (seams: a host or a benchmark may patch them before building a
# catalog). The name is what the model will type, so a hit there says the most; the brief, a
# curated one-line summary, says more than the longer description. The values were chosen on
# bench/data/tool_queries.json (and the paraphrase split) and judged on the held-out splits
# (docs/performance.md): parameter descriptions add words users say ("time spent", "glob") at a
# low weight, and a weak length normalisation (`LENGTH_NORM`, BM25's b) keeps tools with long
# descriptions from being pushed down for their length alone.
NAME_WEIGHT = 3.0
BRIEF_WEIGHT = 2.0
TAG_WEIGHT = 1.0
DESCRIPTION_WEIGHT = 1.0
PARAM_WEIGHT = 1.0
PARAM_DESCRIPTION_WEIGHT = 0.3
LENGTH_NORM = 0.3
# A query word no tool contains stands for the catalog words sharing its first `UNSEEN_PREFIX`
# characters, at a fraction of a real match (`bm25.UNSEEN_WEIGHT`); 0 turns the fallback off.
UNSEEN_PREFIX = 5
# A query word of at least `TYPO_LENGTH` letters no tool contains matches the catalog words one
# typo away from it at `bm25.TYPO_WEIGHT` (before the prefix fallback); 0 turns it off.
TYPO_LENGTH = 5
# Read queries with the general developer vocabulary of `vocab` (a seam: False reads each word
# alone, as the search did before the vocabulary existed).
USE_VOCABULARY = True
# What a tool whose action class differs from the request's intent keeps of its score, and what
# a tool of a server the request names gains (both chosen on the tuning and paraphrase splits).
INTENT_WEIGHT = 0.6
SERVER_WEIGHT = 1.4

EMPTY_QUERY = "the query has no searchable words; describe the action or the object you need"
NO_MATCH = "no tool in the catalog matches the query; try other words"


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a tool: its name, whether it is required, what it means."""

    name: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """A tool as the catalog knows it. `brief` is one line; `description` may be longer."""

    name: str
    brief: str = ""
    description: str = ""
    params: tuple[Param, ...] = ()
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip() or any(c.isspace() for c in self.name):
            raise InvalidEntryError(f"tool name {self.name!r} is empty or contains whitespace")
        seen: set[str] = set()
        for param in self.params:
            if not param.name:
                raise InvalidEntryError(f"tool {self.name!r} has a parameter without a name")
            if param.name in seen:
                raise InvalidEntryError(
                    f"tool {self.name!r} declares parameter {param.name!r} twice"
                )
            seen.add(param.name)

    @property
    def required(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.required)

    @property
    def optional(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.required)


def approx_size(entry: ToolEntry) -> int:
    """A token-ish size of the entry's full schema (about 4 characters per token, plus framing)."""
    chars = len(entry.name) + len(entry.brief) + len(entry.description) + 40
    for param in entry.params:
        chars += len(param.name) + len(param.description) + 30
    return math.ceil(chars / 4)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit."""

    entry: ToolEntry
    score: float

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits best first; `matched` counts every entry that scored, `truncated` says `k` cut it."""

    query: str
    hits: tuple[Hit, ...]
    matched: int
    truncated: bool
    reason: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(hit.name for hit in self.hits)


def order_key(score: float, name: str) -> tuple[float, str]:
    """Best score first; equal scores by name — the one ordering rule of search."""
    return (-score, name)


def rank(hits: Iterable[Hit]) -> list[Hit]:
    """`hits` in the order of `order_key`."""
    return sorted(hits, key=lambda hit: order_key(hit.score, hit.name))


def _fields(entry: ToolEntry) -> tuple[tuple[str, float], ...]:
    return (
        (entry.name, NAME_WEIGHT),
        (entry.brief, BRIEF_WEIGHT),
        (entry.description, DESCRIPTION_WEIGHT),
        (" ".join(p.name for p in entry.params), PARAM_WEIGHT),
        (" ".join(p.description for p in entry.params), PARAM_DESCRIPTION_WEIGHT),
        (" ".join(entry.tags), TAG_WEIGHT),
    )


class Catalog:
    """Immutable, name-sorted set of tool entries with deterministic search."""

    __slots__ = ("_by_name", "_entries", "_fields", "_index", "_lock", "_names", "_settings")

    def __init__(self, entries: Iterable[ToolEntry]) -> None:
        by_name: dict[str, ToolEntry] = {}
        for entry in entries:
            if not isinstance(entry, ToolEntry):
                raise InvalidEntryError(f"catalog entries must be ToolEntry, got {type(entry)!r}")
            if entry.name in by_name:
                raise DuplicateToolError(f"tool {entry.name!r} appears twice in the catalog")
            by_name[entry.name] = entry
        self._entries: tuple[ToolEntry, ...] = tuple(by_name[n] for n in sorted(by_name))
        self._by_name = by_name
        self._names = tuple(e.name for e in self._entries)
        # The seams as they are now: the index, built at the first search, is this catalog's.
        self._fields = tuple(_fields(e) for e in self._entries)
        self._settings = (
            LENGTH_NORM,
            UNSEEN_PREFIX,
            TYPO_LENGTH,
            USE_VOCABULARY,
            INTENT_WEIGHT,
            SERVER_WEIGHT,
        )
        self._index: SearchIndex | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ToolEntry]:
        return iter(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def indexed(self) -> bool:
        """Whether the search index is built (at the first search, or by `prepare`)."""
        return self._index is not None

    def get(self, name: str) -> ToolEntry | None:
        return self._by_name.get(name)

    def prepare(self) -> SearchIndex:
        """The search index, built now if no search built it yet — once per catalog, however
        many threads search at once. `search` calls it; a host that would rather pay the build
        before its first search (a benchmark timing it) calls it itself."""
        index = self._index
        if index is not None:
            return index
        with self._lock:
            if self._index is None:
                from yagent.kernel.judge.tooldisclose import search  # the query readers load here

                self._index = search.SearchIndex(
                    self._names,
                    self._fields,
                    [(e.name, e.brief, e.description) for e in self._entries],
                    [e.tags for e in self._entries],
                    search.Settings(*self._settings),
                )
            return self._index

    def search(self, query: str, k: int) -> SearchResult:
        """The `k` best-scoring entries for `query` (see the module contract)."""
        if k < 1:
            raise ValueError(f"search: k must be at least 1, got {k}")
        ranked = self.prepare().ranked(query, k)
        if ranked is None:
            return SearchResult(query, (), 0, False, EMPTY_QUERY)
        best, matched = ranked
        top = tuple(Hit(self._entries[i], -negated) for negated, _, i in best)
        return SearchResult(query, top, matched, matched > k, "" if top else NO_MATCH)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_catalog(entries: Iterable[ToolEntry]) -> str:
    """`name — brief` per line, sorted by name; a tool without a brief is listed by name alone."""
    lines = []
    for entry in sorted(entries, key=lambda e: e.name):
        brief = _one_line(entry.brief)
        lines.append(f"{entry.name} — {brief}" if brief else entry.name)
    return "\n".join(lines)
