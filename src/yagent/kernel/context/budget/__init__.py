"""budget: the input-side context budget — segment metering, the clamped window, compaction plans.

Contract (details in each module's docstring):
- `meter`: the window is clamped to the model's real limit and says so; usage is counted per named
  segment with a pluggable counter (default: about 4 characters per token), so the host can tell
  "the tool surface grew" from "the history grew".
- `plan`: a pure compaction plan (summarise / keep verbatim / archive) with three guards against
  idle spinning — nothing to compact, not enough freed, the same plan as last time.
- `apply`: carries a plan out through the host's `Summarizer` and `Archiver` (archive first,
  fail-soft: a failed step keeps the original messages and says which step failed).
Leaves to the host: segment assignment, when to compact, the summarising model call, the archive.
"""

from yagent.kernel.context.budget.apply import Applied, Archiver, Summarizer, apply_plan
from yagent.kernel.context.budget.errors import BudgetError, StalePlanError
from yagent.kernel.context.budget.meter import (
    ATTACHMENTS,
    CHARS_PER_TOKEN,
    HISTORY,
    SYSTEM,
    TOOL_DEFINITIONS,
    TOOL_RESULTS,
    Growth,
    Meter,
    TokenCounter,
    Usage,
    Window,
    approx_tokens,
    clamp_window,
)
from yagent.kernel.context.budget.plan import (
    DEFAULT_SUMMARY_TOKENS,
    Item,
    NoPlan,
    Plan,
    Reason,
    fingerprint,
    plan_compaction,
)

__all__ = [
    "ATTACHMENTS",
    "CHARS_PER_TOKEN",
    "DEFAULT_SUMMARY_TOKENS",
    "HISTORY",
    "SYSTEM",
    "TOOL_DEFINITIONS",
    "TOOL_RESULTS",
    "Applied",
    "Archiver",
    "BudgetError",
    "Growth",
    "Item",
    "Meter",
    "NoPlan",
    "Plan",
    "Reason",
    "StalePlanError",
    "Summarizer",
    "TokenCounter",
    "Usage",
    "Window",
    "apply_plan",
    "approx_tokens",
    "clamp_window",
    "fingerprint",
    "plan_compaction",
]
