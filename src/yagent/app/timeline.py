"""`yagent trace`: a session's turns as a terminal table and as one self-contained HTML timeline.

Contract:
- Both renderers take a session's recorded events (`store.events(session_id)`) or a
  `telemetry.Projection`, and show every turn's rows: model calls, tool calls (parallel ones as
  overlapping bars), delegations, with their pairing state, failures, time-outs, unmeasured
  timings and watchdog warnings. A call a step declared but never executed appears as its own row.
- The HTML file is self-contained (inline CSS and JS, data as inert JSON) and needs no network;
  its Content-Security-Policy forbids every fetch and runs only its own script (by hash).
  Everything from the session — titles, names, arguments, results — is untrusted: the server side
  escapes it, the page's script only ever assigns it as text. Long arguments and results are
  clipped to `CLIP` characters and the cut is said in the text.
- The terminal table escapes control characters, so a tool result cannot drive the terminal.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from yagent.app.telemetry import Projection, Recorded, project
from yagent.kernel.trace.trajectory import Pairing, Row, RowKind, Timing, Turn
from yagent.kernel.trace.watchdog import Finding, FindingKind

CLIP = 4000  # characters of one argument / result / text shown per row (a seam for tests)


@dataclass(frozen=True, slots=True)
class Line:
    """One displayed row: a projection row, or a declared call that never executed (row None)."""

    turn: int
    depth: int
    id: str
    kind: str
    label: str
    classes: tuple[str, ...]
    state: str
    start: float | None
    end: float | None
    row: Row | None
    findings: tuple[Finding, ...]


def _short(row_id: str) -> str:
    tail = row_id.rpartition(":")[2].rpartition("/")[2]
    return tail.replace("%2F", "/").replace("%25", "%")


def _label(row: Row) -> str:
    if row.kind is RowKind.STEP:
        model = row.attrs.get("model")
        step = row.attrs.get("step", _short(row.id))
        return f"step {step} · model {model}" if model else f"step {step} · model call"
    if row.kind is RowKind.SPAN:
        return f"delegation · {row.name or _short(row.id)}"
    return row.name or _short(row.id)


def _state(row: Row, warned: bool) -> tuple[str, tuple[str, ...]]:
    words, classes = [], [f"kind-{row.kind.value}"]
    if row.pairing is not None:
        words.append(row.pairing.value)
        classes += {Pairing.MISSING_RESULT: ["missing"], Pairing.UNPAIRED_RESULT: ["unpaired"]}.get(
            row.pairing, []
        )
    if row.history:
        words += [h.value for h in row.history]
        classes.append("duplicate")
    if row.outcome == "timeout":
        words.append("timed out")
        classes.append("timeout")
    elif row.failed:
        words.append(f"failed ({row.outcome})" if row.outcome else "failed")
        classes.append("failed")
    if row.timing is not Timing.MEASURED:
        classes.append("unmeasured")
        if row.pairing is None or row.timing is not Timing.OPEN:
            words.append(f"timing {row.timing.value}")
    if warned:
        words.append("watchdog")
        classes.append("warned")
    return " · ".join(words), tuple(classes)


def _depths(rows: tuple[Row, ...]) -> list[tuple[Row, int]]:
    ids = {r.id for r in rows}
    children: dict[str | None, list[Row]] = {}
    for row in rows:
        parent = row.parent_id if row.parent_id in ids and row.parent_id != row.id else None
        children.setdefault(parent, []).append(row)
    ordered: list[tuple[Row, int]] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for row in children.get(parent, []):
            if row.id not in seen:
                seen.add(row.id)
                ordered.append((row, depth))
                walk(row.id, depth + 1)

    walk(None, 0)
    ordered += [(r, 0) for r in rows if r.id not in seen]  # parent cycles: shown flat, not lost
    return ordered


def lines_of(turn: Turn, findings: Iterable[Finding] = ()) -> list[Line]:
    """The turn's rows in display order (parents before children); a call a step declared but
    never executed is shown as its own line under that step."""
    findings = tuple(findings)
    by_row: dict[str, list[Finding]] = {}
    for f in findings:
        by_row.setdefault(f.call, []).append(f)
        if f.step:
            by_row.setdefault(f.step, []).append(f)
    out = []
    for row, depth in _depths(turn.rows):
        found = tuple(by_row.get(row.id, ()))
        state, classes = _state(row, bool(found))
        out.append(
            Line(
                turn.index,
                depth,
                row.id,
                row.kind.value,
                _label(row),
                classes,
                state,
                row.start,
                row.end,
                row,
                found,
            )
        )
    known = {r.id for r in turn.rows}
    for f in findings:
        if f.kind is not FindingKind.DECLARED_NOT_EXECUTED or f.call in known:
            continue
        known.add(f.call)
        at = next((i for i, ln in enumerate(out) if ln.id == f.step), None)
        depth = out[at].depth + 1 if at is not None else 0
        where = len(out) if at is None else at + 1
        while where < len(out) and out[where].depth >= depth > 0:
            where += 1
        step = turn.row(f.step)
        out.insert(
            where,
            Line(
                turn.index,
                depth,
                f.call,
                "call",
                f"declared call {_short(f.call)}",
                ("kind-call", "unexecuted", "warned"),
                "declared, never executed · watchdog",
                step.end if step is not None else None,
                None,
                None,
                (f,),
            ),
        )
    return out


def finding_text(finding: Finding) -> str:
    """A watchdog finding in the words of the timeline (call ids, not row ids)."""
    call = _short(finding.call)
    lane = f" of delegation {finding.scope}" if finding.scope else ""
    where = f" (step {_short(finding.step)}{lane})" if finding.step else ""
    if finding.kind is FindingKind.DECLARED_NOT_EXECUTED:
        return f"call {call} was declared{where} but never executed"
    return f"a result for call {call} arrived{where} but no step declared that call"


def _projection(source: Projection | Iterable[Recorded]) -> Projection:
    return source if isinstance(source, Projection) else project(source)


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.3f} s"


def _clean(text: str) -> str:
    """Control and other non-printing characters made visible (no escape sequence survives)."""
    return "".join(
        c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")
        for c in text
    )


def _turn_head(turn: Turn, warnings: int = 0) -> str:
    s = turn.summary
    status = turn.attrs.get("status", "closed" if turn.closed else "open (no turn end yet)")
    problems = "".join(
        f", {n} {word}"
        for n, word in (
            (s.missing_result, "missing result"),
            (s.unpaired_result, "unpaired result"),
            (s.duplicate_call, "duplicate call"),
            (s.duplicate_result, "duplicate result"),
            (s.failed, "failed"),
        )
        if n
    )
    head = (
        f"turn {turn.index + 1} · {status} · {_seconds(s.duration)} · {s.steps} model call(s) · "
        f"{s.calls} tool call(s) ({s.paired} paired{problems}) · {s.spans} delegation(s)"
    )
    return head + (f" · {warnings} watchdog warning(s)" if warnings else "")


def _unrecognised(p: Projection) -> str:
    """The count of events no row is drawn for, with their types, said as what they are."""
    types = _clean(", ".join(p.unrecognised_types))
    return (
        f"{p.unrecognised} event(s) not drawn as rows ({types}: kept in the session, "
        "not part of the timeline)"
    )


def render_text(source: Projection | Iterable[Recorded]) -> str:
    """The session's rows as a plain-text table for the terminal."""
    p = _projection(source)
    out = [
        f"{len(p.turns)} turn(s) · {p.events} events"
        + (f" · {_unrecognised(p)}" if p.unrecognised else "")
    ]
    for turn, findings in zip(p.turns, p.findings, strict=True):
        out += ["", _clean(_turn_head(turn, len(findings)))]
        out.append(f"  {'start':>10}  {'duration':>10}  {'state':<40}  row")
        t0 = turn.summary.start
        for line in lines_of(turn, findings):
            start = "—" if line.start is None or t0 is None else f"+{line.start - t0:.3f} s"
            duration = _seconds(line.row.duration) if line.row is not None else "—"
            label = "  " * line.depth + line.label
            out.append(_clean(f"  {start:>10}  {duration:>10}  {line.state:<40}  {label}"))
        out += [_clean(f"  ⚠ watchdog: {finding_text(f)}") for f in findings]
    return "\n".join(out) + "\n"


