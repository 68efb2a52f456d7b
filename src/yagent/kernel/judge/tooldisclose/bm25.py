"""bm25: the one tokenizer and scorer that tool search and skill relevance share.

Contract:
- `words(text)` lowercases, splits on anything that is not a letter or digit, splits camelCase /
  PascalCase runs into their parts (keeping the whole run too, so `GitHub` matches `github`),
  drops a small set of English function words and applies a light suffix stemmer (plurals,
  `-ing`, `-ed`, final `-e`, final consonant + `y` read as `i`) so `files`/`file`,
  `creating`/`create` and `modify`/`modified`/`modifies` meet. Deterministic and pure. `find` is a
  word (tools are described as "Find …"); `get`, `show`, `make` stay function words: they are
  said of almost any request.
- `Index` scores documents made of weighted fields with BM25 (k1, b) where a field's weight
  multiplies its term frequencies and length (the usual BM25F simplification). Scores depend only
  on the documents' contents and their order in the sequence the caller gave; callers that want
  order-independence (the catalog) pass documents in a canonical order.
- A document with no query word scores exactly 0.0 — unless the index was built with
  `unseen_prefix=n` (n > 0): then a query word of at least n characters that no document contains
  stands for the indexed words sharing its first n characters, each at `UNSEEN_WEIGHT` of a real
  match (`modification` finds `modify`; a typo keeps its head). Words the index knows are never
  expanded, so an exact match always outweighs a fallback one of the same word.
It knows no vocabulary of any domain: no synonyms, no tool or skill names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

STOPWORDS: frozenset[str] = frozenset(
    """
    a an the to of in on for with from by and or is are was be been this that these those it its
    my me i we our us you your can could please want wants need needs some any into at as do does
    did how what which when where who whom will would should shall there their them then than so
    just also about up out via let lets get got give show tell make sure one all every each
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_RUN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z0-9]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
_VOWEL = re.compile(r"[aeiouy]")
_DOUBLE = frozenset("bdgmnprt")
# What a prefix-fallback match weighs against a real one (see `Index`).
UNSEEN_WEIGHT = 0.3


def stem(word: str) -> str:
    """A light English suffix stemmer; applied to both sides, so only consistency matters."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] in _DOUBLE:
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    elif word.endswith("y") and len(word) > 3 and word[-2] not in "aeiouy":
        word = word[:-1] + "i"
    return word


def words(text: str) -> list[str]:
    """The searchable words of `text`, in order (duplicates kept: they are term frequency)."""
    out: list[str] = []
    for run in _RUN.findall(text):
        parts = _CAMEL.findall(run) if run.isascii() else []
        tokens = [run.lower()]
        if len(parts) > 1:
            tokens.extend(part.lower() for part in parts)
        out.extend(stem(t) for t in tokens if t not in STOPWORDS)
    return out


class Index:
    """BM25 over documents of weighted fields: `docs[i]` is a sequence of `(text, weight)`."""

    __slots__ = ("_avg", "_b", "_df", "_heads", "_k1", "_lengths", "_n", "_prefix", "_tf")

    def __init__(
        self,
        docs: Sequence[Sequence[tuple[str, float]]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        unseen_prefix: int = 0,
    ) -> None:
        self._k1, self._b, self._prefix = k1, b, unseen_prefix
        self._tf: list[dict[str, float]] = []
        self._lengths: list[float] = []
        self._df: dict[str, int] = {}
        for fields in docs:
            tf: dict[str, float] = {}
            length = 0.0
            for text, weight in fields:
                for word in words(text):
                    tf[word] = tf.get(word, 0.0) + weight
                    length += weight
            self._tf.append(tf)
            self._lengths.append(length)
            for word in tf:
                self._df[word] = self._df.get(word, 0) + 1
        self._n = len(self._tf)
        self._avg = (sum(self._lengths) / self._n) if self._n else 0.0
        self._heads: dict[str, list[str]] = {}
        if unseen_prefix > 0:
            for word in sorted(self._df):
                if len(word) >= unseen_prefix:
                    self._heads.setdefault(word[:unseen_prefix], []).append(word)

    def __len__(self) -> int:
        return self._n

    def idf(self, word: str) -> float:
        df = self._df.get(word, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def terms(self, query: str) -> dict[str, float]:
        """The indexed words `query` stands for, each with its query weight (1.0 or fallback)."""
        out: dict[str, float] = {}
        for word in dict.fromkeys(words(query)):
            if word in self._df:
                out[word] = 1.0
            elif self._prefix and len(word) >= self._prefix:
                for near in self._heads.get(word[: self._prefix], ()):
                    out.setdefault(near, UNSEEN_WEIGHT)
        return out

    def scores(self, query: str) -> list[float]:
        """One score per document, aligned with the documents given; 0.0 where nothing matched."""
        out = [0.0] * self._n
        if not self._avg:
            return out
        weights = [(term, w * self.idf(term)) for term, w in self.terms(query).items()]
        for i, tf in enumerate(self._tf):
            norm = self._k1 * (1.0 - self._b + self._b * self._lengths[i] / self._avg)
            total = 0.0
            for term, idf in weights:
                freq = tf.get(term, 0.0)
                if freq:
                    total += idf * freq * (self._k1 + 1.0) / (freq + norm)
            out[i] = total
        return out
