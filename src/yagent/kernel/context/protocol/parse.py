"""protocol.parse: tolerant report parsing in five levels, and nothing but `NotReportError` out.

Levels, tried in order; the first JSON object that validates as a report wins:
1. STRICT — the whole text (trimmed) is one JSON object.
2. FENCED — the body of a closed Markdown code fence is one JSON object.
3. EXTRACTED — a balanced `{...}` span found in the prose is one JSON object.
4. REPAIRED — `json_repair` rebuilds an object from a fence body, a balanced span or the text
   from its first `{` (truncated output); only candidates that pass the structure gate are tried
   (`scan.structure_problem`): text with no object, or a key without a colon, is never
   "repaired" into a report. Single-quoted strings are read the way the gate reads them
   (`scan.requote`: an apostrophe inside a value does not end it) before repair. The repaired
   values are validated as written (an empty value repair had to invent for an optional field
   counts as absent); then the report's confidence is set to "low", whatever the model claimed
   (the note says what it claimed).
5. `NotReportError` — with the reason of every try; `SchemaError` (a subclass) when an object was
   found but broke the whitelist, listing the violations of the first such object.
Guarantees: `parse_report` raises nothing but `NotReportError` (and its subclass), whatever the
input: non-text, oversize (`MAX_CHARS`), deep nesting and repair failures included.
`json_repair` loads with the first candidate that needs repair (level 4), not with the module: a
process that only reads well-formed reports, or none yet, never loads it.
"""

from __future__ import annotations

import enum
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from yagent.kernel.context.protocol import scan
from yagent.kernel.context.protocol.errors import NotReportError, SchemaError
from yagent.kernel.context.protocol.report import Report, Whitelist, validate_report

MAX_CHARS = 200_000
MAX_REPAIRS = 4
MAX_SPANS = 64  # balanced objects tried per text: a report is not the 65th object


class Level(enum.IntEnum):
    STRICT = 1
    FENCED = 2
    EXTRACTED = 3
    REPAIRED = 4


@dataclass(frozen=True, slots=True)
class Parsed:
    """A report, the level that found it, and what the parser had to do to it."""

    report: Report
    level: Level
    notes: tuple[str, ...] = ()

    @property
    def repaired(self) -> bool:
        return self.level is Level.REPAIRED


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        return None


def _repair(candidate: str) -> Any:
    import json_repair  # loads with the first repair (module docstring)

    try:
        return json_repair.repair_json(candidate, return_objects=True, skip_json_loads=True)
    except Exception:  # a third-party parser on arbitrary text: any failure is "not repaired"
        return None


def _candidates(text: str) -> Iterator[tuple[Level, str]]:
    stripped = text.strip()
    if stripped.startswith("{"):
        yield Level.STRICT, stripped
    bodies = [body.strip() for body in scan.fences(text)]
    for body in bodies:
        yield Level.FENCED, body
    spans = list(itertools.islice(scan.balanced(text), MAX_SPANS))
    for span in spans:
        yield Level.EXTRACTED, span
    tail = text[text.find("{") :]
    repairs = [body[body.find("{") :] for body in bodies if "{" in body] + spans + [tail]
    for candidate in list(dict.fromkeys(repairs))[:MAX_REPAIRS]:
        yield Level.REPAIRED, candidate


def _accept(obj: dict[str, Any], level: Level, whitelist: Whitelist | None) -> Parsed:
    repaired = level is Level.REPAIRED
    report = validate_report(obj, whitelist, repaired=repaired)
    claimed = obj.get("confidence")
    if repaired:
        # the values were judged as written; only the trust in them is lowered
        report = report.model_copy(update={"confidence": "low"})
        return Parsed(
            report, level, (f"passed through repair: confidence low (claimed {claimed!r})",)
        )
    if claimed is None:
        return Parsed(report, level, ("no confidence given: low",))
    return Parsed(report, level)


def parse_report(text: str, *, whitelist: Whitelist | None = None) -> Parsed:
    """The report in a model's text, by the first level that finds one; else `NotReportError`."""
    if not isinstance(text, str):
        raise NotReportError(f"protocol: a report is text, not {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise NotReportError(f"protocol: {len(text)} characters is above the {MAX_CHARS} limit")
    if "{" not in text or ":" not in text:
        raise NotReportError("protocol: no JSON object structure in the text", ("no '{' or ':'",))
    reasons: list[str] = []
    schema_failure: SchemaError | None = None
    decoded: set[str] = set()
    for level, candidate in _candidates(text):
        if level is Level.REPAIRED:
            if candidate.strip() in decoded:
                continue  # valid JSON already judged: repair cannot change the verdict
            problem = scan.structure_problem(candidate)
            if problem is not None:
                reasons.append(f"{level.name.lower()}: {problem}")
                continue
            obj = _repair(scan.requote(candidate))
        else:
            obj = _loads(candidate)
        if not isinstance(obj, dict):
            reasons.append(f"{level.name.lower()}: not a JSON object")
            continue
        if level is not Level.REPAIRED:
            decoded.add(candidate.strip())
        try:
            return _accept(obj, level, whitelist)
        except SchemaError as exc:
            reasons.append(f"{level.name.lower()}: {exc} ({'; '.join(exc.reasons)})")
            schema_failure = schema_failure or exc
    if schema_failure is not None:
        raise schema_failure
    raise NotReportError("protocol: the text holds no report", tuple(reasons))