def _clip(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= CLIP:
        return text
    return f"{text[:CLIP]}… [clipped: {len(text) - CLIP} more characters]"


def _detail(line: Line, t0: float | None) -> dict[str, Any]:
    row, attrs = line.row, (line.row.attrs if line.row is not None else {})
    tokens = None
    if "input_tokens" in attrs or "output_tokens" in attrs:
        tokens = f"in {attrs.get('input_tokens', '?')} · out {attrs.get('output_tokens', '?')}"
    cost = attrs.get("cost")
    return {
        "id": line.id,
        "kind": line.kind,
        "name": line.label,
        "state": line.state or "ok",
        "start_text": None if line.start is None or t0 is None else f"+{line.start - t0:.3f} s",
        "duration_text": _seconds(row.duration) if row is not None else None,
        "timing": row.timing.value if row is not None else None,
        "outcome": row.outcome if row is not None else None,
        "model": attrs.get("model"),
        "tokens": tokens,
        "cost": f"${cost:.6f}" if isinstance(cost, int | float) else None,
        "arguments": _clip(attrs.get("arguments")),
        "result": _clip(attrs.get("result")),
        "text": _clip(attrs.get("text")),
        "findings": "\n".join(finding_text(f) for f in line.findings) or None,
    }


def _bar(start: float | None, end: float | None, t0: float, span: float) -> str:
    left = 0.0 if start is None else (start - t0) / span * 100
    right = 100.0 if end is None else (end - t0) / span * 100
    left = min(max(left, 0.0), 100.0)
    width = min(max(right - left, 0.25), 100.0 - left)
    return f"left:{left:.3f}%;width:{width:.3f}%"


def _asset(name: str) -> str:
    return resources.files("yagent.app").joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


_BAD = frozenset({"failed", "timeout", "missing", "unpaired", "unexecuted", "duplicate", "warned"})
LEGEND = (
    ("kind-step", "model call"),
    ("kind-call", "tool call"),
    ("kind-span", "delegation"),
    ("failed", "failed"),
    ("timeout", "timed out"),
    ("missing", "no result (missing_result)"),
    ("unpaired", "result without call (unpaired_result)"),
    ("unexecuted", "declared, never executed"),
    ("duplicate", "duplicate call/result"),
    ("unmeasured", "no measured duration"),
)


def _turn_html(turn: Turn, findings: tuple[Finding, ...]) -> tuple[str, list[Any]]:
    lines = lines_of(turn, findings)
    times = [t for ln in lines for t in (ln.start, ln.end) if t is not None]
    t0 = turn.summary.start if turn.summary.start is not None else min(times, default=0.0)
    t1 = turn.summary.end if turn.summary.end is not None else max(times, default=t0)
    span = max(t1 - t0, 1e-6)
    e = html.escape
    ticks = "".join(
        f'<span style="left:{i * 25}%">+{_seconds(span * i / 4)}</span>' for i in range(5)
    )
    parts = [
        f'<section class="turn" id="turn-{turn.index}">',
        f"<h2>{e(_turn_head(turn, len(findings)))}</h2>",
        f'<div class="gantt"><div class="axis"><div class="label">row</div>'
        f'<div class="ticks">{ticks}</div></div>',
        f'<div class="row kind-turn"><div class="label">turn {turn.index + 1}</div>'
        f'<div class="track"><div class="bar" style="{_bar(t0, t1, t0, span)}"></div></div></div>',
    ]
    details = []
    for index, line in enumerate(lines):
        details.append(_detail(line, t0))
        tone = "bad" if set(line.classes) & _BAD else "ok"
        badge = f'<span class="badge {tone}">{e(line.state)}</span>' if line.state else ""
        indent = f"padding-left:{8 + 16 * line.depth}px"
        parts.append(
            f'<div class="row {" ".join(line.classes)}" tabindex="0" data-t="{turn.index}" '
            f'data-r="{index}" data-row="{e(line.id)}" title="{e(line.label)}">'
            f'<div class="label" style="{indent}"><span class="name">{e(line.label)}</span>'
            f"{badge}</div>"
            f'<div class="track"><div class="bar" style="{_bar(line.start, line.end, t0, span)}">'
            "</div></div></div>"
        )
    parts.append("</div>")
    if findings:
        items = "".join(f"<li>⚠ {e(finding_text(f))}</li>" for f in findings)
        parts.append(f'<ul class="findings">{items}</ul>')
    parts.append("</section>")
    return "".join(parts), details


def _json_for_script(data: Mapping[str, Any]) -> str:
    # Inert inside <script type="application/json">: no "</script>", "<!--" or "&" can appear.
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(source: Projection | Iterable[Recorded], title: str = "yagent trace") -> str:
    """One self-contained HTML page with the session's Gantt timeline."""
    p = _projection(source)
    css, js = _asset("timeline.css"), _asset("timeline.js")
    sections, turns = [], []
    for turn, findings in zip(p.turns, p.findings, strict=True):
        body, details = _turn_html(turn, findings)
        sections.append(body)
        turns.append({"index": turn.index, "rows": details})
    e = html.escape
    csp = (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_sha256(js)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    legend = "".join(f'<span><i class="swatch {c}"></i>{e(w)}</span>' for c, w in LEGEND)
    unrecognised = f" · {html.escape(_unrecognised(p))}" if p.unrecognised else ""
    empty = "" if p.turns else "<p>This session recorded no events.</p>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{css}</style></head><body>"
        f'<header><h1>{e(title)}</h1><div class="meta">{len(p.turns)} turn(s) · '
        f"{p.events} events{unrecognised} · click a row to pin its details</div></header>"
        f'<div class="legend">{legend}</div>'
        f"<main><div>{''.join(sections)}{empty}</div>"
        '<aside id="details"><p class="meta">Hover or click a row to see its arguments and '
        "result.</p></aside></main>"
        f'<script id="trace-data" type="application/json">{_json_for_script({"turns": turns})}'
        f"</script><script>{js}</script></body></html>\n"
    )


__all__ = ["CLIP", "LEGEND", "Line", "finding_text", "lines_of", "render_html", "render_text"]
