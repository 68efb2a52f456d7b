"""tooldisclose ranking: stemming, search verbs, the unseen-word fallback, field weights, order.

Each test names the mutation it guards against.
"""

from __future__ import annotations

import pytest

from yagent.kernel.judge.tooldisclose import Catalog, Param, ToolEntry
from yagent.kernel.judge.tooldisclose import catalog as catalog_mod
from yagent.kernel.judge.tooldisclose.bm25 import (
    TYPO_LONGEST,
    TYPO_WEIGHT,
    UNSEEN_WEIGHT,
    Index,
    stem,
    words,
)


def tool(name: str, description: str = "", *params: Param) -> ToolEntry:
    return ToolEntry(name, "", description, params)


# --- stemming -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "group",
    [
        ("modify", "modified", "modifies"),
        ("copy", "copies", "copied"),
        ("apply", "applied", "applies"),
        ("deploy", "deployed", "deploys"),
    ],
)
def test_consonant_y_inflections_meet(group: tuple[str, ...]) -> None:
    # Mutation: drop the `y` -> `i` rule and `modify` no longer meets `modified`.
    assert len({stem(w) for w in group}) == 1


def test_vowel_y_is_kept() -> None:
    assert stem("deploy") == "deploy"
    assert stem("key") == "key"


# --- search verbs are words -----------------------------------------------------------------


def test_find_is_a_searchable_word() -> None:
    # Mutation: `find` back in the stop list ties both tools, and the tie goes to `a_lookup_user`.
    assert "find" in words("find the user")
    catalog = Catalog([tool("b_find_user", "Find a user."), tool("a_lookup_user", "A user.")])
    assert catalog.search("find the user", 1).names == ("b_find_user",)


# --- unseen-word fallback -------------------------------------------------------------------


def test_unseen_word_falls_back_on_indexed_words_with_its_head() -> None:
    docs = [[("compare the schemas", 1.0)], [("drop the table", 1.0)]]
    # Mutation: remove the fallback and a word no document contains scores nothing (Porter2
    # leaves `comparison` apart from `compare`).
    assert Index(docs).scores("comparison")[0] == 0.0
    with_fallback = Index(docs, unseen_prefix=5)
    assert with_fallback.terms("comparison") == {"compar": UNSEEN_WEIGHT}
    scores = with_fallback.scores("comparison")
    assert scores[0] > 0.0
    assert scores[1] == 0.0


def test_known_words_are_never_expanded() -> None:
    # Mutation: expand every query word and `commit` also pulls in `committer` (its stem
    # `committ` shares the head `commi`).
    index = Index([[("commit", 1.0)], [("committer", 1.0)]], unseen_prefix=5)
    assert index.terms("commit") == {"commit": 1.0}
    assert index.scores("commit")[1] == 0.0


def test_short_unseen_words_are_not_expanded() -> None:
    index = Index([[("deployment", 1.0)]], unseen_prefix=5)
    assert index.terms("depl") == {}
    assert index.scores("depl") == [0.0]


def test_an_exact_match_outweighs_a_fallback_match() -> None:
    # Mutation: give fallback matches full weight and both queries score alike.
    index = Index([[("compare log", 1.0)], [("drop table", 1.0)]], unseen_prefix=5)
    assert index.scores("compare")[0] > index.scores("comparison")[0] > 0.0


def test_catalog_search_uses_the_fallback_and_stays_deterministic() -> None:
    entries = [
        tool("db_diff_table", "Compare the columns of two tables."),
        tool("db_drop_table", "Drop a table."),
        tool("db_compare_index", "Compare two indexes."),
    ]
    result = Catalog(entries).search("comparisons", 5)
    assert set(result.names) == {"db_diff_table", "db_compare_index"}
    assert result.names == Catalog(reversed(entries)).search("comparisons", 5).names
    assert catalog_mod.UNSEEN_PREFIX > 0


# --- field weights and ties -----------------------------------------------------------------


