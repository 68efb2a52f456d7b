"""trajectory: the event stream projected onto the rows of each turn, and its OTel contract.

Guarantees:
- Incremental: feed events one at a time, in any order; existing rows update in place. Each row
  has a kind (step / call / span), start and end times and a duration *derived* from them — there
  is no duration field, and no measurement means no number (open rows, starts backfilled from a
  result that came first, inverted pairs and missing clocks all give `duration is None`, with
  `timing` saying why).
- Pairing of calls: `paired`, `missing_result`, `unpaired_result` are the current state and clear
  when the other half arrives; `duplicate_result`, `duplicate_call` are history and stay. States
  depend only on what was seen, not on the order it was seen in.
- A summary per turn; events the vocabulary does not recognise and signals naming no row are
  counted, never dropped in silence.
- `otelmap`: every span attribute declared (source, value domain with Python type, cardinality
  bound, may-be-a-label), only bounded enumerations as metric labels, a forbidden-labels list,
  the turn as trace boundary; `spans.plan_turn` applies it, with `parent_id` for parent/child.
Refuses: vocabulary rules that cannot name their row; label declarations the policy forbids.
Importing the package loads none of its modules: each name is imported from its module when it
is first read (`__getattr__`), so a host that reads only the vocabulary (the watchdog's signals)
does not pay for the projector, the rows, the spans or the OTel map.
Leaves to the host: its event names (the vocabulary is injected), rendering, watchdog actions,
and exporting span plans through an OpenTelemetry SDK.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yagent.kernel.trace.trajectory.errors import (
        LabelPolicyError,
        OtelMapError,
        TrajectoryError,
        UnknownAttributeError,
        VocabularyError,
    )
    from yagent.kernel.trace.trajectory.otelmap import (
        ATTR_SPECS,
        FORBIDDEN_LABELS,
        TRACE_GRANULARITY,
        AttrSpec,
        AttrValue,
        Cardinality,
        Domain,
        DomainKind,
        TraceGranularity,
        attr_spec_of,
        label_violations,
        metric_labels,
    )
    from yagent.kernel.trace.trajectory.projector import Trajectory, TurnProjector, Update
    from yagent.kernel.trace.trajectory.rows import Pairing, Row, Summary, Timing, Turn
    from yagent.kernel.trace.trajectory.spans import ROOT_ID, SpanEvent, SpanPlan, plan_turn
    from yagent.kernel.trace.trajectory.vocabulary import (
        Declares,
        Kind,
        PairingSignal,
        Ref,
        RowKind,
        RuleBook,
        Signal,
        SignalRule,
        Vocabulary,
    )

_MODULES = {
    "LabelPolicyError": "errors",
    "OtelMapError": "errors",
    "TrajectoryError": "errors",
    "UnknownAttributeError": "errors",
    "VocabularyError": "errors",
    "ATTR_SPECS": "otelmap",
    "FORBIDDEN_LABELS": "otelmap",
    "TRACE_GRANULARITY": "otelmap",
    "AttrSpec": "otelmap",
    "AttrValue": "otelmap",
    "Cardinality": "otelmap",
    "Domain": "otelmap",
    "DomainKind": "otelmap",
    "TraceGranularity": "otelmap",
    "attr_spec_of": "otelmap",
    "label_violations": "otelmap",
    "metric_labels": "otelmap",
    "Trajectory": "projector",
    "TurnProjector": "projector",
    "Update": "projector",
    "Pairing": "rows",
    "Row": "rows",
    "Summary": "rows",
    "Timing": "rows",
    "Turn": "rows",
    "ROOT_ID": "spans",
    "SpanEvent": "spans",
    "SpanPlan": "spans",
    "plan_turn": "spans",
    "Declares": "vocabulary",
    "Kind": "vocabulary",
    "PairingSignal": "vocabulary",
    "Ref": "vocabulary",
    "RowKind": "vocabulary",
    "RuleBook": "vocabulary",
    "Signal": "vocabulary",
    "SignalRule": "vocabulary",
    "Vocabulary": "vocabulary",
}


def __getattr__(name: str) -> object:
    """`name` from its module, imported now (package contract); cached in the package."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ATTR_SPECS",
    "FORBIDDEN_LABELS",
    "ROOT_ID",
    "TRACE_GRANULARITY",
    "AttrSpec",
    "AttrValue",
    "Cardinality",
    "Declares",
    "Domain",
    "DomainKind",
    "Kind",
    "LabelPolicyError",
    "OtelMapError",
    "Pairing",
    "PairingSignal",
    "Ref",
    "Row",
    "RowKind",
    "RuleBook",
    "Signal",
    "SignalRule",
    "SpanEvent",
    "SpanPlan",
    "Summary",
    "Timing",
    "TraceGranularity",
    "Trajectory",
    "TrajectoryError",
    "Turn",
    "TurnProjector",
    "UnknownAttributeError",
    "Update",
    "Vocabulary",
    "VocabularyError",
    "attr_spec_of",
    "label_violations",
    "metric_labels",
    "plan_turn",
]
