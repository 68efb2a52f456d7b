"""tooldisclose intent and servers: read vs write requests and tools, a server named in a request.

Each test names the mutation it guards against.
"""

from __future__ import annotations

import pytest

from yagent.kernel.judge.tooldisclose import Catalog, ToolEntry
from yagent.kernel.judge.tooldisclose import catalog as catalog_mod
from yagent.kernel.judge.tooldisclose.intent import Action, mismatch, query_intent, tool_action

READ, WRITE, NONE = Action.READ, Action.WRITE, Action.NONE


# --- a tool's action class ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "brief", "description", "expected"),
    [
        ("hub_list_issues", "List issues", "", READ),
        ("hub_create_or_update_file", "Commit one file", "", WRITE),
        # The name's verb comes first: "Build logs" opens with a write verb used as a noun.
        ("ci_get_build_logs", "Build logs of a deployment", "Get the build logs.", READ),
        # No verb in the name: the description's first word, then the brief's.
        ("git_log", "Commit history", "Show the commit history of a repository.", READ),
        ("db_hset", "Set fields of a hash", "", WRITE),
        # A brief that opens with a noun names what the tool gives back.
        ("db_columns", "Columns of a table", "", READ),
        ("k_top_pods", "CPU and memory use of pods", "", READ),
        # `run` reads or writes depending on what runs: it says nothing.
        ("box_exec", "Run a command in a container", "Run a command.", NONE),
    ],
)
def test_tool_action(name: str, brief: str, description: str, expected: Action) -> None:
    # Mutations: brief before name (`ci_get_build_logs` reads as WRITE), stems instead of
    # words (`Changes` would be the verb `change`), `run` a write verb, nouns left NONE.
    assert tool_action(name, brief, description) is expected


def test_plural_nouns_are_not_verbs() -> None:
    # "Changes of a merge request" lists changes; `change` would make it a write tool.
    assert tool_action("mr_diffs", "Changes of a merge request") is READ


# --- a request's intent ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which containers are running", READ),
        ("what's on my plate today", READ),
        ("how many documents are in orders", READ),
        ("show open PRs", READ),
        ("any incidents right now?", READ),
        ("delete the stuck pod", WRITE),
        ("remember that Alice prefers dark mode", WRITE),
        ("kick off the deploy workflow", WRITE),
        ("text Bob that the build is done", WRITE),
        ("I want to know which jobs failed", READ),
        ("please restart the api deployment", WRITE),
        ("I need to update config.yaml", WRITE),
        ("can you move PROJ-1 to done", WRITE),
        # A how-to question asks for the action.
        ("how do I restart nginx", WRITE),
        # Clauses that agree, clauses that disagree, clauses that say nothing.
        ("why is the pod pending? show me its events", READ),
        ("rename notes.txt and also show its size", NONE),
        ("the pipeline failed, show me the job log", READ),
        ("run the nightly query", NONE),
        ("select all rows from users", NONE),
        # `open` with a new thing creates it, with an existing one reads it.
        ("open a PR from fix into main", WRITE),
        ("open a new ticket for the outage", WRITE),
        ("open the latest email from my boss", READ),
        ("open a.txt", READ),
        ("give me all the releases", READ),
        ("", NONE),
    ],
)
def test_query_intent(query: str, expected: Action) -> None:
    # Mutations: drop the lead-ins ("please", "I need to" read as nothing), read only the first
    # clause ("rename … and show" would be WRITE), drop the how-to rule ("how" reads as READ).
    assert query_intent(query) is expected


def test_only_known_classes_mismatch() -> None:
    assert mismatch(READ, WRITE)
    assert mismatch(WRITE, READ)
    # Mutation: treat NONE as a class of its own and every neutral tool is weighed down.
    assert not any(mismatch(a, b) for a in Action for b in Action if NONE in (a, b) or a is b)


# --- the catalog weighs a mismatched tool down ----------------------------------------------


def entry(name: str, brief: str, description: str = "", *tags: str) -> ToolEntry:
    return ToolEntry(name, brief, description, (), tags)


def test_a_question_prefers_a_listing_tool_over_a_starting_one() -> None:
    catalog = Catalog(
        [
            entry("box_run_container", "Start a new container"),
            entry("box_list_containers", "List containers", "List containers, running or stopped."),
        ]
    )
    # Mutation: INTENT_WEIGHT 1.0 (or no intent) and `run` + `container` put the starter first.
    assert catalog.search("which containers are running", 1).names == ("box_list_containers",)
    assert catalog_mod.INTENT_WEIGHT < 1.0


def test_a_command_prefers_a_changing_tool_over_a_reading_one() -> None:
    catalog = Catalog(
        [
            entry("cache_describe_entry", "Describe a cache entry"),
            entry("cache_evict_entry", "Evict a cache entry"),
        ]
    )
    # Mutation: no intent and the two tie on `cache` + `entry`; the tie goes by name to the
    # describing tool.
    assert catalog.search("drop the cache entry", 1).names == ("cache_evict_entry",)
    assert catalog.search("show the cache entry", 1).names == ("cache_describe_entry",)


def test_intent_weighs_down_never_drops() -> None:
    catalog = Catalog([entry("box_run_container", "Start a new container")])
    assert catalog.search("which containers are running", 5).names == ("box_run_container",)


# --- a server named in the request ----------------------------------------------------------


SERVERS = [
    entry("h_list_releases", "List releases of a repository", "Newest first.", "hub"),
    entry("k_list_releases", "List releases of charts", "", "kube"),
    entry("k_list_pods", "List pods", "", "kube"),
]


def test_a_server_named_in_the_request_weighs_its_tools_up() -> None:
    catalog = Catalog(SERVERS)
    # Mutation: SERVER_WEIGHT 1.0 and the repository tool (`newest` + `releases`) stays first.
    assert catalog.search("newest kube releases", 1).names == ("k_list_releases",)
    assert catalog_mod.SERVER_WEIGHT > 1.0


def test_a_server_name_inside_a_value_does_not_name_the_server() -> None:
    catalog = Catalog(SERVERS)
    # `kube/kube` is a repository slug; `kube` inside it is not the server.
    # Mutation: count words inside slugs and paths and the kube tool wins.
    assert catalog.search("newest releases of kube/kube", 1).names == ("h_list_releases",)
