"""tooldisclose catalog, search and tokenizer: contracts and the mutations that break them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.judge.tooldisclose import (
    Catalog,
    DuplicateToolError,
    Hit,
    InvalidEntryError,
    Param,
    TooldiscloseError,
    ToolEntry,
    approx_size,
    render_catalog,
)
from yagent.kernel.judge.tooldisclose import catalog as catalog_mod
from yagent.kernel.judge.tooldisclose.bm25 import Index, stem, words


def tool(
    name: str, brief: str = "", description: str = "", *params: str, tags: tuple[str, ...] = ()
) -> ToolEntry:
    return ToolEntry(name, brief, description, tuple(Param(p) for p in params), tags)


ENTRIES = [
    tool(
        "repo_create_issue", "Open a new issue", "Create an issue in a repository.", "title", "body"
    ),
    tool("repo_list_issues", "List issues", "List the issues of a repository by state.", "state"),
    tool("repo_merge", "Merge a change request", "Merge an open change request.", "number"),
    tool(
        "chat_post_message",
        "Post a chat message",
        "Post a message to a channel.",
        "channel",
        "text",
    ),
    tool(
        "chat_add_reaction", "React to a message", "Add an emoji reaction.", "emoji", tags=("chat",)
    ),
    tool(
        "db_query", "Run a read-only SQL query", "Run SELECT statements.", "sql", tags=("database",)
    ),
    tool("k8s_get_pod_logs", "Logs of a pod", "Read container logs of a pod.", "pod", "previous"),
    tool(
        "fs_read_file", "Read a text file", "Read the whole file or its last lines.", "path", "tail"
    ),
]


# --- entries and catalog construction -------------------------------------------------------


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(DuplicateToolError, match="db_query"):
        Catalog([*ENTRIES, tool("db_query", "another")])


@pytest.mark.parametrize("name", ["", " x", "a b", "x\n", "\t"])
def test_malformed_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidEntryError):
        tool(name)


def test_parameters_need_unique_non_empty_names() -> None:
    with pytest.raises(InvalidEntryError, match="twice"):
        ToolEntry("t", params=(Param("a"), Param("a", True)))
    with pytest.raises(InvalidEntryError, match="without a name"):
        ToolEntry("t", params=(Param(""),))


def test_catalog_refuses_things_that_are_not_entries() -> None:
    with pytest.raises(InvalidEntryError):
        Catalog(["db_query"])  # type: ignore[list-item]


def test_errors_share_one_hierarchy() -> None:
    for exc in (DuplicateToolError, InvalidEntryError):
        assert issubclass(exc, TooldiscloseError)


def test_catalog_is_sorted_whatever_the_input_order() -> None:
    shuffled = ENTRIES[:]
    random.Random(7).shuffle(shuffled)
    catalog = Catalog(shuffled)
    assert catalog.names == tuple(sorted(e.name for e in ENTRIES))
    assert [e.name for e in catalog] == list(catalog.names)
    assert len(catalog) == len(ENTRIES)
    assert "db_query" in catalog
    assert "nope" not in catalog
    assert catalog.get("db_query") is ENTRIES[5]
    assert catalog.get("nope") is None


def test_required_and_optional_keep_declared_order() -> None:
    entry = ToolEntry("t", params=(Param("a"), Param("b", True), Param("c"), Param("d", True)))
    assert [p.name for p in entry.required] == ["b", "d"]
    assert [p.name for p in entry.optional] == ["a", "c"]


# --- search ---------------------------------------------------------------------------------


def test_search_finds_by_paraphrase_words() -> None:
    result = Catalog(ENTRIES).search("show the logs of the crashed pod", 3)
    assert result.names[0] == "k8s_get_pod_logs"
    assert result.reason == ""


def test_search_covers_brief_description_params_and_tags() -> None:
    catalog = Catalog(ENTRIES)
    assert catalog.search("emoji", 1).names == ("chat_add_reaction",)  # param name
    assert catalog.search("database", 1).names == ("db_query",)  # tag
    assert catalog.search("SELECT", 1).names == ("db_query",)  # description
    assert catalog.search("read-only", 1).names == ("db_query",)  # brief


def test_search_covers_parameter_descriptions() -> None:
    spent = Param("time_spent", True, "Hours worked, e.g. '3h 30m'")
    worklog = ToolEntry("tracker_add_worklog", "Log time on a ticket", "", (spent,))
    catalog = Catalog([*ENTRIES, worklog])
    assert catalog.search("hours worked", 1).names == ("tracker_add_worklog",)


def test_long_descriptions_are_not_pushed_down_for_their_length_alone() -> None:
    padding = " ".join(f"filler{i}" for i in range(60))
    short = tool("a_export", "Export a report", "Export.")
    long = tool("b_export", "Export a report", f"Export. {padding}")
    result = Catalog([short, long]).search("export report", 2)
    low, high = sorted(hit.score for hit in result.hits)
    assert high / low < 1.2  # b = 1.0 would make this about 1.6


def test_zero_score_entries_are_never_returned() -> None:
    result = Catalog(ENTRIES).search("emoji", 8)
    assert result.names == ("chat_add_reaction",)
    assert result.matched == 1
    assert not result.truncated
    assert all(hit.score > 0 for hit in result.hits)


def test_k_cuts_and_says_so() -> None:
    result = Catalog(ENTRIES).search("issues", 1)
    assert len(result.hits) == 1
    assert result.matched == 2
    assert result.truncated


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="k must be"):
        Catalog(ENTRIES).search("issue", 0)


def test_empty_results_say_why() -> None:
    catalog = Catalog(ENTRIES)
    no_words = catalog.search("the of and !!", 5)
    nothing = catalog.search("giraffe zebra", 5)
    assert no_words.hits == nothing.hits == ()
    assert no_words.reason == catalog_mod.EMPTY_QUERY
    assert nothing.reason == catalog_mod.NO_MATCH
    assert no_words.reason != nothing.reason


def test_name_matches_weigh_more_than_description_matches() -> None:
    # Same words, once in the name and once in the description; the name one must win even
    # though it sorts after the other by name (so a tie would put it second).
    in_name = tool("zz_rotate_keys", "", "Do a thing with several more words in its text.")
    in_desc = tool("aa_other", "", "Rotate keys. Do a thing.")
    assert Catalog([in_name, in_desc]).search("rotate keys", 2).names == (
        "zz_rotate_keys",
        "aa_other",
    )


def test_rank_orders_by_score_then_name() -> None:
    a, b, c = tool("a_x"), tool("b_x"), tool("c_x")
    ranked = catalog_mod.rank([Hit(c, 1.0), Hit(b, 2.0), Hit(a, 1.0)])
    assert [h.name for h in ranked] == ["b_x", "a_x", "c_x"]


def test_equal_scores_are_ordered_by_name() -> None:
    twins = [
        tool(n, "Fetch the weather", "Fetch the weather.")
        for n in ("wx_delta", "wx_alpha", "wx_bravo")
    ]
    result = Catalog(twins).search("weather", 3)
    assert result.names == ("wx_alpha", "wx_bravo", "wx_delta")
    assert len({hit.score for hit in result.hits}) == 1


@settings(max_examples=40, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.sampled_from(["issue", "message", "pod logs", "read file tail", "sql", "merge"]),
)
def test_search_does_not_depend_on_input_order(rnd: random.Random, query: str) -> None:
    shuffled = ENTRIES[:]
    rnd.shuffle(shuffled)
    baseline = Catalog(ENTRIES).search(query, 5)
    again = Catalog(shuffled).search(query, 5)
    assert [(h.name, h.score) for h in again.hits] == [(h.name, h.score) for h in baseline.hits]


def test_case_styles_in_names_all_meet_plain_words() -> None:
    catalog = Catalog(
        [tool("createPullRequest"), tool("create-merge-request"), tool("list_pull_requests")]
    )
    pull = catalog.search("pull request", 5).names
    assert set(pull[:2]) == {"createPullRequest", "list_pull_requests"}
    assert pull[2:] == ("create-merge-request",)
    assert catalog.search("merge", 5).names == ("create-merge-request",)
    assert catalog.search("CreatePullRequest", 1).names == ("createPullRequest",)


# --- rendering and size ---------------------------------------------------------------------


def test_render_catalog_is_one_sorted_line_per_tool() -> None:
    text = render_catalog(
        [tool("b_tool", "second\n  line"), tool("a_tool", "first"), tool("c_tool")]
    )
    assert text.splitlines() == ["a_tool — first", "b_tool — second line", "c_tool"]


def test_approx_size_grows_with_the_schema() -> None:
    small = tool("t", "b", "d")
    large = tool("t", "b", "d" * 400, "p1", "p2")
    assert 0 < approx_size(small) < approx_size(large)


# --- tokenizer and index --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("file", "files"),
        ("create", "creating"),
        ("create", "created"),
        ("branch", "branches"),
        ("query", "queries"),
        ("process", "processes"),
        ("run", "running"),
        ("stop", "stopped"),
        ("issue", "issues"),
    ],
)
def test_stemming_meets_inflections(a: str, b: str) -> None:
    assert stem(a) == stem(b)


@pytest.mark.parametrize("word", ["status", "string", "k8s", "s3", "abc"])
def test_stemming_leaves_short_and_non_inflected_words(word: str) -> None:
    assert words(word) == [stem(word)]
    assert stem("string") == "string"
    assert stem("status") == "status"


def test_words_split_case_styles_and_drop_function_words() -> None:
    assert words("createPullRequest") == ["createpullrequest", "creat", "pull", "request"]
    assert words("get-logs of the pod") == ["log", "pod"]
    assert words("EC2Instance") == ["ec2instance", "ec2", "instanc"]
    assert words("k8s") == ["k8s"]
    assert words("日志 查询") == ["日志", "查询"]
    assert words("") == []


def test_index_scores_align_and_are_zero_without_a_match() -> None:
    index = Index([[("alpha beta", 1.0)], [("gamma", 2.0)], []])
    assert len(index) == 3
    scores = index.scores("gamma")
    assert scores[0] == 0.0
    assert scores[1] > 0.0
    assert scores[2] == 0.0
    assert index.scores("") == [0.0, 0.0, 0.0]
    assert index.idf("gamma") > index.idf("nothing") - 10  # idf is defined for unseen words
    assert Index([]).scores("gamma") == []


def test_the_search_index_is_built_at_the_first_search_and_once() -> None:
    """Listing, looking up and disclosing tools never build the index; the first search does,
    and every later one reads the same (mutation: build it in the constructor, or per search)."""
    catalog = Catalog(ENTRIES)
    assert "repo_merge" in catalog
    assert catalog.get("repo_merge") is not None
    assert render_catalog(catalog)
    assert len(list(catalog)) == len(ENTRIES)
    assert not catalog.indexed
    assert catalog.search("merge the change", 1).names == ("repo_merge",)
    assert catalog.indexed
    built = catalog.prepare()
    catalog.search("post a message", 3)
    assert catalog.prepare() is built
