"""search: a catalog's search index — BM25 over its entries' fields, read with the developer
vocabulary and weighed by intent and named servers — built once, at a catalog's first search.

Contract:
- `SearchIndex(fields, actions_of, tags, settings)` is built from what the `Catalog` captured
  when it was constructed (each entry's weighted fields, its name / brief / description for the
  intent of `intent.tool_action`, its tags, and the seams' values then: `Settings`), so patching
  a seam after a catalog was built changes nothing of that catalog, whenever its index is built.
- `ranked(query, k)` is the catalog's scoring (its module contract says what the score means):
  the `k` best `(-score, name, position)` tuples in `catalog.order_key` order and how many entries
  scored above 0; `None` when the query has no searchable words.
- Importing this module loads the query readers (`phrasing`, `vocab`, `intent`, `bm25`): the
  catalog imports it at its first search, so a run that never searches loads none of them.
It holds no entries of its own and no tool implementations.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from typing import NamedTuple

from yagent.kernel.judge.tooldisclose.bm25 import Group, Index, single_words, words
from yagent.kernel.judge.tooldisclose.intent import Action, mismatch, query_intent, tool_action
from yagent.kernel.judge.tooldisclose.phrasing import mark
from yagent.kernel.judge.tooldisclose.vocab import Vocabulary

# A token holding a slash, a dot or a colon is a value (a path, a slug, a URL, a file name): a
# server's name inside it (`kubernetes/kubernetes`) does not name the server.
# (Judged per whitespace-separated token, so the cost stays linear in the request's length.)
_VALUE = re.compile(r"[/:]|\w\.\w")

Fields = tuple[tuple[str, float], ...]  # an entry's searchable texts, each with its weight


class Settings(NamedTuple):
    """The catalog module's seams, as they were when a catalog was constructed."""

    length_norm: float
    unseen_prefix: int
    typo_length: int
    use_vocabulary: bool
    intent_weight: float
    server_weight: float


class SearchIndex:
    """The index of one catalog's entries, in the catalog's (name-sorted) order."""

    __slots__ = ("_index", "_intent_factors", "_names", "_server_weight", "_servers")

    def __init__(
        self,
        names: Sequence[str],
        fields: Sequence[Fields],
        texts: Sequence[tuple[str, str, str]],
        tags: Sequence[tuple[str, ...]],
        settings: Settings,
    ) -> None:
        self._names = tuple(names)
        actions = [tool_action(*text) for text in texts]
        # What each entry keeps of its score under each intent of a request.
        self._intent_factors = {
            intent: [settings.intent_weight if mismatch(intent, a) else 1.0 for a in actions]
            for intent in Action
        }
        self._servers: dict[str, frozenset[int]] = {}
        for i, entry_tags in enumerate(tags):
            for tag in entry_tags:
                for word in words(tag):
                    self._servers[word] = self._servers.get(word, frozenset()) | {i}
        self._server_weight = settings.server_weight
        self._index = Index(
            fields,
            b=settings.length_norm,
            unseen_prefix=settings.unseen_prefix,
            typo_length=settings.typo_length,
            expand=Vocabulary(words).read if settings.use_vocabulary else single_words,
        )

    def _named_servers(self, query: str, groups: list[tuple[float, Group]]) -> set[int]:
        """The entries whose tags the request names as a word of its own (catalog contract)."""
        own = " ".join(token for token in query.split() if not _VALUE.search(token))
        typed = set(words(own, self._index.knows))
        named: set[int] = set()
        for _, group in groups:
            if next(iter(group)) not in typed:
                continue
            for word, weight in group.items():
                if weight >= 1.0:
                    named |= self._servers.get(word, frozenset())
        return named

    def ranked(self, query: str, k: int) -> tuple[list[tuple[float, str, int]], int] | None:
        """The `k` best `(-score, name, position)`, and how many scored; None: no words."""
        if not words(query):
            return None
        factors = self._intent_factors[query_intent(mark(query)[0])]
        groups = self._index.groups(query)
        named = self._named_servers(query, groups)
        names = self._names
        weight = self._server_weight
        # `(-score, name)` is `catalog.order_key` on plain tuples: the catalog builds a `Hit`
        # only for the `k` it returns.
        scored = [
            (-(score * factors[i] * (weight if i in named else 1.0)), names[i], i)
            for i, score in enumerate(self._index.score_groups(groups))
            if score > 0.0
        ]
        return heapq.nsmallest(k, scored), len(scored)
