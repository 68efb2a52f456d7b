"""tooldisclose: progressive tool disclosure — a compact catalog and deterministic search in
exchange for full schemas — plus the execution gate that makes disclosure binding.

Contract (details in each module):
- `catalog`: immutable, name-sorted `Catalog` of `ToolEntry`s (duplicates refused) with BM25
  `search(query, k)` whose order never depends on input order (words: `bm25` with the Porter2
  `stemmer`, one-typo correction; queries read with `phrasing` and the general developer
  vocabulary of `vocab`; scores weighed by `intent` — read vs write — and by the servers a
  request names); `render_catalog` lists `name — brief` lines for the model. The index
  (`search`) is built at a catalog's first search, once: listing and gating tools loads neither
  it nor the modules that read a query.
- `disclosure`: a run's `Disclosure` — hot tools plus tools loaded on demand; `load(names,
  budget)` says what it added, what was already there, what the budget trimmed and what is
  unknown; snapshot / restore so a resumed run does not load again.
- `gate`: `Gate.check(name)` is the strict dichotomy — in the catalog but not loaded ⇒ retryable
  `NOT_LOADED` denial that loads it; not in the catalog ⇒ `FORBIDDEN`, never loaded; visible ⇒
  allow. `Stage` puts it in an `invoke.Chain`.
- `callform`: the program-facing signature of a tool (`ident(a, b?)`, via `toolname`) and
  positional → JSON arguments where omitted optionals are absent.
Refuses: duplicate tools, always-visible tools outside the catalog, colliding identifiers,
unreadable snapshots. Leaves to the host: the schemas' JSON, the tools that let the model search
and load, which tools are hot, and the tools themselves.
"""

from yagent.kernel.judge.tooldisclose.callform import (
    CallForm,
    args_from_positional,
    call_form,
    call_forms,
)
from yagent.kernel.judge.tooldisclose.catalog import (
    Catalog,
    Hit,
    Param,
    SearchResult,
    ToolEntry,
    approx_size,
    render_catalog,
)
from yagent.kernel.judge.tooldisclose.disclosure import (
    UNLIMITED,
    Budget,
    Disclosure,
    LoadedSet,
    LoadResult,
)
from yagent.kernel.judge.tooldisclose.errors import (
    CallFormError,
    DuplicateToolError,
    IdentCollisionError,
    InvalidEntryError,
    SnapshotError,
    TooldiscloseError,
    UnknownToolError,
)
from yagent.kernel.judge.tooldisclose.gate import Gate, Stage

__all__ = [
    "UNLIMITED",
    "Budget",
    "CallForm",
    "CallFormError",
    "Catalog",
    "Disclosure",
    "DuplicateToolError",
    "Gate",
    "Hit",
    "IdentCollisionError",
    "InvalidEntryError",
    "LoadResult",
    "LoadedSet",
    "Param",
    "SearchResult",
    "SnapshotError",
    "Stage",
    "ToolEntry",
    "TooldiscloseError",
    "UnknownToolError",
    "approx_size",
    "args_from_positional",
    "call_form",
    "call_forms",
    "render_catalog",
]
