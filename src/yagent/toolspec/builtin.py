"""toolspec.builtin: the built-in tools' specs — the registry's static part.

Effects, tiers and serial flags here are the only place these facts live: the Surface, the guard
and the scheduler read them from the Spec, never from a tool's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yagent.toolspec import params as p
from yagent.toolspec.browser import BROWSER
from yagent.toolspec.delegate import DELEGATE
from yagent.toolspec.program import RUN_PROGRAM
from yagent.toolspec.sessions import SESSION_TOOLS
from yagent.toolspec.spec import Effect, Spec, Tier, make_spec

# Capability tags: the facts other layers ask about instead of comparing tool names.
FINISHES = "finishes-run"  # a successful call hands back the deliverable and may end the run
ASKS_USER = "asks-user"  # waits for a person; removed from the surface under -Y
LOADS_TOOLS = "loads-tools"  # the deferred-catalog loader; offered only when deferral is on
PAGES_SPILL = "pages-spill"  # pages cut tool outputs back; its own pages are bounded, never cut


def _paths(key: str) -> Any:
    def read(result: Any) -> list[str]:
        if isinstance(result, Mapping):
            value = result.get(key)
            if isinstance(value, str):
                return [value]
            if isinstance(value, list):
                return [v for v in value if isinstance(v, str)]
        return []

    return read


def _bash_timeout(args: Mapping[str, Any]) -> float | None:
    """run_bash's own bound: the foreground timeout (a background run returns at once)."""
    if args.get("is_background"):
        return None
    timeout = args.get("timeout")
    return float(timeout) if isinstance(timeout, int | float) else p.RUN_BASH_TIMEOUT


def _match_files(result: Any) -> list[str]:
    if not isinstance(result, Mapping):
        return []
    seen: dict[str, None] = {}
    for match in result.get("matches", ()) or ():
        if isinstance(match, Mapping) and isinstance(match.get("path"), str):
            seen.setdefault(match["path"], None)
    return list(seen)


