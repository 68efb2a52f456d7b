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
Leaves to the host: its event names (the vocabulary is injected), rendering, watchdog actions,
and exporting span plans through an OpenTelemetry SDK.
"""

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
