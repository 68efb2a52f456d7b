"""protocol.report: the report contract — fields and values on a whitelist.

A report is what an agent hands back when its work is done:

- `agent` (required): 1-64 characters — letters, digits and `_ . : -`, starting with a letter or
  a digit.
- `status` (required): `done`, `partial`, `blocked` or `failed`.
- `summary` (required): 1-8000 characters, the conclusion, readable on its own.
- `findings` (≤ 100): each `{title (1-300), detail (≤ 8000, default ""), severity (info, low,
  medium, high, critical; default info)}`.
- `evidence` (≤ 200): each `{kind (file, command, url, log, quote, other), ref (1-1000),
  excerpt (≤ 4000, default "")}`.
- `confidence`: `high`, `medium` or `low`; missing or null ⇒ `low` (unknown confidence is low).
- `next_steps` (≤ 50): strings of 1-1000 characters.

Guarantees: any other field, any other value, any wrong type is a `SchemaError` listing every
violation (a whitelist, not a blacklist). Enumerated values are read case- and
space-insensitively ("High " is `high`), never guessed. `null` for an optional field means
absent. A host may narrow the whitelist further (`Whitelist`: which agents, statuses, evidence
kinds it accepts). `report_schema()` is the JSON Schema of the contract, for prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from yagent.kernel.context.protocol.errors import SchemaError

Status = Literal["done", "partial", "blocked", "failed"]
Confidence = Literal["high", "medium", "low"]
Severity = Literal["info", "low", "medium", "high", "critical"]
EvidenceKind = Literal["file", "command", "url", "log", "quote", "other"]
Step = Annotated[str, StringConstraints(min_length=1, max_length=1000)]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Finding(BaseModel):
    model_config = _STRICT

    title: str = Field(min_length=1, max_length=300)
    detail: str = Field(default="", max_length=8000)
    severity: Severity = "info"


class Evidence(BaseModel):
    model_config = _STRICT

    kind: EvidenceKind
    ref: str = Field(min_length=1, max_length=1000)
    excerpt: str = Field(default="", max_length=4000)


class Report(BaseModel):
    model_config = _STRICT

    agent: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
    status: Status
    summary: str = Field(min_length=1, max_length=8000)
    findings: tuple[Finding, ...] = Field(default=(), max_length=100)
    evidence: tuple[Evidence, ...] = Field(default=(), max_length=200)
    confidence: Confidence = "low"
    next_steps: tuple[Step, ...] = Field(default=(), max_length=50)


_ENUMS: dict[type[BaseModel], tuple[str, ...]] = {
    Report: ("status", "confidence"),
    Finding: ("severity",),
    Evidence: ("kind",),
}
_NESTED: dict[str, type[BaseModel]] = {"findings": Finding, "evidence": Evidence}


@dataclass(frozen=True, slots=True)
class Whitelist:
    """A host's narrowing of the contract (None: everything the contract allows)."""

    agents: frozenset[str] | None = None
    statuses: frozenset[str] | None = None
    evidence_kinds: frozenset[str] | None = None


def report_schema() -> dict[str, Any]:
    """The JSON Schema of a report (what to show a model so it can write one)."""
    return Report.model_json_schema()


def _normalise(obj: Mapping[str, Any], model: type[BaseModel], drop_empty: bool) -> dict[str, Any]:
    """Enum values folded; null (and, for repaired input, "") optional values made absent."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        field = model.model_fields.get(key) if isinstance(key, str) else None
        optional = field is not None and not field.is_required()
        if optional and (value is None or (drop_empty and value == "")):
            continue
        if key in _ENUMS[model] and isinstance(value, str):
            value = value.strip().lower()
        elif model is Report and key in _NESTED and isinstance(value, list):
            value = [
                _normalise(item, _NESTED[key], drop_empty) if isinstance(item, dict) else item
                for item in value
            ]
        out[key] = value
    return out


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(report)"


def validate_report(
    obj: Mapping[str, Any], whitelist: Whitelist | None = None, *, repaired: bool = False
) -> Report:
    """A `Report` from a decoded JSON object, or `SchemaError` with every violation."""
    try:
        report = Report.model_validate(_normalise(obj, Report, repaired))
    except ValidationError as exc:
        violations = tuple(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise SchemaError("protocol: not a valid report", violations) from None
    if whitelist is not None:
        violations = _narrowed(report, whitelist)
        if violations:
            raise SchemaError("protocol: the report is outside the host's whitelist", violations)
    return report


def _narrowed(report: Report, whitelist: Whitelist) -> tuple[str, ...]:
    found: list[str] = []
    if whitelist.agents is not None and report.agent not in whitelist.agents:
        found.append(f"agent: {report.agent!r} is not an accepted agent")
    if whitelist.statuses is not None and report.status not in whitelist.statuses:
        found.append(f"status: {report.status!r} is not accepted here")
    if whitelist.evidence_kinds is not None:
        found.extend(
            f"evidence.{i}.kind: {e.kind!r} is not accepted here"
            for i, e in enumerate(report.evidence)
            if e.kind not in whitelist.evidence_kinds
        )
    return tuple(found)