BUILTIN: tuple[Spec, ...] = (
    make_spec(
        "read_file",
        "Read a text file. Returns numbered lines from `offset`; each call returns at most a "
        "line budget and a byte budget, and says when more remains. Binary files are refused.",
        p.ReadFileArgs,
        Effect.READ,
        Tier.HOT,
        brief="Read a text file (paged).",
        path_args=("path",),
        result_paths=_paths("path"),
    ),
    make_spec(
        "write_file",
        "Create or overwrite a file with the complete given content.",
        p.WriteFileArgs,
        Effect.WRITE,
        Tier.HOT,
        brief="Create or overwrite a file.",
        path_args=("path",),
        result_paths=_paths("path"),
    ),
    make_spec(
        "search_replace_in_file",
        "Replace one exact, unique occurrence of old_string with new_string in a file. "
        "Line endings of the file are preserved.",
        p.SearchReplaceArgs,
        Effect.WRITE,
        Tier.HOT,
        brief="Edit a file by exact unique replacement.",
        path_args=("path",),
        result_paths=_paths("path"),
    ),
    make_spec(
        "list_dir",
        "List a directory's entries (directories end with '/').",
        p.ListDirArgs,
        Effect.READ,
        Tier.HOT,
        brief="List a directory.",
        path_args=("path",),
    ),
    make_spec(
        "print_dir_tree",
        "Print the directory tree below a path, respecting .gitignore, up to max_depth levels.",
        p.DirTreeArgs,
        Effect.READ,
        Tier.WARM,
        brief="Show the directory tree.",
        path_args=("path",),
    ),
    make_spec(
        "run_bash",
        "Run a bash command line in the workspace. Foreground runs are bounded by a timeout and "
        "own their whole process group; use is_background for servers and watchers.",
        p.RunBashArgs,
        Effect.EXEC,
        Tier.HOT,
        serial=True,
        brief="Run a shell command.",
        command_arg="command",
        danger_flag="is_dangerous",
        own_timeout=_bash_timeout,
    ),
    make_spec(
        "list_jobs",
        "List this session's background jobs (started with is_background, or left running by a "
        "command line ending in `&`): id, pid, command, state, exit code, log file and last "
        "output lines.",
        p.ListJobsArgs,
        Effect.READ,
        Tier.WARM,
        brief="List background jobs.",
    ),
    make_spec(
        "stop_job",
        "Stop a background job: SIGTERM to all its processes, SIGKILL to what is left after a "
        "short grace. Returns its final state and last output lines.",
        p.StopJobArgs,
        Effect.EXEC,
        Tier.WARM,
        serial=True,
        brief="Stop a background job.",
    ),
    make_spec(
        "search",
        "Search file contents with a regular expression (ripgrep), respecting .gitignore. "
        "Returns matching lines with paths and line numbers, capped at max_results.",
        p.SearchArgs,
        Effect.READ,
        Tier.HOT,
        brief="Search file contents (regex).",
        path_args=("path",),
        result_paths=_match_files,
    ),
    make_spec(
        "find_definitions",
        "Find where a symbol (function, class, method, type) is defined, using real parsers "
        "for Python, JavaScript/TypeScript and Go.",
        p.SymbolArgs,
        Effect.READ,
        Tier.WARM,
        brief="Find a symbol's definitions.",
        path_args=("path",),
        result_paths=_match_files,
    ),
    make_spec(
        "find_references",
        "Find references to and calls of a symbol (callers), using real parsers for Python, "
        "JavaScript/TypeScript and Go.",
        p.SymbolArgs,
        Effect.READ,
        Tier.WARM,
        brief="Find a symbol's references and callers.",
        path_args=("path",),
        result_paths=_match_files,
    ),
    make_spec(
        "think",
        "Write down reasoning before acting. Nothing is executed.",
        p.ThinkArgs,
        Effect.COGNITIVE,
        Tier.HOT,
        brief="Think step by step.",
    ),
    make_spec(
        "agent_exit",
        "Finish your work and hand back the result. Call it exactly once, at the end.",
        p.AgentExitArgs,
        Effect.FLOW,
        Tier.HOT,
        serial=True,
        brief="Finish and hand back.",
        tags=frozenset({FINISHES}),
    ),
    make_spec(
        "ask_user_for_help",
        "Ask the user a question and wait for the answer. Use it when you are blocked.",
        p.AskUserArgs,
        Effect.FLOW,
        Tier.HOT,
        serial=True,
        brief="Ask the user.",
        tags=frozenset({ASKS_USER}),
    ),
    make_spec(
        "load_tool",
        "Load the full schemas of catalog tools, by name or by describing what you need.",
        p.LoadToolArgs,
        Effect.META,
        Tier.HOT,
        serial=True,
        brief="Load catalog tools.",
        tags=frozenset({LOADS_TOOLS}),
    ),
    make_spec(
        "use_skill",
        "Open a skill: its instructions and the files it bundles.",
        p.UseSkillArgs,
        Effect.READ,
        Tier.WARM,
        brief="Open a skill.",
    ),
    make_spec(
        "read_spill",
        "Read the rest of a tool output that was cut because it was too large: give the locator "
        "from the cut output's notice and the page it suggests. Pages are numbered from 1; a "
        "page holds `count` lines (capped), and the result says whether more remains.",
        p.ReadSpillArgs,
        Effect.READ,
        Tier.HOT,
        brief="Page through a cut tool output.",
        tags=frozenset({PAGES_SPILL}),
    ),
    RUN_PROGRAM,
    make_spec(
        "web_fetch",
        "Fetch one web page (http/https) and return its readable text: HTML is reduced to "
        "headings, paragraphs, lists and links. Private, loopback and cloud-metadata addresses "
        "are refused (redirects included); only text content types are read; long pages are "
        "cut at max_chars and the cut is stated.",
        p.WebFetchArgs,
        Effect.NETWORK,
        Tier.WARM,
        brief="Fetch a web page as text.",
        url_arg="url",
    ),
    DELEGATE,
    *BROWSER,
    *SESSION_TOOLS,
)


def builtin_by_name() -> dict[str, Spec]:
    return {spec.name: spec for spec in BUILTIN}
