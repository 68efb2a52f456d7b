"""The OpenTelemetry mapping contract: every span attribute the projection can emit, declared.

Each `AttrSpec` states the attribute's name, its source (which projection field it is read from),
its value domain (with the Python type), its cardinality bound, and whether it may be a metric
label. The rules the table is held to, checked when a spec is built and again at import:
- only bounded enumerations may be labels (closed enums, booleans, and host catalogues with a
  declared bound such as model or tool names); free text and numbers never are;
- `FORBIDDEN_LABELS` lists the unbounded fields that look like dimensions (conversation/session
  id, agent slug, call id, delegation id, row id): none of them may ever be a label;
- the trace boundary is the turn (`TRACE_GRANULARITY`): one trace per turn, whose root is the
  turn, because row ids are unique within a turn and nowhere else; `SpanPlan.parent_id` (see
  `spans`) declares every parent/child link.
Names follow the OpenTelemetry GenAI semantic conventions where one exists (`gen_ai.*`), the
general conventions for `error.type`, and `yagent.*` for what those conventions do not cover
(projection identity, pairing, timing, cost, turn facts).

Sources: `row.<field>` reads a `Row` field; `attrs.<key>` a row attribute the host vocabulary
filled (`ROW_ATTR_KEYS` are the keys this table reads; on the root span, the turn end's
attributes); `turn.<field>` a `Turn` field; `host.<key>` a value the host passes
to the planner; `plan.orphan` is computed by the planner; `metric.<key>` exists on metric points
only. Any other source is refused when the spec is built.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from yagent.kernel.trace.trajectory.errors import LabelPolicyError, UnknownAttributeError

AttrValue = str | bool | int | float | tuple[str, ...]


class TraceGranularity(enum.StrEnum):
    """Where a trace begins and ends. Only the turn is offered: row ids are unique per turn."""

    TURN = "turn"


TRACE_GRANULARITY = TraceGranularity.TURN


class DomainKind(enum.StrEnum):
    ENUM = "enum"  # closed set of strings, listed
    CATALOG = "catalog"  # open strings from a host catalogue whose size is bounded
    TEXT = "text"  # free text / identifiers
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    ENUM_LIST = "enum_list"  # a sequence of values from a closed set


@dataclass(frozen=True, slots=True)
class Domain:
    kind: DomainKind
    python_type: type
    values: frozenset[str] = frozenset()
    minimum: float | None = None

    def accepts(self, value: object) -> bool:
        if self.kind is DomainKind.BOOL:
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.kind is DomainKind.ENUM_LIST:
            return isinstance(value, tuple) and all(v in self.values for v in value)
        if self.kind in (DomainKind.INT, DomainKind.FLOAT):
            kinds = int if self.kind is DomainKind.INT else (int, float)
            return (
                isinstance(value, kinds)
                and math.isfinite(value)
                and (self.minimum is None or value >= self.minimum)
            )
        if not isinstance(value, str) or not value:
            return False
        return self.kind is not DomainKind.ENUM or value in self.values


def enum_of(*values: str) -> Domain:
    return Domain(DomainKind.ENUM, str, frozenset(values))


def list_of(*values: str) -> Domain:
    return Domain(DomainKind.ENUM_LIST, tuple, frozenset(values))


CATALOG = Domain(DomainKind.CATALOG, str)
TEXT = Domain(DomainKind.TEXT, str)
COUNT = Domain(DomainKind.INT, int, minimum=0)
USD = Domain(DomainKind.FLOAT, float, minimum=0.0)
FLAG = Domain(DomainKind.BOOL, bool)


@dataclass(frozen=True, slots=True)
class Cardinality:
    """How many distinct values the attribute can take; `bound` None means unbounded."""

    bound: int | None
    why: str

    @property
    def bounded(self) -> bool:
        return self.bound is not None


def unbounded(why: str) -> Cardinality:
    return Cardinality(None, why)


class Convention(enum.StrEnum):
    GEN_AI = "gen_ai"  # OpenTelemetry GenAI semantic conventions
    OTEL = "otel"  # general OpenTelemetry semantic conventions
    YAGENT = "yagent"  # added here: the conventions have no such attribute


ALL_SPANS = frozenset({"turn", "step", "call", "span"})

# Unbounded fields that look like dimensions. Never a metric label, whatever a spec says.
FORBIDDEN_LABELS: frozenset[str] = frozenset(
    {
        "gen_ai.conversation.id",  # the session id
        "gen_ai.agent.name",  # the agent slug: custom agents are user-defined
        "gen_ai.tool.call.id",
        "yagent.delegation.id",
        "yagent.row.id",
        "session.id",  # not emitted; listed so nobody adds it as a label
    }
)

_SOURCE_PREFIXES = ("row.", "attrs.", "turn.", "host.", "metric.")
_EXACT_SOURCES = frozenset({"row.kind|attrs.operation", "plan.orphan"})
LABEL_DOMAINS = frozenset({DomainKind.ENUM, DomainKind.CATALOG, DomainKind.BOOL})


@dataclass(frozen=True, slots=True)
class AttrSpec:
    name: str
    source: str
    domain: Domain
    cardinality: Cardinality
    label: bool
    applies: frozenset[str]
    convention: Convention
    doc: str

    def __post_init__(self) -> None:
        if not (self.source in _EXACT_SOURCES or self.source.startswith(_SOURCE_PREFIXES)):
            raise LabelPolicyError(f"{self.name}: unknown source {self.source!r}")
        if self.source.startswith("metric.") and self.applies:
            raise LabelPolicyError(f"{self.name}: a metric-only source on spans")
        prefix = {Convention.GEN_AI: "gen_ai.", Convention.YAGENT: "yagent."}.get(self.convention)
        if prefix and not self.name.startswith(prefix):
            raise LabelPolicyError(f"{self.name}: a {self.convention} attribute is {prefix}*")
        if not self.label:
            return
        if self.name in FORBIDDEN_LABELS:
            raise LabelPolicyError(f"{self.name} is on the forbidden-labels list")
        if not self.cardinality.bounded or self.domain.kind not in LABEL_DOMAINS:
            raise LabelPolicyError(f"{self.name}: only bounded enumerations may be labels")
        if self.domain.kind is DomainKind.ENUM and len(self.domain.values) > (
            self.cardinality.bound or 0
        ):
            raise LabelPolicyError(f"{self.name}: more values than its declared bound")


OPERATIONS = ("invoke_workflow", "chat", "execute_tool", "invoke_agent")
# The operation of each span kind, unless the row's `operation` attribute names another one.
DEFAULT_OPERATION: Mapping[str, str] = MappingProxyType(
    {"turn": "invoke_workflow", "step": "chat", "call": "execute_tool", "span": "invoke_agent"}
)
PAIRING_STATES = ("paired", "missing_result", "unpaired_result")
HISTORY_STATES = ("duplicate_result", "duplicate_call")
TIMINGS = ("measured", "open", "backfilled", "inverted", "untimed")

# Row attribute keys this table reads: what a host vocabulary's `SignalRule.attrs` should fill.
ROW_ATTR_KEYS = (
    "operation",
    "model",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost",
    "call_id",
    "agent",
    "step",
    "status",
)


def _spec(
    name: str,
    source: str,
    domain: Domain,
    cardinality: Cardinality,
    applies: frozenset[str] | set[str],
    doc: str,
    *,
    label: bool = False,
) -> AttrSpec:
    convention = (
        Convention.GEN_AI
        if name.startswith("gen_ai.")
        else Convention.YAGENT
        if name.startswith("yagent.")
        else Convention.OTEL
    )
    return AttrSpec(name, source, domain, cardinality, label, frozenset(applies), convention, doc)


_MODEL = Cardinality(64, "models the host has configured")
_TOKENS = unbounded("a measurement: a metric value, never a dimension")
# fmt: off
ATTR_SPECS: tuple[AttrSpec, ...] = (
    _spec("gen_ai.operation.name", "row.kind|attrs.operation", enum_of(*OPERATIONS),
          Cardinality(len(OPERATIONS), "closed enum"), ALL_SPANS, "what the span does",
          label=True),
    _spec("gen_ai.request.model", "attrs.model", CATALOG, _MODEL, {"step"},
          "model asked", label=True),
    _spec("gen_ai.response.model", "attrs.model", CATALOG, _MODEL, {"step"},
          "model that answered (as the response named it)", label=True),
    _spec("gen_ai.usage.input_tokens", "attrs.input_tokens", COUNT, _TOKENS, {"step"},
          "uncached input tokens"),
    _spec("gen_ai.usage.output_tokens", "attrs.output_tokens", COUNT, _TOKENS, {"step"},
          "output tokens"),
    _spec("gen_ai.usage.cache_read.input_tokens", "attrs.cache_read_tokens", COUNT, _TOKENS,
          {"step"}, "input tokens read from the provider's cache"),
    _spec("gen_ai.usage.cache_creation.input_tokens", "attrs.cache_write_tokens", COUNT,
          _TOKENS, {"step"}, "input tokens written to the provider's cache"),
    _spec("gen_ai.tool.name", "row.name", CATALOG, Cardinality(512, "the tool catalogue"),
          {"call"}, "tool executed", label=True),
    _spec("gen_ai.tool.call.id", "attrs.call_id", TEXT, unbounded("one per call"), {"call"},
          "the model's id of the call"),
    _spec("gen_ai.agent.name", "attrs.agent", TEXT, unbounded("agent slugs are user-defined"),
          {"turn", "span", "step"}, "agent slug"),
    _spec("gen_ai.conversation.id", "host.conversation_id", TEXT, unbounded("one per session"),
          {"turn"}, "the session id"),
    _spec("gen_ai.token.type", "metric.token_type", enum_of("input", "output"),
          Cardinality(2, "closed enum"), frozenset(), "token usage metric points only",
          label=True),
    _spec("error.type", "row.failure", CATALOG, Cardinality(32, "the host's failure kinds"),
          {"step", "call", "span"}, "failure kind of a failed row", label=True),
    _spec("yagent.row.id", "row.id", TEXT, unbounded("unique per row"),
          {"step", "call", "span"}, "projection row id (unique within the turn)"),
    _spec("yagent.delegation.id", "row.scope", TEXT, unbounded("one per delegation"),
          {"step", "call", "span"}, "lane the row ran in"),
    _spec("yagent.step", "attrs.step", COUNT, unbounded("grows with the run"),
          {"step", "call"}, "step number within its run"),
    _spec("yagent.pairing", "row.pairing", enum_of(*PAIRING_STATES),
          Cardinality(len(PAIRING_STATES), "closed enum"), {"call"},
          "current pairing state of a call", label=True),
    _spec("yagent.pairing.history", "row.history", list_of(*HISTORY_STATES),
          Cardinality(4, "subsets of two states"), {"call"}, "duplicates seen (permanent)"),
    _spec("yagent.timing", "row.timing", enum_of(*TIMINGS),
          Cardinality(len(TIMINGS), "closed enum"), {"step", "call", "span"},
          "whether the span's times are a measurement", label=True),
    _spec("yagent.declared", "row.declared", FLAG, Cardinality(2, "boolean"), {"call"},
          "a step declared this call", label=True),
    _spec("yagent.orphan", "plan.orphan", FLAG, Cardinality(2, "boolean"),
          {"step", "call", "span"}, "declared parent absent from the turn: hung on the root"),
    _spec("yagent.cost.usd", "attrs.cost", USD, unbounded("a measurement"), {"step"},
          "price of the model call in USD (absent when the model is unpriced)"),
    _spec("yagent.turn.index", "turn.index", COUNT, unbounded("grows with the session"),
          {"turn"}, "position of the turn in its session"),
    _spec("yagent.turn.closed", "turn.closed", FLAG, Cardinality(2, "boolean"), {"turn"},
          "the turn end was seen", label=True),
    _spec("yagent.run.status", "attrs.status", CATALOG,
          Cardinality(16, "the host's run statuses"), {"turn", "span"},
          "how the run ended (the turn's, or a delegation's)", label=True),
)
# fmt: on

_BY_NAME: Mapping[str, AttrSpec] = MappingProxyType({s.name: s for s in ATTR_SPECS})


def attr_spec_of(name: str) -> AttrSpec:
    """The declared spec of an attribute; an undeclared name is refused."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownAttributeError(name) from None


def label_violations(attributes: Mapping[str, object]) -> tuple[str, ...]:
    """Names in `attributes` that may not be metric labels (forbidden, undeclared, not a label,
    or a value outside the declared domain), sorted."""
    return tuple(sorted(n for n, v in attributes.items() if not _may_label(n, v)))


def _may_label(name: str, value: object) -> bool:
    spec = _BY_NAME.get(name)
    if spec is None or not spec.label or name in FORBIDDEN_LABELS:
        return False
    return spec.domain.accepts(value)


def metric_labels(attributes: Mapping[str, AttrValue]) -> dict[str, AttrValue]:
    """The subset of span attributes that may be metric labels."""
    bad = set(label_violations(attributes))
    return {name: value for name, value in attributes.items() if name not in bad}


def _self_check() -> None:
    if len(_BY_NAME) != len(ATTR_SPECS):
        raise LabelPolicyError("an attribute is declared twice")
    for name in FORBIDDEN_LABELS & _BY_NAME.keys():
        if _BY_NAME[name].label or _BY_NAME[name].cardinality.bounded:
            raise LabelPolicyError(f"{name} is forbidden as a label yet declared bounded")


_self_check()
