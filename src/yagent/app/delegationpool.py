"""How many delegations run at once, and who may delegate to whom.

Contract:
- `normalise(value, env)` is the one place the pool size is decided (Director constraint C10):
  1 → strictly serial, ≤ 0 → the default 2, > 8 → 8, anything else as given; and
  `YAGENT_CONCURRENCY=0` in `env` forces 1 inside this function, whatever the configuration.
- A `Pool` belongs to one top-level run and every delegation beneath it (nested ones included):
  `slot()` waits for a free slot and holds it for the delegation's life. Only an acquired slot is
  ever released. A delegation that itself delegates lends its slot back while it waits
  (`Slot.lent`), so a parent holding a slot never waits for a child queued behind it (no
  self-deadlock, even with a pool of 1; `docs/adr/0010-director-delegation.md`). `peak` is the
  most slots ever held at once.
- `Pool.claims` (`kernel.judge.areas.Board`) holds the declared areas of the delegations running
  now: an overlapping writer is refused before it starts. `Pool.writers` serialises writers when
  the preset cannot confine commands (they queue; the result says so).
- `topology(config, found)` builds the `kernel.judge.dispatch.Guard` once per app: every built-in,
  configured (`[agents.NAME]`) and found agent (Claude Code's `.claude/agents` files) is a
  slug; the Director may delegate to every other agent unless `[agents.director] delegates`
  says otherwise; any agent may be given `delegates`. A cycle or an
  unknown target is a `ConfigError` (exit 2), refused at construction. `MAX_DEPTH` bounds
  nesting (the Director's own delegations run at depth 1).
- `roster(guard, caller, load)` is the text a delegating agent's prompt ends with: every agent
  the topology lets it call, sorted, with its description taken from that agent's own prompt
  (never a hard-coded list); an agent that cannot be loaded is listed as unavailable, with why.
Leaves to `app.delegation`: what a delegation does once it holds its slot.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass

import anyio

from yagent.agents import catalog
from yagent.agents.activity import Monitor
from yagent.app.config import Config, ConfigError
from yagent.kernel.judge import areas, dispatch
from yagent.toolspec import first_sentence

DEFAULT_POOL = 2
MAX_POOL = 8
MAX_DEPTH = 3  # the Director's delegates run at depth 1; their delegates at 2, …
KILL_SWITCH = "YAGENT_CONCURRENCY"
DIRECTOR = "director"


def normalise(value: int, env: Mapping[str, str] | None = None) -> int:
    """The pool size for `max_parallel_delegations = value` (see the module contract)."""
    environ = os.environ if env is None else env
    if environ.get(KILL_SWITCH, "").strip() == "0":
        return 1
    if value <= 0:
        return DEFAULT_POOL
    return min(value, MAX_POOL)


class Pool:
    """The delegation slots of one top-level run (see the module contract)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = anyio.Semaphore(size)
        self.held = 0
        self.peak = 0
        self.claims = areas.Board()
        self.writers = anyio.Lock()

    async def _take(self) -> None:
        await self._free.acquire()
        self.held += 1
        self.peak = max(self.peak, self.held)

    def _give(self) -> None:
        self.held -= 1
        self._free.release()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        await self._take()  # cancelled here: nothing was acquired, nothing is released
        slot = Slot(self)
        try:
            yield slot
        finally:
            if slot.held:
                self._give()


class Slot:
    """One held slot; lent back to the pool while its holder waits for its own delegations."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.held = True
        self._waiting = 0

    @contextlib.asynccontextmanager
    async def lent(self) -> AsyncIterator[None]:
        self._waiting += 1
        if self._waiting == 1 and self.held:
            self.held = False
            self.pool._give()
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0 and not self.held:
                await self.pool._take()  # cancelled here: not held, so never released
                self.held = True


@dataclass(frozen=True, slots=True)
class Link:
    """What a delegated run inherits from the run that delegated it."""

    pool: Pool
    depth: int  # this run's own delegation depth (the Director's delegates: 1)
    monitor: Monitor  # its watchdog, created when it got its slot; heartbeats reach the parent
    slot: Slot
    parent_delegation_id: str
    call_id: str


class _Edges:
    """The topology as `kernel.judge.dispatch` reads it."""

    def __init__(self, edges: Mapping[str, tuple[str, ...]]) -> None:
        self._edges = dict(edges)

    def slugs(self) -> Iterable[str]:
        return list(self._edges)

    def dispatch_allow(self, slug: str) -> Iterable[str]:
        return self._edges.get(slug, ())


def edges(config: Config, found: Iterable[str] = ()) -> dict[str, tuple[str, ...]]:
    """Who may delegate to whom: built-in defaults, then `[agents.NAME] delegates`."""
    names = sorted({*catalog.BUILTIN_AGENTS, *config.agents, *found})
    out: dict[str, tuple[str, ...]] = dict.fromkeys(names, ())
    out[DIRECTOR] = tuple(n for n in names if n != DIRECTOR)
    for name, entry in config.agents.items():
        if entry.delegates is not None:
            out[name] = tuple(entry.delegates)
    return out


def topology(config: Config, found: Iterable[str] = ()) -> dispatch.Guard:
    """The app's delegation guard; a topology it cannot vouch for is a `ConfigError`.
    `found`: the names of the agents found in `.claude/agents` folders."""
    try:
        return dispatch.Guard(_Edges(edges(config, found)), MAX_DEPTH)
    except dispatch.TopologyError as exc:
        where = ", ".join(config.sources) or "defaults"
        raise ConfigError(f"[agents.*] delegates ({where}): {exc}") from None


def describe(prompt: str) -> str:
    """An agent's description from its prompt: what its first paragraph says after "You are
    …:" (built-in and `.claude/agents` agents), else the first sentence of what follows."""
    paragraphs = [" ".join(p.split()) for p in prompt.strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return ""
    head = paragraphs[0]
    if ": " in head:
        return first_sentence(head.split(": ", 1)[1])
    return first_sentence(paragraphs[1]) if len(paragraphs) > 1 else first_sentence(head)


def roster(guard: dispatch.Guard, caller: str, load: Callable[[str], catalog.AgentDef]) -> str:
    """The agents `caller` may delegate to, for its prompt ("" when it may call none)."""
    lines = []
    for name in sorted(guard.allowed(caller)):
        try:
            lines.append(f"- {name}: {describe(load(name).prompt)}")
        except catalog.AgentConfigError as exc:
            lines.append(f"- {name}: unavailable ({first_sentence(str(exc), 160)})")
    if not lines:
        return ""
    head = "Agents you may delegate to (the `agent` argument of `delegate`):"
    return "\n\n" + "\n".join([head, *lines])
