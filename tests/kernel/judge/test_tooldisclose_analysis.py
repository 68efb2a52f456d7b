"""tooldisclose analysis: the Porter2 stemmer, word splitting and the developer vocabulary.

Each test names the mutation it guards against.
"""

from __future__ import annotations

import pytest

from yagent.kernel.judge.tooldisclose import Catalog, ToolEntry, vocab
from yagent.kernel.judge.tooldisclose import catalog as catalog_mod
from yagent.kernel.judge.tooldisclose.bm25 import Index, words
from yagent.kernel.judge.tooldisclose.stemmer import stem


def tool(name: str, description: str = "") -> ToolEntry:
    return ToolEntry(name, "", description)


# --- stemming -------------------------------------------------------------------------------

# Porter2's own examples and a few of the catalog's words, as the Snowball reference stems them.
PORTER2 = [
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "tie"),
    ("cats", "cat"),
    ("agreed", "agre"),
    ("plastered", "plaster"),
    ("motoring", "motor"),
    ("sing", "sing"),
    ("troubled", "troubl"),
    ("sized", "size"),
    ("hopping", "hop"),
    ("falling", "fall"),
    ("hissing", "hiss"),
    ("filing", "file"),
    ("happy", "happi"),
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("news", "news"),
    ("relational", "relat"),
    ("conditional", "condit"),
    ("generalization", "general"),
    ("generously", "generous"),
    ("communication", "communic"),
    ("added", "add"),
    ("listing", "list"),
    ("deployments", "deploy"),
    ("repositories", "repositori"),
]


@pytest.mark.parametrize(("word", "expected"), PORTER2)
def test_porter2_stems(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    "group",
    [
        ("deploy", "deployment", "deployments", "deployed"),
        ("configure", "configuration", "configured"),
        ("validate", "validation", "validating"),
        ("list", "listing", "lists"),
        ("modify", "modification", "modified", "modifies"),
        ("notify", "notification", "notifications"),
    ],
)
def test_derivations_meet(group: tuple[str, ...]) -> None:
    # Mutation: a light suffix stripper leaves `deployment` and `configuration` apart, and
    # dropping the `ifi` rule leaves `modify` apart from `modification`.
    assert len({stem(w) for w in group}) == 1


@pytest.mark.parametrize("word", ["k8s", "ec2", "id", "über", "route53"])
def test_identifiers_short_and_foreign_words_are_kept(word: str) -> None:
    assert stem(word) == word


# --- splitting ------------------------------------------------------------------------------


def test_acronym_plural_is_one_word() -> None:
    # Mutation: camel splitting reads `PRs` as `P` + `Rs` and indexes junk words.
    assert words("open PRs and URLs") == ["open", "pr", "url"]


def test_clitics_leave_no_word_behind() -> None:
    # Mutation: split on the apostrophe and `what's` leaves a word `s` that matches `pod's`.
    assert words("what's the pod's status") == ["pod", "status"]
    assert words("don't") == []
    assert words("what\u2019s") == []


def test_snake_kebab_and_camel_case_split() -> None:
    assert words("list-open_issues") == ["list", "open", "issu"]
    assert set(words("pullNumber")) >= {"pull", "number"}


def test_trailing_digits_split_off_a_word() -> None:
    # Mutation: keep `route53` whole and "Route 53" never meets it.
    assert set(words("Route 53")) <= set(words("route53"))
    assert words("ec2") == ["ec2"]
    assert words("k8s") == ["k8s"]


# --- vocabulary -----------------------------------------------------------------------------


def test_every_vocabulary_phrase_has_searchable_words() -> None:
    # A phrase made only of function words would be a dead entry.
    for family in (*vocab.SAME, *vocab.RELATED):
        for phrase in family:
            assert words(phrase), (family, phrase)


def test_abbreviation_meets_its_phrase_both_ways() -> None:
    # Mutation: no vocabulary, and `PRs` / `pull requests` find nothing to tell the tools apart.
    catalog = Catalog([tool("a_list_issues", "List issues."), tool("b_list", "List open PRs.")])
    assert catalog.search("list pull requests", 1).names == ("b_list",)
    catalog = Catalog([tool("a_list", "List issues."), tool("b_list", "List pull requests.")])
    assert catalog.search("list open PRs", 1).names == ("b_list",)


def test_platform_abbreviation_meets_its_name() -> None:
    catalog = Catalog(
        [
            tool("a_restart", "Restart a Docker service."),
            tool("b_restart", "Restart a Kubernetes service."),
        ]
    )
    assert catalog.search("restart the k8s service", 1).names == ("b_restart",)


def test_related_verb_finds_a_tool() -> None:
    # Mutation: drop the `delete`/`remove` family and the tie goes to `files_copy`.
    catalog = Catalog([tool("files_copy", "Copy a file."), tool("files_delete", "Delete a file.")])
    assert catalog.search("remove a file", 1).names == ("files_delete",)


def test_the_word_typed_outweighs_a_related_word() -> None:
    # Mutation: give related words full weight and the tie goes to `a_delete_user`.
    catalog = Catalog(
        [tool("a_delete_user", "Delete a user."), tool("b_remove_user", "Remove a user.")]
    )
    assert catalog.search("remove user", 1).names == ("b_remove_user",)


