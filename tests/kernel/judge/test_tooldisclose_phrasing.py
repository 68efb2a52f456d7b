"""tooldisclose phrasing: values, idioms and verb senses in a request's raw text; the vocabulary's
reading of phrases and states.

Each test names the mutation it guards against.
"""

from __future__ import annotations

import pytest

from yagent.kernel.judge.tooldisclose import Catalog, ToolEntry, vocab
from yagent.kernel.judge.tooldisclose.bm25 import words
from yagent.kernel.judge.tooldisclose.phrasing import CODE, FILE, IDIOMS, VERB_SENSES, WHEN, mark


def tool(name: str, brief: str, description: str = "") -> ToolEntry:
    return ToolEntry(name, brief, description)


def read(query: str, known: frozenset[str] = frozenset()) -> set[str]:
    groups = vocab.Vocabulary(words).read(query, known.__contains__)
    return {w for group in groups for w in group}


# --- values ---------------------------------------------------------------------------------


def test_a_url_is_a_value_read_as_url() -> None:
    text, implied = mark("fetch https://example.com/docs/setup and summarise it")
    # Mutation: keep the URL's words and `docs` asks for documentation tools.
    assert "docs" not in words(text)
    assert "url" in words(text)
    assert implied == ()


@pytest.mark.parametrize(
    "query",
    [
        "when was config.yaml last modified",
        "show me the last lines of /var/log/app.log",
        "who wrote line 120 of server.go",
        "list ./build",
        "open ~/notes",
        "what changed in config.yaml.",
        "(see README.md)",
    ],
)
def test_a_file_name_or_path_implies_a_file(query: str) -> None:
    # Mutation: no file rule and "config.yaml" is only the words `config` and `yaml`.
    text, implied = mark(query)
    assert implied == (FILE,)
    assert text == query  # its words stay: `config`, `app`, `log` can matter


@pytest.mark.parametrize(
    "query",
    ["deploy to example.com", "bump to v1.2", "list the users", "merge acme/web", "mail bob@x.py"],
)
def test_domains_versions_and_slugs_are_not_files(query: str) -> None:
    assert mark(query)[1] == ()


def test_an_identifier_implies_code() -> None:
    assert mark("where is parseConfig used")[1] == (CODE,)
    assert mark("who calls main() in the repo")[1] == (CODE,)
    # Mutation: any capital letter is code and `GitHub` or `PR` would imply it.
    assert mark("list GitHub PRs")[1] == ()


def test_an_implied_concept_joins_the_query_at_the_related_weight() -> None:
    groups = vocab.Vocabulary(words).read("when was config.yaml last modified", lambda w: True)
    assert {"file": vocab.RELATED_WEIGHT} in groups


@pytest.mark.parametrize(
    "query",
    [
        "post the notes to slack tomorrow at 9am",
        "move the standup to 10:30",
        "remind the team next monday",
        "book a call at 3pm",
    ],
)
def test_a_time_to_come_implies_time_and_scheduling(query: str) -> None:
    # Mutation: no time rule and "tomorrow at 9am" says nothing of scheduling.
    assert mark(query)[1] == (WHEN,)


@pytest.mark.parametrize("query", ["retry pipeline 5521", "scale to 3 replicas", "top 10 pods"])
def test_numbers_are_not_times(query: str) -> None:
    assert mark(query)[1] == ()


def test_a_time_ranks_the_scheduling_tool() -> None:
    catalog = Catalog(
        [
            tool("chat_post_message", "Post a message to a channel", "Post a new message."),
            tool(
                "chat_schedule_message",
                "Schedule a message for later",
                "Schedule a message to be posted to a channel at a future time.",
            ),
        ]
    )
    assert catalog.search("post the notes to the channel tomorrow at 9am", 1).names == (
        "chat_schedule_message",
    )


