"""skilldisclose: deterministically pick the skills to show the model.

Contract — three trigger signals of different strength, never blended into one another:
- named explicitly ⇒ `NAMED` (1000); a resource the task touches matches one of the skill's
  resources ⇒ `RESOURCE` (100, once, however many match); the task text is relevant to the
  skill's name, description and tags ⇒ BM25 mapped into [0, `RELEVANCE_CAP`), `RELEVANCE_CAP` <
  `RESOURCE`. So no amount of relevance reaches a resource match, and nothing but a name reaches
  `NAMED`: what the user said outright always wins.
- A skill is selected when its score is above 0; selected skills are ordered by score, then by
  name (never by the order the host listed them, nor by directory or dict order).
- `budget` caps how many skills are returned; what it cut is explicit (`truncated`, `dropped`).
- An empty selection always carries a `reason` and `checked` tells "nothing was checked" (no
  skills installed, or no signal given) apart from "checked, nothing relevant" — to a caller
  these look alike, yet the first means the model never learns the capability exists.
- Named skills that do not exist are reported (`unknown_named`), never silently ignored.
Resource patterns: exact ids, or path globs where `**` spans directories, `*` and `?` stay
within one path segment, and a pattern without `/` also matches a path's last segment. What a
skill contains and how it is shown is the host's business.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from yagent.kernel.judge.tooldisclose.bm25 import Index, words

NAMED = 1000.0
RESOURCE = 100.0
RELEVANCE_CAP = 99.0
# BM25 score at which relevance reaches half of the cap (a seam: hosts with longer skill texts
# may patch it). The mapping s -> cap * s / (s + half) is monotonic and stays below the cap.
RELEVANCE_HALF = 4.0


class SkillDiscloseError(Exception):
    """Base of the refusals of `yagent.kernel.judge.skilldisclose`."""


class DuplicateSkillError(SkillDiscloseError, ValueError):
    """Two skills share a name: which one the user named would be a guess."""


class Empty(enum.StrEnum):
    """Why a selection is empty (`NOT_EMPTY` when it is not)."""

    NOT_EMPTY = "not_empty"
    NO_SKILLS = "no_skills"
    NO_SIGNALS = "no_signals"
    NOTHING_RELEVANT = "nothing_relevant"
    BUDGET = "budget"


_UNCHECKED = frozenset({Empty.NO_SKILLS, Empty.NO_SIGNALS})


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill as the selector sees it."""

    name: str
    description: str = ""
    resources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise SkillDiscloseError("a skill needs a non-empty name")


@dataclass(frozen=True, slots=True)
class Pick:
    """One selected skill and why: the score is the sum of the three parts."""

    skill: Skill
    score: float
    named: bool
    matched: tuple[str, ...]
    relevance: float

    @property
    def name(self) -> str:
        return self.skill.name


@dataclass(frozen=True, slots=True)
class Selection:
    """The chosen skills, best first, with what was cut and why the result may be empty."""

    picks: tuple[Pick, ...]
    truncated: bool = False
    dropped: tuple[str, ...] = ()
    unknown_named: tuple[str, ...] = ()
    empty: Empty = Empty.NOT_EMPTY
    reason: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.picks)

    @property
    def checked(self) -> bool:
        """False when nothing was checked at all (no skills, or no signal to check against)."""
        return self.empty not in _UNCHECKED


@lru_cache(maxsize=512)
def _glob(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            char = pattern[i]
            out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
            i += 1
    return re.compile("".join(out))


def _clean(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def resource_matches(pattern: str, resource: str) -> bool:
    """Whether a touched `resource` matches a skill's resource `pattern` (see module contract)."""
    pattern, resource = _clean(pattern), _clean(resource)
    if not pattern or not resource:
        return False
    if pattern == resource:
        return True
    if _glob(pattern).fullmatch(resource):
        return True
    return "/" not in pattern and bool(_glob(pattern).fullmatch(resource.rsplit("/", 1)[-1]))


def relevance(score: float) -> float:
    """A raw BM25 score mapped into [0, RELEVANCE_CAP)."""
    if not score > 0.0:  # also NaN: a score that cannot be read is no relevance
        return 0.0
    if math.isinf(score):
        return RELEVANCE_CAP
    return min(RELEVANCE_CAP * score / (score + RELEVANCE_HALF), RELEVANCE_CAP)


def _unique(skills: Iterable[Skill]) -> tuple[Skill, ...]:
    by_name: dict[str, Skill] = {}
    for skill in skills:
        if skill.name in by_name:
            raise DuplicateSkillError(f"skill {skill.name!r} appears twice")
        by_name[skill.name] = skill
    return tuple(by_name.values())


def _empty_reason(empty: Empty, checked: int, unknown: Sequence[str]) -> str:
    if empty is Empty.NO_SKILLS:
        return "nothing checked: no skills are installed"
    if empty is Empty.NO_SIGNALS:
        return (
            f"nothing checked: {checked} skills are installed but no skill was named, no "
            "resource was touched and the task text has no searchable words"
        )
    if empty is Empty.BUDGET:
        return "relevant skills were found but the budget allows none of them (see dropped)"
    text = f"checked {checked} skills against the task: none is named, matches or is relevant"
    if unknown:
        text += f"; named skills that do not exist: {', '.join(unknown)}"
    return text


def select(
    skills: Iterable[Skill],
    *,
    named: Iterable[str] = (),
    touched_resources: Sequence[str] = (),
    task_text: str = "",
    budget: int,
) -> Selection:
    """Choose the skills to show (see the module contract)."""
    if budget < 0:
        raise ValueError(f"select: budget must be 0 or more, got {budget}")
    catalog = _unique(skills)
    wanted = {n for n in named if n}
    unknown = tuple(sorted(wanted - {s.name for s in catalog}))
    touched = [r for r in touched_resources if r]
    has_text = bool(words(task_text))
    if not catalog:
        return Selection(
            (),
            unknown_named=unknown,
            empty=Empty.NO_SKILLS,
            reason=_empty_reason(Empty.NO_SKILLS, 0, unknown),
        )
    if not wanted and not touched and not has_text:
        return Selection(
            (), empty=Empty.NO_SIGNALS, reason=_empty_reason(Empty.NO_SIGNALS, len(catalog), ())
        )
    raw = (
        Index(
            [((s.name, 2.0), (s.description, 1.0), (" ".join(s.tags), 2.0)) for s in catalog]
        ).scores(task_text)
        if has_text
        else [0.0] * len(catalog)
    )
    picks: list[Pick] = []
    for skill, score in zip(catalog, raw, strict=True):
        is_named = skill.name in wanted
        matched = tuple(r for r in touched if any(resource_matches(p, r) for p in skill.resources))
        rel = relevance(score)
        total = (NAMED if is_named else 0.0) + (RESOURCE if matched else 0.0) + rel
        if total > 0.0:
            picks.append(Pick(skill, total, is_named, matched, rel))
    picks.sort(key=lambda p: (-p.score, p.name))
    kept, cut = tuple(picks[:budget]), tuple(p.name for p in picks[budget:])
    if kept:
        return Selection(kept, bool(cut), cut, unknown)
    empty = Empty.BUDGET if cut else Empty.NOTHING_RELEVANT
    return Selection(
        (), bool(cut), cut, unknown, empty, _empty_reason(empty, len(catalog), unknown)
    )
