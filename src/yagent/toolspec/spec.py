"""toolspec.spec: what a tool is, declaratively — name, schema, effect, tier, paths.

Contract:
- A `Spec` never executes anything; it says what a tool takes (a JSON Schema, from a pydantic model
  for built-in tools or given verbatim for external ones), what kind of effect it has (`Effect`),
  how eagerly its schema is shown (`Tier`), whether it must run alone (`serial`), and how to read
  file paths from its arguments and its results.
- `read_only` is derived from the effect; the parallel-admission predicate is (read-only or
  `concurrent`) and not serial, asked through the Surface (one truth). `concurrent` is for a tool
  that is not read-only but brings its own isolation and its own bound (a delegation: its
  worktree claim, its pool — the step's tool limit does not hold it).
- A tool with its own bounded wait (a command's timeout, a program's wall budget, a browser wait)
  declares it with `own_timeout(args)`; `execution_limit` puts the host's per-call backstop
  above that bound (`BACKSTOP_GRACE` seconds above it, never below the host's own limit), so the
  tool's own timeout — with its partial output and its advice — always fires first.
- A built-in tool's schema and argument model are built when first read, not when its spec is
  made (`make_spec`, `ModelSchema`; the models are declared with pydantic's `defer_build`): the
  registry holds every tool, a run offers some, and building all of them was ≈ 20 ms of every
  run's start (docs/performance.md, "Seventh pass"). The schema read is the same mapping
  whenever it is read; the model validates as it always did, built at its first validation.
- `tool_defs()` are always sorted by name, and `tool_defs_hash()` is the first 8 bytes of the sha256
  of that sorted list: one function for every consumer, so a provider's prefix cache never breaks
  because two places ordered tools differently.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


class Effect(enum.StrEnum):
    READ = "read"
    COGNITIVE = "cognitive"
    WRITE = "write"
    EXEC = "exec"
    NETWORK = "network"
    BROWSER = "browser"
    FLOW = "flow"
    META = "meta"
    DELEGATE = "delegate"  # hands work to another agent, whose own calls are judged one by one


READ_ONLY_EFFECTS: frozenset[Effect] = frozenset({Effect.READ, Effect.COGNITIVE})


class Tier(enum.IntEnum):
    """How eagerly a tool's schema is shown. Hot is never deferred or demoted."""

    HOT = 0
    WARM = 1
    COLD = 2


ResultPaths = Callable[[Any], Sequence[str]]
OwnTimeout = Callable[[Mapping[str, Any]], float | None]

BACKSTOP_GRACE = 30.0  # seconds between a tool's own bound and the host's backstop (a seam)


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    description: str
    parameters: Mapping[str, Any]
    effect: Effect
    tier: Tier
    brief: str = ""
    serial: bool = False
    tags: frozenset[str] = frozenset()
    path_args: tuple[str, ...] = ()
    command_arg: str = ""  # the argument holding a shell command line, judged token by token
    danger_flag: str = ""  # the boolean argument the model sets when it judges the call dangerous
    url_arg: str = ""  # the argument holding a URL the tool reaches (local openings are asked)
    result_paths: ResultPaths | None = field(default=None, compare=False)
    model: type[BaseModel] | None = field(default=None, compare=False)
    external: bool = False
    # Non-empty: every call needs authorization, for this reason — for tools whose risk cannot be
    # judged from their arguments. Standing permissions (session, project, YOLO) still apply.
    always_authorize: str = ""
    # The bound of the tool's own wait for these (validated) arguments, in seconds; None: it has
    # none and the host's backstop is its only limit.
    own_timeout: OwnTimeout | None = field(default=None, compare=False)
    # Not read-only, yet safe beside the step's other calls: it isolates itself (see the contract).
    concurrent: bool = False

    @property
    def read_only(self) -> bool:
        return self.effect in READ_ONLY_EFFECTS

    def arg_paths_of(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        """The file paths this call's arguments name (strings only, in declared order)."""
        out: list[str] = []
        for key in self.path_args:
            value = args.get(key)
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, str))
        return tuple(out)

    def execution_limit(self, args: Mapping[str, Any], backstop: float | None) -> float | None:
        """How long the host lets one execution run: its `backstop`, raised above the tool's own
        declared bound for `args` by `BACKSTOP_GRACE`. None: no backstop."""
        if backstop is None:
            return None
        declared = self.own_timeout(args) if self.own_timeout is not None else None
        return backstop if declared is None else max(backstop, declared + BACKSTOP_GRACE)

    def result_paths_of(self, result: Any) -> tuple[str, ...]:
        """The file paths this call's result names (used for evidence sets)."""
        if self.result_paths is None:
            return ()
        return tuple(self.result_paths(result))

    def tool_def(self) -> dict[str, Any]:
        """The provider-facing definition (OpenAI function shape)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }


class ModelSchema(Mapping[str, Any]):
    """The JSON Schema of a pydantic argument model (its `title` left out), generated at its first
    read — a tool the run never offers never has it generated (see the module contract)."""

    __slots__ = ("_schema", "model")

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self._schema: dict[str, Any] | None = None

    def _built(self) -> dict[str, Any]:
        if self._schema is None:
            schema = self.model.model_json_schema()
            schema.pop("title", None)
            self._schema = schema
        return self._schema

    def __getitem__(self, key: str) -> Any:
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def __repr__(self) -> str:
        return repr(self._built())


def make_spec(
    name: str,
    description: str,
    model: type[BaseModel],
    effect: Effect,
    tier: Tier,
    **extra: Any,
) -> Spec:
    """A built-in spec whose schema comes from a pydantic model (generated when first read)."""
    return Spec(name, description, ModelSchema(model), effect, tier, model=model, **extra)


_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.S)


def first_sentence(text: str, limit: int = 120) -> str:
    """The first sentence of `text` on one line, cut at `limit` characters with a visible '…'."""
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def sort_tool_defs(defs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool definitions sorted by name: the only order they are ever sent in."""
    return sorted((dict(d) for d in defs), key=lambda d: str(d.get("name", "")))


def tool_defs_hash(defs: Iterable[Mapping[str, Any]]) -> str:
    """First 8 bytes (16 hex chars) of sha256 over the name-sorted definitions."""
    payload = json.dumps(sort_tool_defs(defs), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).digest()[:8].hex()
