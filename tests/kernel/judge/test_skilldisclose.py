"""skilldisclose: named > resource > relevance; deterministic order; explicit trims and empties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.judge import skilldisclose as sd
from yagent.kernel.judge.skilldisclose import (
    DuplicateSkillError,
    Empty,
    Skill,
    SkillDiscloseError,
    relevance,
    resource_matches,
    select,
)

PDF = Skill("pdf-forms", "Fill and extract fields of PDF forms", ("**/*.pdf",), ("documents",))
SQL = Skill("sql-migrations", "Write reversible database schema migrations", ("migrations/**",))
TF = Skill("terraform", "Plan and apply infrastructure changes with Terraform", ("*.tf",))
DOCS = Skill("release-notes", "Draft release notes from merged changes", (), ("changelog",))
ALL = [PDF, SQL, TF, DOCS]

# A description made of hundreds of distinct words that the task repeats: raw BM25 for it is far
# above 1000, so only the cap keeps it below a named skill.
_MANY = " ".join(f"w{i}x" for i in range(3000))
GREEDY = Skill("greedy", _MANY + " terraform migrations pdf", ("*.tf", "migrations/**"))


def test_named_beats_resource_and_any_relevance() -> None:
    quiet = Skill("quiet", "nothing in common")
    selection = select(
        [GREEDY, quiet],
        named={"quiet"},
        touched_resources=["main.tf"],
        task_text=_MANY + " " + _MANY,
        budget=5,
    )
    assert selection.names == ("quiet", "greedy")
    top, second = selection.picks
    assert top.named
    assert top.score == sd.NAMED
    assert second.matched == ("main.tf",)
    assert second.score < sd.NAMED
    assert sd.RESOURCE < second.score < sd.RESOURCE + sd.RELEVANCE_CAP


def test_raw_relevance_would_beat_a_name_without_the_cap() -> None:
    # Guards the test above: the greedy skill's raw score really does exceed NAMED.
    index = sd.Index([((GREEDY.description, 1.0),)] + [(("filler words here", 1.0),)] * 3)
    assert index.scores(_MANY)[0] > sd.NAMED


def test_resource_match_beats_any_relevance() -> None:
    relevant = Skill("relevant", _MANY)
    selection = select(
        [relevant, SQL],
        touched_resources=["migrations/0007_add_users.sql"],
        task_text=_MANY,
        budget=5,
    )
    assert selection.names == ("sql-migrations", "relevant")
    assert selection.picks[0].score == sd.RESOURCE
    assert selection.picks[1].relevance < sd.RELEVANCE_CAP


def test_relevance_alone_selects_and_orders() -> None:
    selection = select(ALL, task_text="apply the terraform infrastructure plan", budget=5)
    assert selection.names[0] == "terraform"
    assert all(0 < p.relevance < sd.RELEVANCE_CAP for p in selection.picks)
    assert not selection.picks[0].named
    assert selection.picks[0].matched == ()
    assert selection.empty is Empty.NOT_EMPTY
    assert selection.reason == ""
    assert selection.checked


def test_same_score_is_ordered_by_name_whatever_the_input_order() -> None:
    twins = [Skill(n, "", ("*.csv",)) for n in ("zeta", "alpha", "mid")]
    for seed in range(5):
        shuffled = twins[:]
        random.Random(seed).shuffle(shuffled)
        selection = select(shuffled, touched_resources=["data/x.csv"], budget=5)
        assert selection.names == ("alpha", "mid", "zeta")


def test_budget_trimming_is_explicit() -> None:
    selection = select(ALL, named={"terraform", "pdf-forms", "release-notes"}, budget=2)
    assert selection.names == ("pdf-forms", "release-notes")
    assert selection.truncated
    assert selection.dropped == ("terraform",)


def test_budget_zero_drops_everything_and_says_so() -> None:
    selection = select(ALL, named={"terraform"}, budget=0)
    assert selection.picks == ()
    assert selection.truncated
    assert selection.dropped == ("terraform",)
    assert selection.empty is Empty.BUDGET
    assert selection.checked
    assert "budget" in selection.reason


def test_untruncated_selection_says_so() -> None:
    selection = select(ALL, named={"terraform"}, budget=3)
    assert not selection.truncated
    assert selection.dropped == ()


def test_nothing_installed_is_not_checked() -> None:
    selection = select([], named={"x"}, task_text="anything", budget=3)
    assert selection.empty is Empty.NO_SKILLS
    assert not selection.checked
    assert selection.unknown_named == ("x",)
    assert selection.reason.startswith("nothing checked")


@pytest.mark.parametrize("text", ["", "   ", "the of and"])
def test_no_signal_is_not_checked(text: str) -> None:
    selection = select(ALL, named=set(), touched_resources=["", ""], task_text=text, budget=3)
    assert selection.empty is Empty.NO_SIGNALS
    assert not selection.checked
    assert selection.reason.startswith("nothing checked")
    assert "4 skills" in selection.reason


def test_checked_and_nothing_relevant_is_distinct_from_not_checked() -> None:
    checked = select(
        ALL, named={"ghost"}, touched_resources=["src/app.py"], task_text="bake bread", budget=3
    )
    unchecked = select(ALL, task_text="", budget=3)
    assert checked.picks == unchecked.picks == ()
    assert checked.empty is Empty.NOTHING_RELEVANT
    assert checked.checked
    assert not unchecked.checked
    assert checked.reason != unchecked.reason
    assert checked.reason.startswith("checked 4 skills")
    assert "ghost" in checked.reason
    assert checked.unknown_named == ("ghost",)


def test_unknown_named_is_reported_alongside_picks() -> None:
    selection = select(ALL, named={"terraform", "nope"}, budget=3)
    assert selection.names == ("terraform",)
    assert selection.unknown_named == ("nope",)


def test_duplicate_skills_and_bad_input_are_refused() -> None:
    with pytest.raises(DuplicateSkillError):
        select([TF, TF], budget=1)
    with pytest.raises(SkillDiscloseError):
        Skill("  ")
    with pytest.raises(ValueError, match="budget"):
        select(ALL, budget=-1)


@pytest.mark.parametrize(
    ("pattern", "resource", "expected"),
    [
        ("db:orders", "db:orders", True),
        ("db:orders", "db:order", False),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "src/c.py", True),
        ("src/*.py", "src/a/c.py", False),
        ("src/*.py", "src/c.py", True),
        ("*.tf", "infra/prod/main.tf", True),
        ("*.tf", "main.tf.bak", False),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("./docs/**", "docs/guide/intro.md", True),
        ("migrations/**", "./migrations/0001.sql", True),
        ("**", "anything/at/all", True),
        ("a+b(c).md", "a+b(c).md", True),
        ("", "x", False),
        ("x", "", False),
    ],
)
def test_resource_matching(pattern: str, resource: str, expected: bool) -> None:
    assert resource_matches(pattern, resource) is expected


def test_relevance_mapping_is_monotonic_and_capped() -> None:
    assert relevance(0.0) == 0.0
    assert relevance(-3.0) == 0.0
    assert 0 < relevance(1.0) < relevance(2.0) < relevance(1e9) <= sd.RELEVANCE_CAP
    assert relevance(float("inf")) == sd.RELEVANCE_CAP
    assert relevance(float("nan")) == 0.0
    assert sd.RELEVANCE_CAP < sd.RESOURCE < sd.NAMED
    assert sd.RESOURCE + sd.RELEVANCE_CAP < sd.NAMED


_word = st.text(alphabet="abcdefgh", min_size=3, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_word, max_size=30), min_size=1, max_size=6),
    st.lists(_word, min_size=1, max_size=60),
    st.integers(min_value=0, max_value=5),
)
def test_a_named_skill_always_comes_first(
    descriptions: list[list[str]], task: list[str], pick: int
) -> None:
    skills = [Skill(f"s{i}", " ".join(d), ("**",)) for i, d in enumerate(descriptions)]
    chosen = skills[pick % len(skills)].name
    selection = select(
        skills, named={chosen}, touched_resources=["any/file"], task_text=" ".join(task), budget=10
    )
    assert selection.names[0] == chosen
    assert all(p.score < sd.NAMED for p in selection.picks[1:])


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_selection_does_not_depend_on_listing_order(rnd: random.Random) -> None:
    shuffled = [*ALL, GREEDY]
    rnd.shuffle(shuffled)
    kwargs = {
        "named": {"release-notes"},
        "touched_resources": ["infra/main.tf", "docs/a.pdf"],
        "task_text": "apply terraform migrations and fill the pdf form",
        "budget": 4,
    }
    baseline = select([*ALL, GREEDY], **kwargs)  # type: ignore[arg-type]
    again = select(shuffled, **kwargs)  # type: ignore[arg-type]
    assert [(p.name, p.score) for p in again.picks] == [(p.name, p.score) for p in baseline.picks]
    assert again.dropped == baseline.dropped


def test_nothing_relevant_without_unknown_names_lists_none() -> None:
    selection = select(ALL, touched_resources=["src/app.py"], budget=3)
    assert selection.empty is Empty.NOTHING_RELEVANT
    assert selection.unknown_named == ()
    assert "do not exist" not in selection.reason
