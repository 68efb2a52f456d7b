"""toolspec.profiles: who may use what — the only place it is decided.

A `Profile` grants tools by effect and by name, denies by name (a denial always wins), and says
whether external (MCP) tools may be used at all and which servers. A tool tagged `BY_NAME`
(`toolspec.sessions`) is granted only to a profile that names it, whatever its effect. The
Surface asks `grants(spec)` and nothing else; no other module keeps lists of tools per agent.
An external tool is granted only when the profile takes external tools, its server is allowed,
and its effect (read from its annotations, `tools.mcp.specs`) is one the profile grants
(`external_effects`, by default the profile's own effects) — or the profile names it. A read-only
profile therefore gets only tools that declare `readOnlyHint`, whatever server offers them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from yagent.toolspec.sessions import BY_NAME
from yagent.toolspec.spec import Effect, Spec

FLOW_NAMES = frozenset({"think", "agent_exit", "ask_user_for_help", "load_tool"})
# Any tool's output may be cut and spilled: whoever can call tools can page the rest back.
SPILL_NAMES = frozenset({"read_spill"})


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    effects: frozenset[Effect] = frozenset()
    names: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    external: bool = False
    servers: frozenset[str] | None = None  # None: every configured server, when external
    external_effects: frozenset[Effect] | None = None  # None: the profile's own effects

    def grants(self, spec: Spec) -> bool:
        if spec.name in self.deny:
            return False
        if BY_NAME in spec.tags:
            return spec.name in self.names
        if spec.external:
            if not self.external:
                return False
            server = spec.name.split("__", 1)[0]
            if self.servers is not None and server not in self.servers:
                return False
            effects = self.effects if self.external_effects is None else self.external_effects
            return spec.effect in effects or spec.name in self.names
        return spec.effect in self.effects or spec.name in self.names

    def with_names(self, extra: Iterable[str]) -> Profile:
        return Profile(
            self.name,
            self.effects,
            self.names | frozenset(extra),
            self.deny,
            self.external,
            self.servers,
            self.external_effects,
        )


_READ = frozenset({Effect.READ, Effect.COGNITIVE})
_FLOW = frozenset({Effect.FLOW, Effect.META})
# Background jobs belong to the agents that run commands (EXEC); listing them is read-only but
# means nothing to the others.
_JOBS = frozenset({"list_jobs"})

CODING = Profile("coding", _READ | _FLOW | {Effect.WRITE, Effect.EXEC}, external=True)
# Repo stays read-only: a program can only reach the tools the profile grants anyway.
REPO = Profile("repo", _READ | _FLOW, names=frozenset({"run_program"}), deny=_JOBS, external=True)
CHAT = Profile(
    "chat",
    frozenset({Effect.COGNITIVE}) | _FLOW,
    names=frozenset({"read_file", "list_dir", "search"}) | SPILL_NAMES,
)
DEVOPS = Profile(
    "devops", _READ | _FLOW | {Effect.WRITE, Effect.EXEC, Effect.NETWORK}, external=True
)
BROWSER = Profile("browser", _READ | _FLOW | {Effect.BROWSER, Effect.NETWORK}, deny=_JOBS)
DIRECTOR = Profile("director", _READ | _FLOW | {Effect.DELEGATE}, deny=_JOBS)
META = Profile(
    "meta", _READ | _FLOW, names=frozenset({"list_sessions", "read_session"}), deny=_JOBS
)

PROFILES: dict[str, Profile] = {
    p.name: p for p in (CODING, REPO, CHAT, DEVOPS, BROWSER, DIRECTOR, META)
}


class UnknownProfileError(KeyError):
    pass


def profile(name: str) -> Profile:
    """A named profile; an unknown name is an error, never a fallback to another profile."""
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownProfileError(
            f"unknown tool profile {name!r}; known: {', '.join(sorted(PROFILES))}"
        ) from None


def custom(
    name: str,
    *,
    tools: Iterable[str],
    deny: Iterable[str] = (),
    external: bool = False,
    external_effects: Iterable[Effect] = (Effect.READ,),
) -> Profile:
    """A custom agent's profile: exactly the named tools plus flow control and spill paging;
    with `external`, the MCP tools whose effect is in `external_effects` (or that it names)."""
    granted = frozenset(tools) | FLOW_NAMES | SPILL_NAMES
    return Profile(
        name, frozenset(), granted, frozenset(deny), external, None, frozenset(external_effects)
    )