def test_a_concept_counts_once() -> None:
    # Mutation: sum the alternatives of one query word instead of taking the best, and the tool
    # that lists every synonym outranks the one that says the word the user typed.
    catalog = Catalog(
        [
            tool("a_purge", "Delete, remove, drop, erase or wipe a record and its history."),
            tool("b_remove", "Remove a record and its history."),
        ]
    )
    assert catalog.search("remove record", 1).names == ("b_remove",)


def flat(query: str) -> set[str]:
    return {w for group in vocab.Vocabulary(words).expand(words(query)) for w in group}


def test_multi_word_phrases_match_longest_first() -> None:
    # `roll back` and `shut down` are phrases of their families.
    assert {"undo", "revert"} <= flat("roll back the release")
    assert "stop" in flat("shut down the box")
    # Mutation: match single words first and `drop-down` reads as `drop` (delete) + `down`.
    assert "dropdown" in flat("pick it from the drop-down")
    assert "delet" not in flat("pick it from the drop-down")


def test_index_without_vocabulary_reads_words_alone() -> None:
    index = Index([[("delete a file", 1.0)]])
    assert index.scores("remove a file")[0] > 0.0  # `file` matches
    assert index.terms("remove") == {}


def test_catalog_vocabulary_seam() -> None:
    entries = [tool("files_copy", "Copy a file."), tool("files_delete", "Delete a file.")]
    assert catalog_mod.USE_VOCABULARY
    try:
        catalog_mod.USE_VOCABULARY = False
        assert Catalog(entries).search("remove", 1).names == ()
    finally:
        catalog_mod.USE_VOCABULARY = True
    assert Catalog(entries).search("remove", 1).names == ("files_delete",)


def test_a_seam_patched_after_a_catalog_was_built_changes_nothing_of_it() -> None:
    """The index is built at the first search, from the seams as they were when the catalog was
    built (mutation: read them when the index is built and `plain` reads the vocabulary)."""
    entries = [tool("files_copy", "Copy a file."), tool("files_delete", "Delete a file.")]
    try:
        catalog_mod.USE_VOCABULARY = False
        plain = Catalog(entries)
    finally:
        catalog_mod.USE_VOCABULARY = True
    assert not plain.indexed
    assert plain.search("remove", 1).names == ()


def test_an_alternative_of_a_phrase_joins_its_head_word() -> None:
    # Mutation: give `pr` a group of its own and a tool saying both `pull request` and `PR`
    # counts the one concept twice.
    groups = vocab.Vocabulary(words).expand(words("list pull requests"))
    assert {"request": 1.0, "pr": 1.0} in groups
    assert {"pr": 1.0} not in groups


# --- owner/name slugs -----------------------------------------------------------------------


def read(query: str, known: frozenset[str] = frozenset()) -> set[str]:
    groups = vocab.Vocabulary(words).read(query, known.__contains__)
    return {w for group in groups for w in group}


def test_owner_name_slug_reads_as_a_repository() -> None:
    # Mutation: read `acme/web` as the words `acme` and `web`, and the web search tool wins.
    catalog = Catalog(
        [
            tool("code_list_branches", "List branches of a repository."),
            tool("a_web", "Search the web."),
        ]
    )
    result = catalog.search("which branches exist in acme/web", 5)
    assert result.names == ("code_list_branches",)
    assert "repositori" in read("which branches exist in acme/web")
    assert "web" not in read("which branches exist in acme/web")


def test_slug_whose_first_part_the_catalog_knows_keeps_its_words() -> None:
    # `deployment/api` is kubectl's kind/name, not a repository: the catalog knows `deployment`.
    catalog = Catalog(
        [tool("k_restart", "Restart a deployment."), tool("a_star", "Star a repository.")]
    )
    assert catalog.search("restart deployment/api", 5).names == ("k_restart",)
    assert "repositori" not in read("restart deployment/api", frozenset({"deploy"}))


@pytest.mark.parametrize("query", ["edit src/main.py", "tail /var/log/app.log", "open ./a/b"])
def test_paths_are_not_slugs(query: str) -> None:
    assert "repositori" not in read(query)


# --- state words ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query", ["show open PRs", "list closed issues", "which incidents are still open"]
)
def test_a_state_word_inside_a_request_also_stands_for_state(query: str) -> None:
    assert "state" in read(query)


@pytest.mark.parametrize("query", ["open a PR from fix into main", "please open an issue"])
def test_a_state_word_opening_the_request_is_its_verb(query: str) -> None:
    # Mutation: read every `open` as a state and "open a PR" also asks for a state filter.
    assert "state" not in read(query)


def test_a_state_reading_ranks_a_filtering_tool_above_an_unrelated_one() -> None:
    catalog = Catalog(
        [
            ToolEntry("a_tags", "", "List tags of a repository."),
            ToolEntry("b_issues", "", "List issues, filtered by state."),
        ]
    )
    assert catalog.search("list the open ones", 1).names == ("b_issues",)
