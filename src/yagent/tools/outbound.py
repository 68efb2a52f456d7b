"""What leaves yagent passes `pii`: tool results for the model, event payloads for logs and display.

Guarantees:
- `for_model(result, store)` judges a tool result's content on the MODEL surface before it joins
  the history: masked in place (`mask`), unchanged (`off`), or — when the policy is `block` and
  something was found — replaced by a failed result that says it was withheld, why and which
  kinds were found (never a silent mask, never the text itself).
- `for_surface(payload, surface, store)` judges an event payload field by field (LOG before the
  rollout and the session store, DISPLAY before the terminal): a blocked field is replaced by a
  visible `[withheld: …]` notice, the rest of the payload keeps its shape (call ids, names and
  flags are what the store indexes). A field pii cannot walk (too deep, masking merges two keys)
  is withheld too: fail closed. A payload is first judged whole, once: when that finds nothing
  (the common case) it passes as it is, and only a payload with findings is judged field by field.
Leaves to the host: the policy values (config `[pii]`) and which surface a text leaves through.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from yagent.kernel.confine import pii
from yagent.kernel.judge import toolfail
from yagent.tools.toolresult import ToolResult, failure_content


def _kinds(findings: tuple[pii.Finding, ...]) -> list[str]:
    return sorted({f.kind.value for f in findings})


def for_model(result: ToolResult, store: pii.PolicyStore) -> ToolResult:
    """`result` as the model may see it (see the module contract)."""
    judged = pii.apply(result.content, pii.Surface.MODEL, store=store)
    if judged.blocked:
        kinds = _kinds(judged.findings)
        kind = toolfail.Kind.PERMISSION
        message = (
            f"the {result.name} result was withheld: it contains personal data "
            f"({', '.join(kinds)}) and the PII policy for the model is 'block'"
        )
        content = failure_content(kind, message, pii_blocked=kinds)
        return dataclasses.replace(result, ok=False, content=content, kind=kind, images=())
    if judged.value is None or judged.value is result.content:
        return result
    return dataclasses.replace(result, content=judged.value)


def for_surface(
    payload: Mapping[str, Any], surface: pii.Surface, store: pii.PolicyStore
) -> dict[str, Any]:
    """`payload` as it may leave through `surface` (see the module contract)."""
    try:
        whole = pii.apply_value(payload, surface, store=store)
    except pii.PiiError:
        whole = None  # judged field by field below, where a failing field is withheld alone
    if whole is not None and not whole.findings and not whole.unscanned:
        return dict(payload)
    out: dict[str, Any] = {}
    for key, value in payload.items():
        try:
            judged = pii.apply_value(value, surface, store=store)
        except pii.PiiError as exc:
            out[key] = f"[withheld: personal-data screening failed ({exc})]"
            continue
        if judged.blocked:
            kinds = ", ".join(_kinds(judged.findings))
            out[key] = f"[withheld: contains personal data ({kinds}); {surface} policy is block]"
        else:
            out[key] = judged.value
    return out


def policy_of(model: str, log: str, display: str) -> pii.Policy:
    """A pii policy from the three configured actions (validated by `pii.Policy`)."""
    return pii.Policy(model=pii.Action(model), log=pii.Action(log), display=pii.Action(display))
