"""The agents: their definitions, and the one function that turns a definition into a loop config.

Each agent states its loop behaviour explicitly — `stop_on_finish`, `no_action_retry_limit`,
`step_retries`, `max_steps` — there is no central default that silently applies: `AgentDef` has
no defaults for them, so forgetting one is a TypeError. Prompts live
in `prompts/<name>.md` next to this file; their first line names the agent (scripted engines
recognise agents by it).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from yagent.toolspec import Effect
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import FLOW_NAMES, SPILL_NAMES, Profile, custom, profile

AUTONOMY = (
    "You run in full-autonomy mode: no person will answer questions. Make reasonable decisions "
    "yourself, state the assumptions you made in your final report, and keep going."
)


def prompt_text(name: str) -> str:
    path = resources.files("yagent.agents").joinpath("prompts").joinpath(f"{name}.md")
    return path.read_text("utf-8")


@dataclass(frozen=True, slots=True)
class AgentDef:
    name: str
    profile: Profile
    prompt: str
    stop_on_finish: bool
    no_action_retry_limit: int
    step_retries: int
    max_steps: int
    no_action_reminder: str | None
    model: str = ""  # empty: the configured default model

    @property
    def reply_is_answer(self) -> bool:
        """Its plain reply is its answer: never reminded to submit through `agent_exit` (chat),
        so an `answered` run is not "nothing submitted" (`cli.outcome`, the terminal's note)."""
        return self.no_action_retry_limit == 0

    @property
    def marker(self) -> str:
        """The prompt's first line: how scripted and replay engines recognise this agent."""
        return self.prompt.strip().splitlines()[0]


def coding(step_retries: int) -> AgentDef:
    return AgentDef(
        "coding", profile("coding"), prompt_text("coding"), True, 2, step_retries, 60, None
    )


def chat(step_retries: int) -> AgentDef:
    return AgentDef("chat", profile("chat"), prompt_text("chat"), True, 0, step_retries, 20, None)


def repo(step_retries: int) -> AgentDef:
    return AgentDef(
        "repo",
        profile("repo"),
        prompt_text("repo"),
        True,
        1,
        step_retries,
        40,
        prompt_text("repo_reminder").strip(),
    )


def devops(step_retries: int) -> AgentDef:
    return AgentDef(
        "devops", profile("devops"), prompt_text("devops"), True, 2, step_retries, 60, None
    )


def browser(step_retries: int) -> AgentDef:
    return AgentDef(
        "browser", profile("browser"), prompt_text("browser"), True, 1, step_retries, 40, None
    )


# Meta keeps its own step retries, not `[llm] step_retries` (C18: its own field): a question about
# past runs is cheap to ask again and has no side effect to repeat.
META_STEP_RETRIES = 2


def meta(step_retries: int) -> AgentDef:
    """Answers questions about past runs by reading sessions (`toolspec.sessions`); read-only.
    `step_retries` (the configured `[llm] step_retries`) is deliberately not used."""
    del step_retries
    return AgentDef(
        "meta", profile("meta"), prompt_text("meta"), True, 1, META_STEP_RETRIES, 30, None
    )


def director(step_retries: int) -> AgentDef:
    """Plans and delegates (its one extra tool is `delegate`); it never edits or runs anything."""
    return AgentDef(
        "director", profile("director"), prompt_text("director"), True, 1, step_retries, 40, None
    )


BUILTIN_AGENTS = ("coding", "chat", "repo", "devops", "browser", "meta", "director")


class AgentConfigError(ValueError):
    pass


_CUSTOM_KEYS = {"prompt", "tools", "deny", "model", "max_steps", "external", "delegates"}
_DEFAULTS = {"deny": [], "model": "", "max_steps": 40, "external": False}


def topology_only(name: str, spec: Mapping[str, Any]) -> bool:
    """Whether `[agents.NAME]` only says whom a built-in agent may delegate to (`delegates`):
    then it is no custom agent. Any other key set there is refused (it would be ignored)."""
    if name not in BUILTIN_AGENTS or spec.get("prompt") is not None or spec.get("tools"):
        return False
    extra = sorted(k for k, v in spec.items() if k in _DEFAULTS and v != _DEFAULTS[k])
    if extra:
        raise AgentConfigError(
            f"agent {name!r} is built in: without a prompt only 'delegates' may be set, not {extra}"
        )
    return True


def custom_agent(name: str, spec: Mapping[str, Any], step_retries: int) -> AgentDef:
    """A custom agent from config: `[agents.<name>]` with prompt, tools, model, max_steps."""
    unknown = sorted(set(spec) - _CUSTOM_KEYS)
    if unknown:
        raise AgentConfigError(f"agent {name!r}: unknown keys {unknown}")
    prompt = spec.get("prompt")
    tools = spec.get("tools")
    if not isinstance(prompt, str) or not prompt.strip():
        raise AgentConfigError(f"agent {name!r}: 'prompt' must be non-empty text")
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise AgentConfigError(f"agent {name!r}: 'tools' must be a list of tool names")
    _known_tools(name, tools)
    header = f"You are yagent's custom agent {name!r}."
    # MCP tools it may use: read-only ones, and those whose effect its named tools already have.
    effects = {s.effect for s in BUILTIN if s.name in tools} | {Effect.READ}
    profile = custom(
        name,
        tools=tools,
        deny=spec.get("deny", []),
        external=bool(spec.get("external")),
        external_effects=effects,
    )
    return AgentDef(
        name,
        profile,
        f"{header}\n\n{prompt.strip()}\n\nWhen done, call agent_exit with your result.",
        True,
        1,
        step_retries,
        int(spec.get("max_steps", 40)),
        None,
        str(spec.get("model", "")),
    )


def _known_tools(agent: str, tools: list[str]) -> None:
    """Every tool an agent names exists: a built-in one, or an MCP tool (`<server>__<tool>`,
    resolved when the servers connect). An unknown name is refused with the closest ones —
    never an agent silently left with fewer tools than its author meant."""
    known = sorted({spec.name for spec in BUILTIN} | FLOW_NAMES | SPILL_NAMES)
    for tool in tools:
        if tool in known or "__" in tool:
            continue
        close = difflib.get_close_matches(tool, known, n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise AgentConfigError(f"agent {agent!r}: unknown tool {tool!r} in 'tools'{hint}")


def builtin(name: str, step_retries: int) -> AgentDef:
    factories = {
        "coding": coding,
        "chat": chat,
        "repo": repo,
        "devops": devops,
        "browser": browser,
        "meta": meta,
        "director": director,
    }
    if name not in factories:
        raise AgentConfigError(f"unknown agent {name!r}; built in: {', '.join(BUILTIN_AGENTS)}")
    return factories[name](step_retries)
