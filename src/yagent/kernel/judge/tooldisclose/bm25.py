"""bm25: the one tokenizer and scorer that tool search and skill relevance share.

Contract:
- `words(text)` lowercases and splits on anything that is not a letter or digit (so snake_case,
  kebab-case and dotted names fall apart), splits camelCase / PascalCase runs into their parts
  and a trailing digit run off a word (`route53` → `route`, `53`), keeping the whole run too (so
  `GitHub` matches `github`); an upper-case acronym's plural `s` is dropped (`PRs` → `pr`) and an
  English clitic (`what's`, `don't`, `we'll`) leaves no word behind. Given `known` (a query read
  against an index) a run that splits is one concept: its whole word alone when the index knows
  it (`GitHub` is `github`, not also `git` and `hub`), else its parts alone. It drops a small set of
  English function words and stems the rest with Porter2 (`stemmer`): `deployment`/`deployed`,
  `configuration`/`configure`, `modify`/`modified` meet. Deterministic and pure. `find` is a
  word (tools are described as "Find …"); `get`, `show`, `make` stay function words: they are
  said of almost any request.
- `Index` scores documents made of weighted fields with BM25 (k1, b) where a field's weight
  multiplies its term frequencies and length (the usual BM25F simplification). Scores depend only
  on the documents' contents and their order in the sequence the caller gave; callers that want
  order-independence (the catalog) pass documents in a canonical order.
- A query is read as groups of terms, one group per concept: by default each query word alone;
  an `expand` reader given to the index (the catalog passes `vocab.Vocabulary.read`) may add
  weighted alternatives; it is told which words the index holds. A group scores what its best
  term scores in that document (weight × the group's idf × saturated term frequency), so a
  concept counts once however many of its alternatives a tool uses. The group's idf is that of
  the word the user typed when the index knows it (else its members' smallest), so the typed
  word (weight 1.0) outweighs an alternative of lower weight even where that one is rarer.
- A document with no query term scores exactly 0.0 — unless the index was built with
  `unseen_prefix=n` (n > 0): then a query word of at least n characters that no document contains
  stands for the indexed words sharing its first n characters, each at `UNSEEN_WEIGHT` of a real
  match (`comparison` finds `compare`; a typo keeps its head). Words the index knows are never
  expanded, so an exact match always outweighs a fallback one of the same word. Built with
  `typo_length=n` (n > 0), an unknown alphabetic query word of n to `TYPO_LONGEST` letters stands
  for the indexed words one typo away from it (a letter added, dropped or changed, two
  neighbours swapped: the two share a one-letter deletion) at `TYPO_WEIGHT`; the prefix fallback
  applies only when no such word exists.
It knows no vocabulary of any domain: no synonyms of its own (a caller passes `expand`), no tool
or skill names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol

from yagent.kernel.judge.tooldisclose.stemmer import stem

STOPWORDS: frozenset[str] = frozenset(
    """
    a an the to of in on for with from by and or is are was be been this that these those it its
    my me i we our us you your can could please want wants need needs some any into at as do does
    did how what which when where who whom will would should shall there their them then than so
    just also about up out via let lets get got give show tell make sure one all every each
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_CLITIC = re.compile(r"(?<=[^\W_])(?:n['\u2019]t|['\u2019](?:s|re|ve|ll|d|m|t))\b", re.IGNORECASE)
_RUN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z0-9]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,})s$")
_TRAILING_DIGITS = re.compile(r"([a-z]{3,})([0-9]+)$")
# What a prefix-fallback match weighs against a real one (see `Index`).
UNSEEN_WEIGHT = 0.3
# What a match one typo away weighs against a real one (see `Index`); words longer than
# `TYPO_LONGEST` letters are not corrected (a word's one-letter deletions cost its length squared).
TYPO_WEIGHT = 0.8
TYPO_LONGEST = 24

Group = dict[str, float]


@lru_cache(maxsize=16384)
def _pieces(run: str) -> tuple[str, ...]:
    """The lowercase words of one letter-digit run: the run itself, then its parts if any."""
    plural = _ACRONYM_PLURAL.fullmatch(run) if run.isascii() else None
    if plural:
        run = plural.group(1)
    lower = run.lower()
    if not run.isascii():
        return (lower,)
    parts = [p.lower() for p in _CAMEL.findall(run)]
    if len(parts) == 1:
        digits = _TRAILING_DIGITS.fullmatch(lower)
        parts = list(digits.groups()) if digits else []
    return (lower, *parts) if len(parts) > 1 else (lower,)


