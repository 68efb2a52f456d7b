"""toolspec.params: the argument models of the built-in tools (→ JSON Schema for providers).

Descriptions here are what the model reads; keep them precise about limits and defaults.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Args(BaseModel):
    # Built at first use (a validation, the schema read): a tool the run does not offer costs
    # only its class statement (toolspec.spec's contract).
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ReadFileArgs(Args):
    path: str = Field(description="File path, relative to the workspace or absolute.")
    offset: int = Field(1, ge=1, description="First line to return (1-based).")
    limit: int | None = Field(
        None, ge=1, description="Maximum lines to return; the per-call budget applies anyway."
    )


class WriteFileArgs(Args):
    path: str = Field(description="File path to create or overwrite.")
    content: str = Field(description="The complete new content of the file.")


class SearchReplaceArgs(Args):
    path: str = Field(description="File to edit.")
    old_string: str = Field(description="Exact text to replace; must occur exactly once.")
    new_string: str = Field(description="Replacement text.")


class ListDirArgs(Args):
    path: str = Field(".", description="Directory to list.")


class DirTreeArgs(Args):
    path: str = Field(".", description="Root of the tree.")
    max_depth: int = Field(3, ge=1, le=12, description="How many levels to show.")


RUN_BASH_TIMEOUT = 180.0  # a foreground command's timeout when the model gives none (seconds)


class RunBashArgs(Args):
    command: str = Field(description="The bash command line to run in the workspace.")
    is_dangerous: bool = Field(
        False,
        description="Set true when the command deletes, overwrites or changes anything outside "
        "the task's files, or is otherwise hard to undo; the user will be asked.",
    )
    is_background: bool = Field(
        False,
        description="Run as a background job (servers, watchers): returns at once with the job's "
        "id, pid and log; it keeps running across calls (list_jobs, stop_job).",
    )
    timeout: float | None = Field(
        None,
        gt=0,
        description=f"Seconds before the whole process group is killed (default "
        f"{RUN_BASH_TIMEOUT:g}).",
    )


class ListJobsArgs(Args):
    pass


class StopJobArgs(Args):
    id: int = Field(ge=1, description="The job's id, as run_bash or list_jobs gave it.")


class SearchArgs(Args):
    pattern: str = Field(description="Regular expression (ripgrep syntax) to search for.")
    path: str = Field(".", description="Directory or file to search.")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.py'.")
    fixed_strings: bool = Field(False, description="Treat the pattern as a literal string.")
    ignore_case: bool = Field(False, description="Case-insensitive search.")
    max_results: int = Field(200, ge=1, le=2000, description="Maximum matching lines returned.")


class SymbolArgs(Args):
    symbol: str = Field(description="The symbol name (function, class, method, type).")
    path: str = Field(".", description="Directory or file to look in.")


class ThinkArgs(Args):
    thought: str = Field(description="Your reasoning; nothing is executed.")


class AgentExitArgs(Args):
    reason: str = Field(description="Why you are finishing: what was done, or why it cannot be.")
    summary: str = Field("", description="The deliverable: the answer or report for the caller.")
    handoff: dict[str, Any] | None = Field(
        None, description="A structured handoff report, when your instructions ask for one."
    )
    blueprint: dict[str, Any] | None = Field(
        None, description="A structured plan, when your instructions ask for one."
    )


class AskUserArgs(Args):
    question: str = Field(description="The question for the user.")
    options: list[str] | None = Field(None, description="Suggested answers, if any.")


class LoadToolArgs(Args):
    names: list[str] | None = Field(None, description="Catalog tool names to load.")
    query: str | None = Field(None, description="Describe what you need; the best matches load.")


class UseSkillArgs(Args):
    name: str = Field(description="The skill to open (from the skills list).")


class WebFetchArgs(Args):
    url: str = Field(description="The http(s) URL to fetch.")
    max_chars: int = Field(
        20_000,
        ge=200,
        le=200_000,
        description="Cut the readable text at this many characters (the cut is stated).",
    )


class ReadSpillArgs(Args):
    locator: str = Field(description="The locator named in a cut tool output's notice.")
    page: int = Field(1, description="Which page to read (1-based), as the notice suggests.")
    count: int = Field(
        0,
        description="Lines per page; 0 or less means the default page size, and a count above "
        "the cap is read as the cap.",
    )