# --- idioms ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "meaning"),
    [
        ("how many documents are in orders", "count"),
        ("give the customer their money back", "refund"),
        ("who am I logged in as", "authenticated user"),
        ("file a bug about the crash", "create issue"),
        ("file bug about the crash", "create issue"),
        ("how big is the users table", "size"),
    ],
)
def test_an_idiom_is_replaced_by_its_meaning(query: str, meaning: str) -> None:
    text, _ = mark(query)
    assert set(words(meaning)) <= set(words(text))


def test_an_idioms_own_words_are_gone() -> None:
    # Mutation: add the meaning but keep the idiom's words, and `many` (insert_many,
    # delete_many) or `file` (every file tool) still count at full weight.
    assert "mani" not in words(mark("how many documents")[0])
    assert "file" not in words(mark("file a bug in the repo")[0])
    assert "back" not in words(mark("money back please")[0])


def test_every_idiom_and_sense_has_searchable_words() -> None:
    for phrase, meaning in IDIOMS:
        assert words(meaning), phrase
    for word, sense in VERB_SENSES.items():
        assert words(sense), word


def test_idioms_rank_the_tool_the_request_means() -> None:
    catalog = Catalog(
        [
            tool("pay_list_payments", "List payments of a customer"),
            tool("pay_create_refund", "Refund a payment"),
        ]
    )
    assert catalog.search("give the customer their money back", 1).names == ("pay_create_refund",)


# --- verb senses ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query", ["text +15551234 that the build is done", "please text Bob that I'm late"]
)
def test_a_verb_sense_opening_a_request_is_read(query: str) -> None:
    assert "sms" in words(mark(query)[0])


@pytest.mark.parametrize("query", ["read the text of the page", "find text in the file"])
def test_the_same_word_elsewhere_is_a_noun(query: str) -> None:
    # Mutation: replace the word wherever it stands and "the text of the page" asks for SMS.
    assert "sms" not in words(mark(query)[0])
    assert mark(query)[0] == query


def test_a_verb_sense_opens_any_clause() -> None:
    assert "incid" in words(mark("the primary is down, page the database team")[0])


def test_a_verb_sense_ranks_the_tool_the_request_means() -> None:
    catalog = Catalog(
        [
            tool("ci_build_image", "Build an image", "Build a container image when it is done."),
            tool("phone_send_sms", "Send an SMS", "Send a text message to a phone number."),
        ]
    )
    assert catalog.search("text +15551234 that the build is done", 1).names == ("phone_send_sms",)


# --- the vocabulary's phrases and states ----------------------------------------------------


def test_a_related_phrase_adds_none_of_its_words_alone() -> None:
    # `run` is related to "kick off": `kick` and `off` alone say nothing of running.
    # Mutation: add every word of every alternative phrase and `off` joins the query.
    assert not {"kick", "off"} & read("run the nightly job")
    # An abbreviation's phrase is the same thing spelt out: its words join.
    assert {"pull", "request"} <= read("list open PRs")


def test_a_form_field_is_an_input() -> None:
    assert "input" in read("type my email into the login field")


@pytest.mark.parametrize(
    "query", ["which pods are crashlooping", "which jobs are failing", "is the job still running"]
)
def test_a_participle_after_a_copula_is_a_state(query: str) -> None:
    # Mutation: no participle rule and "are crashlooping" asks for nothing but its word.
    assert {"status", "state"} <= read(query)


def test_a_participle_opening_a_request_is_not_a_state() -> None:
    assert "status" not in read("running jobs of the pipeline")


def test_the_catalog_reads_intent_after_idioms() -> None:
    # "file a bug" asks to create. Mutation: read the intent from the raw request, where `file`
    # opens it and says nothing, and the search tool (issues + crash) keeps its full score.
    catalog = Catalog(
        [
            tool("hub_search_issues", "Search issues about a crash", "Find issues about a crash."),
            tool("hub_open_issue", "Open a new issue", "Create an issue."),
        ]
    )
    assert catalog.search("file a bug about the crash", 1).names == ("hub_open_issue",)
