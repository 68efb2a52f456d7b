"""The Surface: the only source of tools for a run.

Contract:
- Assembled in one `rebuild()` from the registry for a profile plus external (MCP) specs. A
  same-name external tool loses to the static one and is listed in `skipped()`; external tools
  are always Cold and filtered by the profile's grants like every other tool.
- Deferred loading belongs to the Surface (`deferred=True` in its options): then Hot tools are
  always visible, Warm ones too unless demoted, and Cold ones wait in the catalog for `load_tool`.
  A registry or caller that merely *contains* `load_tool` does not switch deferral on; with
  deferral off every granted tool is visible and `load_tool` is not offered.
- Budget demotion moves Warm tools (largest schema first, then by name) to the deferred catalog
  until the visible schemas fit; Hot tools are never demoted.
- `-Y` (Yolo.FULL) removes `ask_user_for_help` from the surface.
- The catalog brief is: adapter brief > spec brief > first sentence of the description.
- The catalog (an immutable `tooldisclose.Catalog`) is built once per distinct list of entries
  in this process and shared by every surface of the same tools (a run's assembly and its MCP
  rebuild, one run after another), its search index at the first search of any of them; an
  entry that differs in anything it holds (name, brief, description, parameters, tags) gives
  its own catalog and index. What a run loads (its
  `Disclosure`) is never shared.
- The judgement ring is assembled here, once per rebuild: host stages first (hooks, audit gate…),
  then the grant ring (a built-in tool this profile does not grant is refused naming that and
  the agents that have it), the tooldisclose gate, the guard ring (`tools.guardring`: the next
  rings judged together, so several refusals reach the model as one result naming each), the
  worktree ring (when `options.confine` holds a declaration: a confined worker's calls stay in
  its areas, `tools.areastage`), the audit gate, the command policy (when `options.commands` is
  set: cmdpolicy × gatecheck for specs with a `command_arg`), the workspace boundary and the
  authorization stage.
- `tool_defs()` is name-sorted and `tool_defs_hash()` hashes exactly that list.
- `is_parallelizable(name)` is the one parallel-admission predicate: (read-only or declared
  `concurrent`, like a delegation) and not serial; `bounds_itself(name)` says which of those
  bring their own bound (`concurrent` ones: a delegation's pool), so the step's tool limit does
  not hold them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yagent.kernel.judge import areas, auditgate, tooldisclose
from yagent.kernel.judge.invoke import Chain, Stage
from yagent.tools.areastage import WorktreeStage
from yagent.tools.audit import AuditStage
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.guardring import DenialRing
from yagent.tools.localask import LocalOpeningStage, Openings
from yagent.tools.stages import (
    AuthorizationStage,
    BoundaryStage,
    CommandPolicyStage,
    GrantStage,
)
from yagent.tools.yolo import Yolo
from yagent.toolspec import Spec, Tier, first_sentence, sort_tool_defs, tool_defs_hash
from yagent.toolspec.builtin import ASKS_USER, LOADS_TOOLS
from yagent.toolspec.profiles import Profile


@dataclass(frozen=True, slots=True)
class SurfaceOptions:
    deferred: bool = True
    schema_budget: int | None = None  # estimated tokens for the visible schemas
    yolo: Yolo = Yolo.OFF
    host_stages: tuple[Stage, ...] = ()
    audit: auditgate.AuditGate | None = None  # the audit gate, judged right after disclosure
    commands: CommandGate | None = None  # command lines judged by cmdpolicy × gatecheck
    briefs: Mapping[str, str] = field(default_factory=dict)  # adapter-provided briefs
    confine: areas.Declaration | None = None  # a confined worker: its declared areas only
    openings: Openings | None = None  # local services: asked once before they open (localask)


def schema_tokens(spec: Spec) -> int:
    """A deterministic token estimate of one tool definition (about 4 characters a token)."""
    return max(1, len(json.dumps(spec.tool_def(), sort_keys=True)) // 4)


@functools.lru_cache(maxsize=16)
def _catalog(entries: tuple[tooldisclose.ToolEntry, ...]) -> tooldisclose.Catalog:
    """The catalog of `entries`, built once per distinct entries (module contract): the same
    tools in every run would otherwise rebuild it, and its index (BM25 and vocabulary,
    milliseconds) at their first search."""
    return tooldisclose.Catalog(entries)


class Surface:
    def __init__(
        self,
        registry: Sequence[Spec],
        profile: Profile,
        guard: WorkspaceGuard,
        *,
        external: Sequence[Spec] = (),
        options: SurfaceOptions | None = None,
    ) -> None:
        self._registry = tuple(registry)
        self._external = tuple(external)
        self.profile = profile
        self.guard = guard
        self.options = options or SurfaceOptions()
        self._specs: dict[str, Spec] = {}
        self._skipped: list[tuple[str, str]] = []
        self._demoted: tuple[str, ...] = ()
        self._defs_cache: tuple[object, tuple[tuple[dict[str, Any], ...], str]] | None = None
        self.disclosure = tooldisclose.Disclosure(_catalog(()))
        self.chain = Chain([])
        self.rebuild()

    # -- assembly -------------------------------------------------------------------------
    def rebuild(self, *, external: Sequence[Spec] | None = None) -> None:
        if external is not None:
            self._external = tuple(external)
        loaded = self.disclosure.snapshot() if self._specs else None
        specs: dict[str, Spec] = {}
        skipped: list[tuple[str, str]] = []
        for spec in self._registry:
            if self.profile.grants(spec) and self._admitted(spec):
                specs[spec.name] = spec
        static_names = {spec.name for spec in self._registry}
        for spec in self._external:
            if spec.name in static_names:
                skipped.append((spec.name, "a built-in tool has this name"))
                continue
            if spec.name in specs:
                skipped.append((spec.name, "duplicate external tool"))
                continue
            cold = dataclasses.replace(spec, tier=Tier.COLD, external=True)
            if self.profile.grants(cold):
                specs[cold.name] = cold
            else:
                skipped.append((spec.name, f"not granted to profile {self.profile.name}"))
        if not self.options.deferred:
            specs = {n: s for n, s in specs.items() if LOADS_TOOLS not in s.tags}
        self._specs = specs
        self._skipped = skipped
        always = self._always_visible(specs)
        entries = tuple(self._entry(spec) for spec in specs.values())
        self.disclosure = tooldisclose.Disclosure(_catalog(entries), always=always)
        if loaded is not None:
            self.disclosure.restore(loaded)
        independent: list[Stage] = [
            *(
                [WorktreeStage(self, self.options.confine, self.options.commands)]
                if self.options.confine
                else []
            ),
            *([AuditStage(self, self.options.audit)] if self.options.audit else []),
            *([CommandPolicyStage(self, self.options.commands)] if self.options.commands else []),
            BoundaryStage(self),
        ]
        self.chain = Chain(
            [
                *self.options.host_stages,
                GrantStage(self),
                tooldisclose.Stage(tooldisclose.Gate(self.disclosure)),
                *(_ringed(independent) if len(independent) > 1 else independent),
                *(
                    [LocalOpeningStage(self, self.options.openings)]
                    if self.options.openings
                    else []
                ),
                AuthorizationStage(self),
            ]
        )

    def _admitted(self, spec: Spec) -> bool:
        return not (ASKS_USER in spec.tags and self.options.yolo >= Yolo.FULL)

    def _always_visible(self, specs: Mapping[str, Spec]) -> list[str]:
        if not self.options.deferred:
            self._demoted = ()
            return list(specs)
        visible = {n: s for n, s in specs.items() if s.tier in (Tier.HOT, Tier.WARM)}
        demoted: list[str] = []
        budget = self.options.schema_budget
        if budget is not None:
            total = sum(schema_tokens(s) for s in visible.values())
            warm = sorted(
                (s for s in visible.values() if s.tier is Tier.WARM),
                key=lambda s: (-schema_tokens(s), s.name),
            )
            for spec in warm:
                if total <= budget:
                    break
                total -= schema_tokens(spec)
                demoted.append(spec.name)
                del visible[spec.name]
        self._demoted = tuple(sorted(demoted))
        return list(visible)

    def _entry(self, spec: Spec) -> tooldisclose.ToolEntry:
        props = spec.parameters.get("properties", {})
        required = set(spec.parameters.get("required", ()))
        params = tuple(
            tooldisclose.Param(
                name, name in required, str(dict(props[name]).get("description", ""))
            )
            for name in props
            if isinstance(props.get(name), Mapping)
        )
        return tooldisclose.ToolEntry(
            spec.name, self.catalog_brief(spec), spec.description, params, tuple(sorted(spec.tags))
        )

    # -- questions the loop asks ----------------------------------------------------------
    def catalog_brief(self, spec: Spec) -> str:
        return self.options.briefs.get(spec.name) or spec.brief or first_sentence(spec.description)

    def known(self, name: str) -> Spec | None:
        """A built-in tool of that name, granted to this run or not."""
        return next((s for s in self._registry if s.name == name), None)

    def spec(self, name: str) -> Spec | None:
        return self._specs.get(name)

    def specs(self) -> tuple[Spec, ...]:
        return tuple(self._specs[n] for n in sorted(self._specs))

    def skipped(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._skipped)

    def demoted(self) -> tuple[str, ...]:
        return self._demoted

    def deferred_names(self) -> tuple[str, ...]:
        visible = set(self.disclosure.visible())
        return tuple(n for n in sorted(self._specs) if n not in visible)

    def visible_specs(self) -> tuple[Spec, ...]:
        return tuple(self._specs[n] for n in self.disclosure.visible() if n in self._specs)

    def tool_defs(self) -> list[dict[str, Any]]:
        """Name-sorted definitions of the visible tools (cached until the visible set changes)."""
        return list(self._defs()[0])

    def tool_defs_hash(self) -> str:
        return self._defs()[1]

    def _defs(self) -> tuple[tuple[dict[str, Any], ...], str]:
        key = (id(self.disclosure), self.disclosure.visible())
        if self._defs_cache is None or self._defs_cache[0] != key:
            defs = sort_tool_defs(spec.tool_def() for spec in self.visible_specs())
            self._defs_cache = (key, (tuple(defs), tool_defs_hash(defs)))
        return self._defs_cache[1]

    def catalog_text(self) -> str:
        """The deferred catalog for the system prompt ("name — brief" lines), or ""."""
        names = self.deferred_names()
        entries = [e for n in names if (e := self.disclosure.catalog.get(n)) is not None]
        return tooldisclose.render_catalog(entries) if entries else ""

    def judges_commands(self, spec: Spec) -> bool:
        """Whether the command-policy ring (not the authorization ring) judges `spec`."""
        return self.options.commands is not None and bool(spec.command_arg)

    def is_parallelizable(self, name: str) -> bool:
        spec = self._specs.get(name)
        return spec is not None and (spec.read_only or spec.concurrent) and not spec.serial

    def bounds_itself(self, name: str) -> bool:
        """Whether the tool's parallel calls bring their own bound (a `concurrent` tool: the
        delegations' pool), so the step's tool limit does not hold them."""
        spec = self._specs.get(name)
        return spec is not None and spec.concurrent and not spec.serial

    def materialized(self) -> dict[str, Any]:
        return self.disclosure.snapshot().to_dict()

    def restore_materialized(self, data: Mapping[str, Any]) -> tooldisclose.LoadResult:
        return self.disclosure.restore(tooldisclose.LoadedSet.from_dict(data))


def _ringed(stages: list[Stage]) -> list[Stage]:
    """The guard ring, then its stages in their own places, each judging a call once."""
    ring = DenialRing(stages)
    return [ring, *ring.recalled()]