def test_description_outweighs_parameter_description() -> None:
    # Same word once in a description, once in a parameter's description; the description one
    # sorts last by name, so equal weights (the mutation) would put it second.
    in_desc = tool("zz_rotate", "Rotate credentials.", Param("target", False, "What to act on."))
    in_param = tool("aa_other", "Act on a target.", Param("target", False, "Credentials."))
    assert Catalog([in_desc, in_param]).search("credentials", 2).names == ("zz_rotate", "aa_other")


def test_parameter_name_outweighs_parameter_description() -> None:
    by_name = tool("zz_tag", "Do it.", Param("label", False, "A value."))
    by_desc = tool("aa_tag", "Do it.", Param("value", False, "A label."))
    assert Catalog([by_name, by_desc]).search("label", 2).names == ("zz_tag", "aa_tag")


def test_fallback_ties_are_ordered_by_name() -> None:
    twins = [tool(n, "Compare the records.") for n in ("rec_charlie", "rec_alpha", "rec_bravo")]
    result = Catalog(twins).search("comparison", 3)
    assert result.names == ("rec_alpha", "rec_bravo", "rec_charlie")
    assert len({hit.score for hit in result.hits}) == 1


# --- a split word read against an index is one concept ---------------------------------------


def test_a_compound_the_index_knows_is_one_word_of_a_query() -> None:
    known = {"github"}.__contains__
    # Mutation: keep the parts of a known compound and `GitHub` counts three times (`github`,
    # `git`, `hub`), `git` pulling in every local-git tool.
    assert words("GitHub", known) == ["github"]
    # The index side keeps every piece, so a query of either spelling meets it.
    assert words("GitHub") == ["github", "git", "hub"]


def test_a_compound_the_index_does_not_know_is_its_parts() -> None:
    # Mutation: keep the unknown whole too and it falls back on unrelated words sharing its head.
    assert words("parseConfig", {"pars", "config"}.__contains__) == ["pars", "config"]


# --- one typo away ----------------------------------------------------------------------------


def test_a_word_one_typo_away_matches_at_the_typo_weight() -> None:
    index = Index([[("kubernetes pods", 1.0)], [("database tables", 1.0)]], typo_length=5)
    # A swapped pair, a dropped letter, an added letter, a changed letter.
    for typo in ("kuberentes", "kubrnetes", "kubernettes", "kubernites"):
        # Mutation: no typo lookup and the word falls to nothing (no prefix fallback here).
        assert index.terms(typo) == {stem("kubernetes"): TYPO_WEIGHT}, typo
    assert Index([[("kubernetes pods", 1.0)]]).terms("kuberentes") == {}


def test_a_typo_match_comes_before_the_prefix_fallback() -> None:
    docs = [[("pipeline runs", 1.0)], [("pipe fitting", 1.0)]]
    index = Index(docs, unseen_prefix=4, typo_length=5)
    # Mutation: prefix first and `piplines` (head `pipl`) finds nothing, or `pipe…` words.
    assert index.terms("piplines") == {stem("pipelines"): TYPO_WEIGHT}
    assert TYPO_WEIGHT > UNSEEN_WEIGHT


def test_known_and_short_words_are_never_corrected() -> None:
    index = Index([[("stripe payments", 1.0)], [("strip whitespace", 1.0)]], typo_length=5)
    # Mutation: correct known words too and `strip` also matches `stripe`.
    assert index.terms("strip") == {"strip": 1.0}
    assert Index([[("node", 1.0)]], typo_length=5).terms("nods") == {}


def test_very_long_words_are_not_corrected() -> None:
    # A word's one-letter deletions cost its length squared: past `TYPO_LONGEST` letters none
    # are tried. Mutation: drop the cap and this 40-letter word matches its one-letter sibling.
    word = "a" * 40
    index = Index([[(word + "b", 1.0)]], typo_length=5)
    assert TYPO_LONGEST < 40
    assert index.terms(word) == {}


def test_the_catalog_corrects_typos() -> None:
    catalog = Catalog(
        [tool("ci_list_pipelines", "List CI pipelines."), tool("ci_list_jobs", "List CI jobs.")]
    )
    assert catalog_mod.TYPO_LENGTH > 0
    assert catalog.search("show recent piplines", 1).names == ("ci_list_pipelines",)