def _one_deleted(word: str) -> set[str]:
    """`word` and every string one letter shorter: two words sharing one are one typo apart
    (an added, dropped or changed letter, or two swapped neighbours)."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def words(text: str, known: Callable[[str], bool] | None = None) -> list[str]:
    """The searchable words of `text`, in order (duplicates kept: they are term frequency).

    Given `known` (a query read against an index), a run that splits into parts is one concept:
    its whole word alone when the index knows it (`GitHub` is `github`, not also `git` and
    `hub`), else its parts alone (`parseConfig` is `pars`, `config`).
    """
    out: list[str] = []
    for run in _RUN.findall(_CLITIC.sub(" ", text)):
        pieces = _pieces(run)
        if known is not None and len(pieces) > 1:
            pieces = pieces[:1] if known(stem(pieces[0])) else pieces[1:]
        out.extend(stem(t) for t in pieces if t not in STOPWORDS)
    return out


class Analyser(Protocol):
    """How text becomes words: `words` and anything with its signature."""

    def __call__(self, text: str, known: Callable[[str], bool] | None = None) -> list[str]: ...


def single_words(query: str, known: Callable[[str], bool]) -> list[Group]:
    """The default reading of a query: each of its words its own group, nothing added."""
    return [{w: 1.0} for w in dict.fromkeys(words(query, known))]


# How a query is read into groups: the query and a test of whether the index holds a word.
Reader = Callable[[str, Callable[[str], bool]], list[Group]]


class Index:
    """BM25 over documents of weighted fields: `docs[i]` is a sequence of `(text, weight)`."""

    __slots__ = (
        "_avg",
        "_b",
        "_df",
        "_expand",
        "_heads",
        "_k1",
        "_n",
        "_norm",
        "_postings",
        "_prefix",
        "_typo",
        "_typos",
    )

    def __init__(
        self,
        docs: Sequence[Sequence[tuple[str, float]]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        unseen_prefix: int = 0,
        typo_length: int = 0,
        expand: Reader = single_words,
    ) -> None:
        self._k1, self._b, self._prefix, self._expand = k1, b, unseen_prefix, expand
        self._typo = typo_length
        tfs: list[dict[str, float]] = []
        lengths: list[float] = []
        for fields in docs:
            tf: dict[str, float] = {}
            length = 0.0
            for text, weight in fields:
                for word in words(text):
                    tf[word] = tf.get(word, 0.0) + weight
                    length += weight
            tfs.append(tf)
            lengths.append(length)
        self._n = len(tfs)
        self._avg = (sum(lengths) / self._n) if self._n else 0.0
        # BM25's length part of each document, computed once: k1 * (1 - b + b * len / avg).
        self._norm = [
            k1 * (1.0 - b + b * length / self._avg) if self._avg else k1 for length in lengths
        ]
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, tf in enumerate(tfs):
            for word, freq in tf.items():
                self._postings.setdefault(word, []).append((i, freq))
        self._df = {word: len(docs_of) for word, docs_of in self._postings.items()}
        self._heads: dict[str, list[str]] = {}
        if unseen_prefix > 0:
            for word in sorted(self._df):
                if len(word) >= unseen_prefix:
                    self._heads.setdefault(word[:unseen_prefix], []).append(word)

        self._typos: dict[str, list[str]] = {}
        if typo_length > 0:
            for word in sorted(self._df):
                if typo_length <= len(word) <= TYPO_LONGEST and word.isalpha():
                    for key in _one_deleted(word):
                        self._typos.setdefault(key, []).append(word)

    def _near(self, word: str) -> tuple[list[str], float]:
        """What an unknown `word` stands for: the indexed words one typo away from it, else the
        ones sharing its head (the prefix fallback), with the weight of such a match."""
        if self._typo and self._typo <= len(word) <= TYPO_LONGEST and word.isalpha():
            near = sorted({w for key in _one_deleted(word) for w in self._typos.get(key, ())})
            if near:
                return near, TYPO_WEIGHT
        if self._prefix and len(word) >= self._prefix:
            return self._heads.get(word[: self._prefix], []), UNSEEN_WEIGHT
        return [], 0.0

    def __len__(self) -> int:
        return self._n

    def knows(self, word: str) -> bool:
        """Whether some document holds `word` (an analysed word)."""
        return word in self._df

    def idf(self, word: str) -> float:
        df = self._df.get(word, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def groups(self, query: str) -> list[tuple[float, Group]]:
        """The query's concepts: each an idf and its indexed words with their query weights.

        A group's idf is its head's (the word the user typed) when the index knows it, else the
        smallest of its members': an alternative is never worth more than the word it stands in
        for, however rare it is.
        """
        out: list[tuple[float, Group]] = []
        for group in self._expand(query, self._df.__contains__):
            known: Group = {}
            for word, weight in group.items():
                if word in self._df:
                    known[word] = max(known.get(word, 0.0), weight)
                    continue
                near, factor = self._near(word)
                for other in near:
                    if other not in known:
                        known[other] = weight * factor
            if not known:
                continue
            head = next(iter(group))
            idf = self.idf(head) if head in self._df else min(self.idf(w) for w in known)
            out.append((idf, known))
        return out

    def terms(self, query: str) -> dict[str, float]:
        """Every indexed word `query` stands for, with its best query weight."""
        out: dict[str, float] = {}
        for _, group in self.groups(query):
            for word, weight in group.items():
                out[word] = max(out.get(word, 0.0), weight)
        return out

    def scores(self, query: str) -> list[float]:
        """One score per document, aligned with the documents given; 0.0 where nothing matched."""
        return self.score_groups(self.groups(query))

    def score_groups(self, groups: Sequence[tuple[float, Group]]) -> list[float]:
        """`scores` of a query already read into `groups`."""
        out = [0.0] * self._n
        if not self._avg:
            return out
        k1, norm = self._k1, self._norm
        for idf, group in groups:
            best: dict[int, float] = {}
            for word, weight in group.items():
                factor = weight * idf * (k1 + 1.0)
                for i, freq in self._postings[word]:
                    score = factor * freq / (freq + norm[i])
                    if score > best.get(i, 0.0):
                        best[i] = score
            for i, score in best.items():
                out[i] += score
        return out
